rule table:
    """A paper table: one row a model, mR per language, HA, A and parameter counts."""
    input:
        evals=report_eval_files,
        params=report_params_files,
        captions=lambda wc: f"{R}/{config['reports'][wc.report]['dataset']}/captions.parquet",
    output:
        tsv=report(f"{R}/{{report}}.tsv", category="Tables", caption="../report/table.rst"),
        md=report(f"{R}/{{report}}.md", category="Tables", caption="../report/table.rst"),
    log:
        "logs/report_{report}.log",
    params:
        report=lambda wc: config["reports"][wc.report],
        dataset=lambda wc: config["datasets"][config["reports"][wc.report]["dataset"]],
        variants=lambda wc: report_variants(config, wc.report),
        evaluations=lambda wc: report_evaluations(config, wc.report),
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../workflow_scripts/make_table.py"
