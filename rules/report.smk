rule table:
    """A paper table: one row a model, mR per language, HA, A and parameter counts;
    where rows train or test on MT, a footnote with the MT's measured BLEU."""
    input:
        evals=report_eval_files,
        params=report_params_files,
        mt_quality=report_mt_quality_files,
    output:
        tsv=report(f"{R}/{{report}}.tsv", category="Tables", caption="../report/table.rst"),
        md=report(f"{R}/{{report}}.md", category="Tables", caption="../report/table.rst"),
    log:
        "logs/report_{report}.log",
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        report=lambda wc: config["reports"][wc.report],
        datasets=lambda wc: {
            ds: {**config["datasets"][ds], "human_langs": human_langs(config, ds)}
            for ds in report_datasets(config, wc.report)
        },
        variants=lambda wc: report_variants(config, wc.report),
        evaluations=lambda wc: report_evaluations(config, wc.report),
        mt_datasets=lambda wc: mt_datasets(config, wc.report),
    script:
        "../workflow_scripts/make_table.py"


rule figure:
    """A paper figure: mR against training languages (SMALR Fig. 1(b)) or average
    mR against trainable parameters per dataset (SMALR Fig. 3); the TSV holds
    the plotted numbers."""
    input:
        evals=figure_eval_files,
        params=figure_params_files,
    output:
        png=report(f"{R}/{{figure}}.png", category="Figures", caption="../report/figure.rst"),
        tsv=f"{R}/{{figure}}.tsv",
    log:
        "logs/figure_{figure}.log",
    wildcard_constraints:
        figure=names_regex(config["figures"]),
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        figure=lambda wc: config["figures"][wc.figure],
        sources=lambda wc: figure_sources(config, wc.figure),
        variants=lambda wc: {
            v: {"dataset": config["variants"][v]["dataset"], "train_langs": config["variants"][v]["train_langs"]}
            for v, _ in figure_sources(config, wc.figure)
        },
        datasets=lambda wc: {
            ds: config["datasets"][ds] for ds in config["figures"][wc.figure]["datasets"] if ds in config["datasets"]
        },
    script:
        "../workflow_scripts/make_figure.py"


rule provenance:
    """What the run depended on (package versions, espeak-ng and its voices, the CPU) and the
    SHA-256 of every result file by stage, written last: `python -m polyvse.report.provenance
    diff A B` names what the environment changed and the first data stage at which two runs differ."""
    input:
        tables=all_targets(),
    output:
        f"{R}/provenance/run.tsv",
    log:
        "logs/provenance.log",
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=10,
    params:
        results=lambda wc, output: str(Path(output[0]).parent.parent),  # {R}/provenance/run.tsv → {R}
    script:
        "../workflow_scripts/provenance.py"


rule benchmarks:
    """Where the run's time and memory went: every job's benchmark file (benchmarks/{rule}/...,
    wall seconds, peak RSS, CPU seconds) in one table, its sum per rule, and its CPU time per model
    family; runs after every result (a measurement of this machine, not a result: provenance does
    not hash it)."""
    input:
        tables=all_targets(),
    output:
        jobs=f"{R}/benchmarks.tsv",
        summary=f"{R}/benchmarks_by_rule.tsv",
        by_family=f"{R}/benchmarks_by_family.tsv",
    log:
        "logs/benchmarks.log",
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        root="benchmarks",
        logs="logs",
        variant_families={name: v["model"] for name, v in config["variants"].items()},
    script:
        "../workflow_scripts/gather_benchmarks.py"


rule findings:
    """The seed papers' findings that our tables can test, each compared row trained with
    findings.seeds seeds: the paper's numbers, ours as mean ± std, and a verdict that counts a
    gap only where it exceeds the seeds' spread (polyvse.report.findings)."""
    input:
        plan_files(FINDINGS_PLAN),
    output:
        tsv=report(f"{R}/findings.tsv", category="Findings", caption="../report/findings.rst"),
        md=report(f"{R}/findings.md", category="Findings", caption="../report/findings.rst"),
    log:
        "logs/findings.log",
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        plan=FINDINGS_PLAN,
    script:
        "../workflow_scripts/make_findings.py"


