rule evaluate:
    """Bidirectional retrieval on the test split, per language: R@1/5/10, medr, mR.
    Protocol to_en: queries translated into English; clc_a / clc_c: each query with
    its translations into the model's languages, scores averaged / aggregated by an
    MLP fitted on validation (SMALR §3.4). Protocol direct (queries in their own
    language) is the train rule's: the model is still in memory there."""
    input:
        unpack(evaluation_inputs),
    output:
        f"{R}/{{dataset}}/eval/{{variant}}.{{protocol}}.tsv",
    log:
        "logs/{dataset}/evaluate_{variant}.{protocol}.log",
    benchmark:
        "benchmarks/evaluate/{dataset}/{variant}.{protocol}.tsv"
    wildcard_constraints:
        protocol="|".join(p for p in PROTOCOLS if p != "direct"),
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        langs=lambda wc: protocol_langs(config, wc.variant, wc.protocol),
        query_lang=lambda wc: "en" if wc.protocol == "to_en" else None,
        device=config["training"]["device"],
        seed=lambda wc: variant_settings(config, wc.variant)["seed"],
    script:
        "../workflow_scripts/evaluate.py"
