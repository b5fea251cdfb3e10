import time

from snakemake.utils import validate

from polyvse.config import (
    PROTOCOLS,
    check_config,
    needs_translations,
    human_langs,
    protocol_langs,
    report_datasets,
    report_evaluations,
    report_variants,
    variant_settings,
)


validate(config, "../config/schema.yaml")
check_config(config)

R = config["results_dir"]
BACKBONE = config["image_features"]["backbone"]

_STARTED = time.time()


wildcard_constraints:
    dataset="[A-Za-z0-9_-]+",
    variant="[A-Za-z0-9_-]+",
    lang="[a-z]{2}",
    report="[A-Za-z0-9_-]+",
    protocol="|".join(PROTOCOLS),


def all_targets():
    return expand(f"{R}/{{report}}.{{ext}}", report=list(config["reports"]), ext=["tsv", "md"])


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


def report_params_files(wildcards):
    return [f"{R}/{config['variants'][v]['dataset']}/models/{v}/params.json"
            for v in report_variants(config, wildcards.report)]


def _elapsed():
    return time.strftime("%H:%M:%S", time.gmtime(time.time() - _STARTED))


onsuccess:
    print(f"polyvse: workflow finished in {_elapsed()} (h:m:s); tables are in {R}/")


onerror:
    print(f"polyvse: workflow failed after {_elapsed()} (h:m:s); see the log named above and logs/")
