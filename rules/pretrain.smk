rule pretrain:
    """SMALR's latent shared vocabulary (§3.1): the frozen word → latent-token
    assignment of every word of the pretraining's languages and the initial
    latent embeddings of the tokens used (unused ones dropped), for LA / HEM / SMALR; and the
    usage report (tokens used, largest token's share of words, entropy) that shows a collapse."""
    input:
        unpack(pretrain_inputs),
    output:
        latent=f"{R}/{{dataset}}/pretrain/{{name}}.pt",
        usage=f"{R}/{{dataset}}/pretrain/{{name}}_usage.tsv",
    log:
        "logs/{dataset}/pretrain_{name}.log",
    benchmark:
        "benchmarks/pretrain/{dataset}/{name}.tsv"
    wildcard_constraints:
        name=names_regex(config["pretrain"]),
    priority: PRIORITY["data"]
    conda:
        "../envs/polyvse.yaml"
    threads: config["resources"]["train"]["threads"]
    resources:
        **training_resources("train"),
    params:
        settings=lambda wc: pretrain_settings(config, wc.name, wc.dataset),
        text=config["text"],
        seed=config["seed"],
        checkpoint_dir=lambda wc: f"{R}/{wc.dataset}/pretrain/{wc.name}.checkpoint",
    script:
        "../workflow_scripts/pretrain.py"
