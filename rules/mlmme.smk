# MLMME (mlmme_calixto_2017): an mlmme variant trains VSE on each of its languages alone
# and MLMME on all of them for every β → test retrieval → a report of layout mlmme
# (results/{report}.tsv/.md, the paper's Table 1). Settings: the variant over the config's
# mlmme block; runs are named vse_{lang} and b{100β}, under results/{dataset}/mlmme/{variant}/.

from polyvse.train.mlmme_runs import mlmme_block, replica_offset, run_settings as mlmme_run_settings, variant_runs

MLMME = config["mlmme"]
MLMME_VARIANTS = family_variants(config, MLMME_FAMILY)
# every variant's runs; the findings' seed replicas of some are trained too
MLMME_TRAINED = sorted(
    {run for v in MLMME_VARIANTS for run in variant_runs(config, v)} | set(FINDINGS_REPLICAS["mlmme"])
)
# a run and its seed replicas train in one job (rule mlmme_train_seeds), as the other families' seeds
MLMME_SEED_GROUPS = {
    run: [run + suffix for suffix in SEED_SUFFIXES]
    for run in sorted({replica_offset(r)[0] for r in FINDINGS_REPLICAS["mlmme"]})
}
MLMME_SINGLY_TRAINED = [r for r in MLMME_TRAINED if replica_offset(r)[0] not in MLMME_SEED_GROUPS]


wildcard_constraints:
    mlmme_report=names_regex(layout_reports(config, "mlmme")),


rule mlmme_train:
    """One MLMME run (Calixto et al. 2017 §2, §4): one GRU encoder per language, the
    β-weighted ranking loss; VSE runs have one language and β = 1. Checkpoints every
    epoch, resumes after a kill, keeps the best epoch by validation mR; then test
    retrieval: sentence→image and image→sentence per language, and sentence→sentence
    between every two of its languages."""
    input:
        unpack(mlmme_train_inputs),
    output:
        model=f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}/model.pt",
        epochs=f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}/epochs.tsv",
        params=f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}/params.json",
        evaluation=f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}/eval.tsv",
    log:
        "logs/{dataset}/mlmme_train_{variant}_{mlmme_run}.log",
    benchmark:
        "benchmarks/mlmme_train/{dataset}/{variant}_{mlmme_run}.tsv"
    wildcard_constraints:
        variant=names_regex(MLMME_VARIANTS),
        mlmme_run=names_regex(MLMME_SINGLY_TRAINED),
    priority: PRIORITY["training"]
    conda:
        "../envs/polyvse.yaml"
    threads: MLMME["threads"]
    resources:
        **training_resources("train", MLMME["threads"]),
    params:
        settings=lambda wc: mlmme_run_settings(config, wc.variant, wc.mlmme_run),
        checkpoint_dir=lambda wc: f"{R}/{wc.dataset}/mlmme/{wc.variant}/{wc.mlmme_run}/checkpoint",
    script:
        "../workflow_scripts/mlmme_train.py"


rule mlmme_train_seeds:
    """An MLMME / VSE run and its seed replicas (findings.seeds runs: MLMME_SEED_GROUPS), each
    trained and evaluated as rule mlmme_train does, one after the other in one job: the job's
    start-up and the reading of the data are paid once, not once per seed."""
    input:
        unpack(mlmme_train_inputs),
    output:
        model=per_seed(f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}{{seed}}/model.pt"),
        epochs=per_seed(f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}{{seed}}/epochs.tsv"),
        params=per_seed(f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}{{seed}}/params.json"),
        evaluation=per_seed(f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}{{seed}}/eval.tsv"),
    log:
        "logs/{dataset}/mlmme_train_seeds_{variant}_{mlmme_run}.log",
    benchmark:
        "benchmarks/mlmme_train_seeds/{dataset}/{variant}_{mlmme_run}.tsv"
    wildcard_constraints:
        variant=names_regex(MLMME_VARIANTS),
        mlmme_run=names_regex(MLMME_SEED_GROUPS),
    priority: PRIORITY["long_training"]
    conda:
        "../envs/polyvse.yaml"
    threads: MLMME["threads"]
    resources:
        **training_resources("train", MLMME["threads"], trainings=len(SEED_SUFFIXES)),
    params:
        settings=lambda wc: [mlmme_run_settings(config, wc.variant, r) for r in MLMME_SEED_GROUPS[wc.mlmme_run]],
        checkpoint_dir=lambda wc: [
            f"{R}/{wc.dataset}/mlmme/{wc.variant}/{r}/checkpoint" for r in MLMME_SEED_GROUPS[wc.mlmme_run]
        ],
    script:
        "../workflow_scripts/mlmme_train.py"


rule mlmme_table:
    """MLMME Table 1: r@1/5/10 and median rank both ways per language, VSE and every β
    (gains over VSE in parentheses in the Markdown), plus sentence→sentence retrieval."""
    input:
        evals=lambda wc: mlmme_report_files(wc, "eval.tsv"),
        params=lambda wc: mlmme_report_files(wc, "params.json"),
    output:
        tsv=report(f"{R}/{{mlmme_report}}.tsv", category="Tables", caption="../report/mlmme_table.rst"),
        md=report(f"{R}/{{mlmme_report}}.md", category="Tables", caption="../report/mlmme_table.rst"),
    log:
        "logs/report_{mlmme_report}.log",
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        runs=lambda wc: variant_runs(config, mlmme_report_variant(wc)),
        langs=lambda wc: mlmme_block(config, mlmme_report_variant(wc))["langs"],
        caption=lambda wc: config["reports"][wc.mlmme_report]["caption"] or wc.mlmme_report,
        dataset=lambda wc: {
            "name": mlmme_block(config, mlmme_report_variant(wc))["dataset"],
            **config["datasets"][mlmme_block(config, mlmme_report_variant(wc))["dataset"]],
        },
    script:
        "../workflow_scripts/make_mlmme_table.py"
