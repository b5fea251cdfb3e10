rule vocab:
    """Token counts of one language's training captions (no test word leaks in)."""
    input:
        captions=f"{R}/{{dataset}}/captions.parquet",
    output:
        f"{R}/{{dataset}}/vocab/{{lang}}.tsv",
    log:
        "logs/{dataset}/vocab_{lang}.log",
    params:
        segmenter=config["text"]["segmenter"],
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../workflow_scripts/build_vocab.py"
