def train_inputs(wildcards):
    """Captions, image features and vocabularies, plus what the variant's family
    reads (polyvse.train.families.variant_needs): FastText or PCA tables of its
    languages, a latent-vocabulary pretraining, MUSE dictionaries."""
    v = config["variants"][wildcards.variant]
    ds = v["dataset"]
    inputs = {
        "captions": training_captions_file(wildcards),
        "features": f"{R}/{ds}/image_features/{BACKBONE}.npy",
        "ids": f"{R}/{ds}/image_features/{BACKBONE}.ids.txt",
        "vocab": train_vocab_files(wildcards),
    }
    needs = variant_needs(variant_settings(config, wildcards.variant))
    # Word vectors come from FastText on the largest training corpus, human + MT captions
    # (a stand-in for the papers' pretrained cc.{lang}.300 vectors): one table per language
    # serves every variant, whatever its captions (its vocabulary is a subset).
    if needs.fasttext_langs:
        inputs["fasttext"] = expand(f"{R}/{ds}/fasttext/augmented/{{lang}}.npy", lang=needs.fasttext_langs)
        inputs["fasttext_vocab"] = expand(f"{R}/{ds}/vocab/augmented/{{lang}}.tsv", lang=needs.fasttext_langs)
    if needs.pca_dim:
        inputs["pca"] = expand(f"{R}/{ds}/fasttext/augmented/{{lang}}.pca{needs.pca_dim}.npy", lang=needs.pca_langs)
        inputs["fasttext_vocab"] = expand(f"{R}/{ds}/vocab/augmented/{{lang}}.tsv", lang=needs.pca_langs)
    if needs.pretrain:
        inputs["pretrain"] = f"{R}/{ds}/pretrain/{needs.pretrain}.pt"
    if needs.dictionaries:
        inputs["dictionaries"] = dictionaries_dir(wildcards)
    return inputs


rule train:
    """One model variant: checkpoints every epoch, resumes after a kill, keeps the
    best epoch by validation mR. Requests a GPU on a cluster; CPU otherwise."""
    input:
        unpack(train_inputs),
    output:
        model=f"{R}/{{dataset}}/models/{{variant}}/model.pt",
        epochs=f"{R}/{{dataset}}/models/{{variant}}/epochs.tsv",
        params=f"{R}/{{dataset}}/models/{{variant}}/params.json",
    log:
        "logs/{dataset}/train_{variant}.log",
    params:
        settings=lambda wc: variant_settings(config, wc.variant),
        checkpoint_dir=lambda wc: f"{R}/{wc.dataset}/models/{wc.variant}/checkpoint",
    threads: config["resources"]["train"]["threads"]
    resources:
        gpu=config["resources"]["train"]["gpu"],
        cpus_per_gpu=config["resources"]["train"]["threads"],
        mem_mb=config["resources"]["train"]["mem_mb"],
        runtime=config["resources"]["train"]["runtime"],
    script:
        "../workflow_scripts/train.py"
