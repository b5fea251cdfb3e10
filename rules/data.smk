rule dataset:
    """Raw dataset → canonical captions and images tables (DESIGN §data)."""
    input:
        lambda wc: raw_files(config["datasets"][wc.dataset]),
    output:
        captions=f"{R}/{{dataset}}/captions.parquet",
        images=f"{R}/{{dataset}}/images.parquet",
    log:
        "logs/{dataset}/dataset.log",
    params:
        dataset=lambda wc: config["datasets"][wc.dataset],
        out_dir=lambda wc: f"{R}/{wc.dataset}",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    script:
        "../workflow_scripts/make_dataset.py"


rule dictionaries:
    """MUSE-format bilingual dictionaries en-xx / xx-en of the synthetic languages."""
    output:
        directory(f"{R}/{{dataset}}/dictionaries"),
    log:
        "logs/{dataset}/dictionaries.log",
    params:
        langs=lambda wc: config["datasets"][wc.dataset]["langs"],
        adapter=lambda wc: config["datasets"][wc.dataset]["adapter"],
    threads: 1
    resources:
        mem_mb=500,
        runtime=10,
    script:
        "../workflow_scripts/make_dictionaries.py"
