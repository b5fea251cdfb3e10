rule evaluate:
    """Bidirectional retrieval on the test split, per language: R@1/5/10, medr, mR."""
    input:
        model=f"{R}/{{dataset}}/models/{{variant}}/model.pt",
        captions=f"{R}/{{dataset}}/captions.parquet",
        features=f"{R}/{{dataset}}/image_features/{BACKBONE}.npy",
        ids=f"{R}/{{dataset}}/image_features/{BACKBONE}.ids.txt",
    output:
        f"{R}/{{dataset}}/eval/{{variant}}.tsv",
    log:
        "logs/{dataset}/evaluate_{variant}.log",
    params:
        langs=lambda wc: variant_eval_langs(config, wc.variant),
        device=config["training"]["device"],
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../workflow_scripts/evaluate.py"
