rule train:
    """One model variant: checkpoints every epoch, resumes after a kill, keeps the
    best epoch by validation mR, then evaluates it on the test split (protocol direct).
    Requests a GPU on a cluster; CPU otherwise."""
    input:
        unpack(train_inputs),
    output:
        model=f"{R}/{{dataset}}/models/{{variant}}/model.pt",
        epochs=f"{R}/{{dataset}}/models/{{variant}}/epochs.tsv",
        params=f"{R}/{{dataset}}/models/{{variant}}/params.json",
        evaluation=f"{R}/{{dataset}}/eval/{{variant}}.direct.tsv",
    log:
        "logs/{dataset}/train_{variant}.log",
    benchmark:
        "benchmarks/train/{dataset}/{variant}.tsv"
    conda:
        "../envs/polyvse.yaml"
    threads: config["resources"]["train"]["threads"]
    resources:
        **training_resources("train"),
    params:
        settings=lambda wc: variant_settings(config, wc.variant),
        checkpoint_dir=lambda wc: f"{R}/{wc.dataset}/models/{wc.variant}/checkpoint",
        eval_langs=lambda wc: protocol_langs(config, wc.variant, "direct"),
    script:
        "../workflow_scripts/train.py"
