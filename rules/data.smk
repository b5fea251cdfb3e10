rule dataset:
    """Raw dataset → canonical captions and images tables (docs/architecture.md, The DAG)."""
    input:
        lambda wc: raw_files(config["datasets"][wc.dataset]),
    output:
        captions=f"{R}/{{dataset}}/captions.parquet",
        images=f"{R}/{{dataset}}/images.parquet",
    log:
        "logs/{dataset}/dataset.log",
    benchmark:
        "benchmarks/dataset/{dataset}.tsv"
    priority: PRIORITY["upstream"]
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        dataset=lambda wc: dataset_settings(config["datasets"][wc.dataset]),
        out_dir=lambda wc: f"{R}/{wc.dataset}",
    script:
        "../workflow_scripts/make_dataset.py"


rule dictionaries:
    """MUSE-format bilingual dictionaries en-xx / xx-en of the synthetic languages."""
    output:
        directory(f"{R}/{{dataset}}/dictionaries"),
    log:
        "logs/{dataset}/dictionaries.log",
    benchmark:
        "benchmarks/dictionaries/{dataset}.tsv"
    priority: PRIORITY["data"]
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=10,
    params:
        langs=lambda wc: config["datasets"][wc.dataset]["langs"],
        adapter=lambda wc: config["datasets"][wc.dataset]["adapter"],
        lexicon=lambda wc: (config["datasets"][wc.dataset].get("synthetic") or {}).get("lexicon", "closed"),
    script:
        "../workflow_scripts/make_dictionaries.py"


rule references:
    """Synthetic data only: every human caption's plan (every split, every
    language) realised in every language of the dataset: what the transfer MT
    backend looks sentences up in, and, for the English test captions, the
    references MT quality is scored against (results/{dataset}/mt_quality.tsv)."""
    output:
        f"{R}/{{dataset}}/references.parquet",
    log:
        "logs/{dataset}/references.log",
    benchmark:
        "benchmarks/references/{dataset}.tsv"
    priority: PRIORITY["data"]
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        dataset=lambda wc: config["datasets"][wc.dataset],
        langs=lambda wc: config["datasets"][wc.dataset]["langs"],
    script:
        "../workflow_scripts/make_references.py"


# ----------------------------------------------------------------------------- data statistics


rule data_stats:
    """Vocabulary statistics of a dataset's human training captions, per language:
    tokens, types, hapax share, test OOV rate, rank-frequency slope, top-5000
    share (polyvse.data.stats; SMALR §1, §3.1)."""
    input:
        f"{R}/{{dataset}}/captions.parquet",
    output:
        f"{R}/{{dataset}}/data_stats.tsv",
    log:
        "logs/{dataset}/data_stats.log",
    benchmark:
        "benchmarks/data_stats/{dataset}.tsv"
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        langs=lambda wc: human_langs(config, wc.dataset),
    script:
        "../workflow_scripts/data_stats.py"


rule data_stats_table:
    """Every dataset's statistics in one table, and beside them in the Markdown the
    real Multi30K reference rows of docs/multi30k_stats.tsv; below them how far apart
    each synthetic language's FastText vectors put its colour and shape words."""
    input:
        stats=lambda wc: expand(f"{R}/{{dataset}}/data_stats.tsv", dataset=text_datasets()),
        attribute_words=lambda wc: attribute_word_reports(),
        reference=str(Path(workflow.basedir) / "docs" / "multi30k_stats.tsv"),  # any working directory
    output:
        tsv=report(f"{R}/data_stats.tsv", category="Data"),
        md=report(f"{R}/data_stats.md", category="Data"),
        attribute_words=f"{R}/attribute_words.tsv",
    log:
        "logs/data_stats.log",
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../workflow_scripts/data_stats_table.py"


localrules:
    data_stats_table,
