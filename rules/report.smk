rule table:
    """A paper table: one row a model, mR per language, HA, A and parameter counts."""
    input:
        evals=report_eval_files,
        params=report_params_files,
    output:
        tsv=report(f"{R}/{{report}}.tsv", category="Tables", caption="../report/table.rst"),
        md=report(f"{R}/{{report}}.md", category="Tables", caption="../report/table.rst"),
    log:
        "logs/report_{report}.log",
    params:
        report=lambda wc: config["reports"][wc.report],
        datasets=lambda wc: {ds: {**config["datasets"][ds], "human_langs": human_langs(config, ds)}
                             for ds in report_datasets(config, wc.report)},
        variants=lambda wc: report_variants(config, wc.report),
        evaluations=lambda wc: report_evaluations(config, wc.report),
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../workflow_scripts/make_table.py"
