import re
import time
from pathlib import Path

import yaml
from snakemake.utils import validate

from polyvse.config import (
    PROTOCOLS,
    check_config,
    figure_sources,
    pretrain_settings,
    needs_translations,
    human_langs,
    protocol_langs,
    report_datasets,
    report_evaluations,
    report_variants,
    speech_report_dataset,
    speech_report_variants,
    speech_variant_dataset,
    speech_variant_settings,
    variant_settings,
)
from polyvse.data.adapters import raw_files
from polyvse.train.families import variant_needs


validate(config, "../config/schema.yaml")
check_config(config, yaml.safe_load((Path(workflow.basedir) / "config" / "schema.yaml").read_text()))

R = config["results_dir"]
BACKBONE = config["image_features"]["backbone"]

_STARTED = time.time()


def names_regex(names):
    """A wildcard constraint matching exactly the configured ``names`` (nothing when there are none)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


wildcard_constraints:
    dataset="[A-Za-z0-9_-]+",
    variant="[A-Za-z0-9_-]+",
    lang="[a-z]{2}",
    report=names_regex(config["reports"]),
    protocol="|".join(PROTOCOLS),


def all_targets():
    reports = list(config["reports"]) + list(config["speech"]["reports"])
    return (expand(f"{R}/{{report}}.{{ext}}", report=reports, ext=["tsv", "md"])
            + expand(f"{R}/{{figure}}.{{ext}}", figure=list(config["figures"]), ext=["tsv", "png"])
            + [f"{R}/{name}.{ext}" for name in config["extra_reports"] for ext in EXTRA_REPORT_FILES[name]])


# extra_reports: reports with a layout of their own (rules/mlmme.smk, rules/translator.smk).
EXTRA_REPORT_FILES = {"mlmme_table1": ["tsv", "md"], "translator_curve": ["tsv", "png"]}


def variant_dataset(wildcards):
    return config["variants"][wildcards.variant]["dataset"]


def train_vocab_files(wildcards):
    v = config["variants"][wildcards.variant]
    return expand(f"{R}/{{dataset}}/vocab/{{origin}}/{{lang}}.tsv", dataset=v["dataset"],
                  origin="augmented" if v["captions"] == "augmented" else "human", lang=v["train_langs"])


def training_captions_file(wildcards):
    v = config["variants"][wildcards.variant]
    name = "captions_augmented" if v["captions"] == "augmented" else "captions"
    return f"{R}/{v['dataset']}/{name}.parquet"


def report_eval_files(wildcards):
    return [f"{R}/{config['variants'][v]['dataset']}/eval/{v}.{p}.tsv"
            for v, p in report_evaluations(config, wildcards.report)]


def figure_eval_files(wildcards):
    return [f"{R}/{config['variants'][v]['dataset']}/eval/{v}.{p}.tsv"
            for v, p in figure_sources(config, wildcards.figure)]


def figure_params_files(wildcards):
    return [f"{R}/{config['variants'][v]['dataset']}/models/{v}/params.json"
            for v, _ in figure_sources(config, wildcards.figure)]


def report_params_files(wildcards):
    return [f"{R}/{config['variants'][v]['dataset']}/models/{v}/params.json"
            for v in report_variants(config, wildcards.report)]


def _elapsed():
    return time.strftime("%H:%M:%S", time.gmtime(time.time() - _STARTED))


onsuccess:
    print(f"polyvse: workflow finished in {_elapsed()} (h:m:s); tables are in {R}/")


onerror:
    print(f"polyvse: workflow failed after {_elapsed()} (h:m:s); see the log named above and logs/")
