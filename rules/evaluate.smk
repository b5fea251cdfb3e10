def evaluation_inputs(wildcards):
    dataset = wildcards.dataset
    augmented = needs_translations(config, wildcards.variant, wildcards.protocol)
    inputs = {
        "model": f"{R}/{dataset}/models/{wildcards.variant}/model.pt",
        "captions": f"{R}/{dataset}/{'captions_augmented' if augmented else 'captions'}.parquet",
        "features": f"{R}/{dataset}/image_features/{BACKBONE}.npy",
        "ids": f"{R}/{dataset}/image_features/{BACKBONE}.ids.txt",
    }
    if wildcards.protocol == "to_en":
        inputs["translations"] = f"{R}/{dataset}/test_translations.parquet"
    return inputs


rule evaluate:
    """Bidirectional retrieval on the test split, per language: R@1/5/10, medr, mR.
    Protocol direct: queries in their own language; to_en: translated into English."""
    input:
        unpack(evaluation_inputs),
    output:
        f"{R}/{{dataset}}/eval/{{variant}}.{{protocol}}.tsv",
    log:
        "logs/{dataset}/evaluate_{variant}.{protocol}.log",
    params:
        langs=lambda wc: protocol_langs(config, wc.variant, wc.protocol),
        query_lang=lambda wc: "en" if wc.protocol == "to_en" else None,
        device=config["training"]["device"],
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../workflow_scripts/evaluate.py"
