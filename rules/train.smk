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
    wildcard_constraints:
        variant=names_regex(singly_trained(word_variants(config))),
    priority: PRIORITY["training"]
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


rule train_seeds:
    """A variant and its seed replicas (findings.seeds trainings: SEED_GROUPS), each trained and
    evaluated as rule train does, one after the other in one job: they read the same inputs, so
    the job's start-up and the reading of the data are paid once, not once per seed."""
    input:
        unpack(train_inputs),
    output:
        model=per_seed(f"{R}/{{dataset}}/models/{{variant}}{{seed}}/model.pt"),
        epochs=per_seed(f"{R}/{{dataset}}/models/{{variant}}{{seed}}/epochs.tsv"),
        params=per_seed(f"{R}/{{dataset}}/models/{{variant}}{{seed}}/params.json"),
        evaluation=per_seed(f"{R}/{{dataset}}/eval/{{variant}}{{seed}}.direct.tsv"),
    log:
        "logs/{dataset}/train_seeds_{variant}.log",
    benchmark:
        "benchmarks/train_seeds/{dataset}/{variant}.tsv"
    wildcard_constraints:
        variant=names_regex(seed_trained(word_variants(config))),
    priority: PRIORITY["long_training"]
    conda:
        "../envs/polyvse.yaml"
    threads: config["resources"]["train"]["threads"]
    resources:
        **training_resources("train", trainings=len(SEED_SUFFIXES)),
    params:
        settings=lambda wc: [variant_settings(config, v) for v in SEED_GROUPS[wc.variant]],
        checkpoint_dir=lambda wc: [f"{R}/{wc.dataset}/models/{v}/checkpoint" for v in SEED_GROUPS[wc.variant]],
        eval_langs=lambda wc: protocol_langs(config, wc.variant, "direct"),
    script:
        "../workflow_scripts/train.py"