rule learning:
    """Which trained models learned: every model a table or figure reads (seed replicas too), its
    test score against the score of random rankings of the same test set, learned at 5x chance
    (word models: in every language too) or 3x (the others), its best epoch, epochs run and stop reason (patience or the
    epochs ceiling), the papers' own degraded rows listed apart; a figure of validation curves
    per table (polyvse.report.learning)."""
    input:
        learning_inputs(LEARNING_PLAN),
    output:
        tsv=report(f"{R}/learning.tsv", category="Learning", caption="../report/learning.rst"),
        md=report(f"{R}/learning.md", category="Learning", caption="../report/learning.rst"),
        curves=[
            report(path, category="Learning", caption="../report/learning_curves.rst")
            for path in LEARNING_FIGURES.values()
        ],
    log:
        "logs/learning.log",
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        plan=LEARNING_PLAN,
        tables=list(LEARNING_FIGURES),
    script:
        "../workflow_scripts/make_learning.py"


rule gallery:
    """The best single word model of a text table (most languages evaluated, then highest mean
    mR) answering human test captions in its first gallery.langs languages: each query beside
    its top gallery.top_k test images, the image it describes outlined (polyvse.report.gallery)."""
    input:
        evals=lambda wc: [
            f"{R}/{config['variants'][v]['dataset']}/eval/{v}.direct.tsv" for v in gallery_variants(wc.report)
        ],
        models=lambda wc: [
            f"{R}/{config['variants'][v]['dataset']}/models/{v}/model.pt" for v in gallery_variants(wc.report)
        ],
        data=lambda wc: sorted(
            {
                path
                for ds in {config["variants"][v]["dataset"] for v in gallery_variants(wc.report)}
                for path in (
                    f"{R}/{ds}/captions.parquet",
                    f"{R}/{ds}/images.parquet",
                    *image_feature_files(ds).values(),
                )
            }
        ),
    output:
        report(f"{R}/gallery/{{report}}.png", category="Gallery", caption="../report/gallery.rst"),
    log:
        "logs/gallery_{report}.log",
    benchmark:
        "benchmarks/gallery/{report}.tsv"
    wildcard_constraints:
        report=names_regex(word_reports()),
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        candidates=lambda wc: gallery_variants(wc.report),
        langs=config["gallery"]["langs"],
        per_lang=config["gallery"]["per_lang"],
        top_k=config["gallery"]["top_k"],
        seed=config["seed"],
    script:
        "../workflow_scripts/make_gallery.py"


rule described_queries:
    """A word model searching its test images for every colour x shape of the synthetic scenes ("a red
    circle", "two blue stars"): each query's precision at k against the images whose scene plans show
    it (polyvse.evaluate.described), and their mean."""
    input:
        unpack(lambda wc: image_feature_files(described_dataset())),
        model=lambda wc: f"{described_model_dir()}/model.pt",
        images=lambda wc: f"{R}/{described_dataset()}/images.parquet",
    output:
        tsv=f"{R}/described_queries.tsv",
        md=f"{R}/described_queries.md",
    log:
        "logs/described_queries.log",
    benchmark:
        "benchmarks/described_queries/described_queries.tsv"
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        variant=config["described_queries"]["variant"],
        model_dir=lambda wc: described_model_dir(),
        seed=lambda wc: config["datasets"][described_dataset()]["synthetic"]["seed"],
        lexicon=lambda wc: config["datasets"][described_dataset()]["synthetic"]["lexicon"],
        counts=config["described_queries"]["counts"],
        k=config["described_queries"]["k"],
        min_relevant=config["described_queries"]["min_relevant"],
    script:
        "../workflow_scripts/make_described_queries.py"
