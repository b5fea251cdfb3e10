import time

from snakemake.utils import validate

from polyvse.config import check_config, report_variants, variant_eval_langs, variant_settings


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


def all_targets():
    return expand(f"{R}/{{report}}.{{ext}}", report=list(config["reports"]), ext=["tsv", "md"])


def variant_dataset(wildcards):
    return config["variants"][wildcards.variant]["dataset"]


def train_vocab_files(wildcards):
    v = config["variants"][wildcards.variant]
    return expand(f"{R}/{{dataset}}/vocab/{{lang}}.tsv", dataset=v["dataset"], lang=v["train_langs"])


def report_eval_files(wildcards):
    rep = config["reports"][wildcards.report]
    return expand(f"{R}/{{dataset}}/eval/{{variant}}.tsv", dataset=rep["dataset"],
                  variant=report_variants(config, wildcards.report))


def report_params_files(wildcards):
    rep = config["reports"][wildcards.report]
    return expand(f"{R}/{{dataset}}/models/{{variant}}/params.json", dataset=rep["dataset"],
                  variant=report_variants(config, wildcards.report))


def _elapsed():
    return time.strftime("%H:%M:%S", time.gmtime(time.time() - _STARTED))


onsuccess:
    print(f"polyvse: workflow finished in {_elapsed()} (h:m:s); tables are in {R}/")


onerror:
    print(f"polyvse: workflow failed after {_elapsed()} (h:m:s); see the log named above and logs/")
