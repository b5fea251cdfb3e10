rule vocab:
    """Token counts of one language's training captions (no test word leaks in),
    from the human captions or from human + machine-translated ones."""
    input:
        captions=lambda wc: f"{R}/{wc.dataset}/{'captions_augmented' if wc.origin == 'augmented' else 'captions'}.parquet",
    output:
        f"{R}/{{dataset}}/vocab/{{origin}}/{{lang}}.tsv",
    log:
        "logs/{dataset}/vocab_{origin}_{lang}.log",
    params:
        segmenter=config["text"]["segmenter"],
    wildcard_constraints:
        origin="human|augmented",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../workflow_scripts/build_vocab.py"
