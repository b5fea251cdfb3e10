# MLMME (mlmme_calixto_2017): VSE on each language alone and MLMME on all of them
# for every β → test retrieval → results/mlmme_table1.tsv/.md (the paper's Table 1).
# Settings: the config's mlmme block; runs are named vse_{lang} and b{100β}.

import re

from polyvse.train.mlmme_runs import check_mlmme_config, mlmme_runs, run_settings as mlmme_run_settings

if "mlmme_table1" in config["extra_reports"]:
    check_mlmme_config(config)

MLMME = config["mlmme"]
MLMME_RUNS = mlmme_runs(MLMME)  # the table's runs; the findings' seed replicas of some are trained too
MLMME_TRAINED = [*MLMME_RUNS, *FINDINGS_REPLICAS["mlmme"]]


rule mlmme_train:
    """One MLMME run (Calixto et al. 2017 §2, §4): one GRU encoder per language, the
    β-weighted ranking loss; VSE runs have one language and β = 1. Checkpoints every
    epoch, resumes after a kill, keeps the best epoch by validation mR."""
    input:
        captions=f"{R}/{{dataset}}/captions.parquet",
        features=f"{R}/{{dataset}}/image_features/{BACKBONE}.npy",
        ids=f"{R}/{{dataset}}/image_features/{BACKBONE}.ids.txt",
        vocab=lambda wc: expand(
            f"{R}/{wc.dataset}/vocab/human/{{lang}}.tsv", lang=mlmme_run_settings(config, wc.mlmme_run)["langs"]
        ),
    output:
        model=f"{R}/{{dataset}}/mlmme/{{mlmme_run}}/model.pt",
        epochs=f"{R}/{{dataset}}/mlmme/{{mlmme_run}}/epochs.tsv",
        params=f"{R}/{{dataset}}/mlmme/{{mlmme_run}}/params.json",
    log:
        "logs/{dataset}/mlmme_train_{mlmme_run}.log",
    benchmark:
        "benchmarks/mlmme_train/{dataset}/{mlmme_run}.tsv"
    wildcard_constraints:
        mlmme_run="|".join(re.escape(n) for n in MLMME_TRAINED),
    conda:
        "../envs/polyvse.yaml"
    threads: MLMME["threads"]
    resources:
        **training_resources("train", MLMME["threads"]),
    params:
        settings=lambda wc: mlmme_run_settings(config, wc.mlmme_run),
        checkpoint_dir=lambda wc: f"{R}/{wc.dataset}/mlmme/{wc.mlmme_run}/checkpoint",
    script:
        "../workflow_scripts/mlmme_train.py"


rule mlmme_evaluate:
    """Test retrieval of one run: sentence→image and image→sentence per language,
    and sentence→sentence between every two of its languages."""
    input:
        model=f"{R}/{{dataset}}/mlmme/{{mlmme_run}}/model.pt",
        captions=f"{R}/{{dataset}}/captions.parquet",
        features=f"{R}/{{dataset}}/image_features/{BACKBONE}.npy",
        ids=f"{R}/{{dataset}}/image_features/{BACKBONE}.ids.txt",
    output:
        f"{R}/{{dataset}}/mlmme/{{mlmme_run}}/eval.tsv",
    log:
        "logs/{dataset}/mlmme_evaluate_{mlmme_run}.log",
    benchmark:
        "benchmarks/mlmme_evaluate/{dataset}/{mlmme_run}.tsv"
    wildcard_constraints:
        mlmme_run="|".join(re.escape(n) for n in MLMME_TRAINED),
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        device=MLMME["training"]["device"],
    script:
        "../workflow_scripts/mlmme_evaluate.py"


rule mlmme_table:
    """MLMME Table 1: r@1/5/10 and median rank both ways per language, VSE and every β
    (gains over VSE in parentheses in the Markdown), plus sentence→sentence retrieval."""
    input:
        evals=expand(f"{R}/{MLMME['dataset']}/mlmme/{{run}}/eval.tsv", run=list(MLMME_RUNS)),
        params=expand(f"{R}/{MLMME['dataset']}/mlmme/{{run}}/params.json", run=list(MLMME_RUNS)),
    output:
        tsv=report(f"{R}/mlmme_table1.tsv", category="Tables", caption="../report/mlmme_table.rst"),
        md=report(f"{R}/mlmme_table1.md", category="Tables", caption="../report/mlmme_table.rst"),
    log:
        "logs/report_mlmme_table1.log",
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        runs=MLMME_RUNS,
        langs=MLMME["langs"],
        caption=MLMME["caption"],
        dataset=lambda wc: {"name": MLMME["dataset"], **config["datasets"].get(MLMME["dataset"], {})},
    script:
        "../workflow_scripts/make_mlmme_table.py"
