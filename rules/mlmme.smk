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


# One definition for a run trained alone (rule mlmme_train) and a seed group (mlmme_train_seeds: a run
# and its findings.seeds replicas, MLMME_SEED_GROUPS): see rules/train.smk.
for grouped in (False, True):

    rule:
        """Each MLMME run of the group (Calixto et al. 2017 §2, §4): one GRU encoder per language,
        the β-weighted ranking loss; VSE runs have one language and β = 1. Checkpoints every epoch,
        resumes after a kill, keeps the best epoch by validation mR; then test retrieval:
        sentence→image and image→sentence per language, and sentence→sentence between every two of
        its languages."""
        name:
            training_rule("mlmme_train", grouped)
        input:
            unpack(mlmme_train_inputs),
        output:
            model=trainings(f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}{{seed}}/model.pt", grouped),
            epochs=trainings(f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}{{seed}}/epochs.tsv", grouped),
            params=trainings(f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}{{seed}}/params.json", grouped),
            evaluation=trainings(f"{R}/{{dataset}}/mlmme/{{variant}}/{{mlmme_run}}{{seed}}/eval.tsv", grouped),
        log:
            f"logs/{{dataset}}/{training_rule('mlmme_train', grouped)}_{{variant}}_{{mlmme_run}}.log",
        benchmark:
            f"benchmarks/{training_rule('mlmme_train', grouped)}/{{dataset}}/{{variant}}_{{mlmme_run}}.tsv"
        wildcard_constraints:
            variant=names_regex(MLMME_VARIANTS),
            mlmme_run=names_regex(MLMME_SEED_GROUPS if grouped else MLMME_SINGLY_TRAINED),
        priority: PRIORITY["long_training" if grouped else "training"]
        conda:
            "../envs/polyvse.yaml"
        threads: MLMME["threads"]
        resources:
            **training_resources("train", MLMME["threads"], trainings=group_size(grouped)),
        params:
            settings=lambda wc, grouped=grouped: each_training(
                wc.mlmme_run, grouped, lambda r: mlmme_run_settings(config, wc.variant, r), MLMME_SEED_GROUPS
            ),
            checkpoint_dir=lambda wc, grouped=grouped: each_training(
                wc.mlmme_run,
                grouped,
                lambda r: f"{R}/{wc.dataset}/mlmme/{wc.variant}/{r}/checkpoint",
                MLMME_SEED_GROUPS,
            ),
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
