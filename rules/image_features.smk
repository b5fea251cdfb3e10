rule image_features:
    """Images → one CNN feature vector each, in images.parquet order."""
    input:
        images=f"{R}/{{dataset}}/images.parquet",
    output:
        features=f"{R}/{{dataset}}/image_features/{{backbone}}.npy",
        ids=f"{R}/{{dataset}}/image_features/{{backbone}}.ids.txt",
    log:
        "logs/{dataset}/image_features_{backbone}.log",
    benchmark:
        "benchmarks/image_features/{dataset}/{backbone}.tsv"
    priority: PRIORITY["upstream"]
    conda:
        "../envs/polyvse.yaml"
    threads: config["resources"]["features"]["threads"]
    resources:
        mem_mb=config["resources"]["features"]["mem_mb"],
        runtime=config["resources"]["features"]["runtime"],
    params:
        settings=config["image_features"],
        image_root=lambda wc: f"{R}/{wc.dataset}",
    script:
        "../workflow_scripts/extract_image_features.py"
