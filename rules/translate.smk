rule augment_captions:
    """Machine translations: every train/val image reaches translate.min_per_lang
    sentences in every language; languages without human test captions get
    translations of the English ones (SMALR Tables 1-2, columns marked ¹)."""
    input:
        unpack(translate_inputs),
    output:
        f"{R}/{{dataset}}/captions_augmented.parquet",
    log:
        "logs/{dataset}/augment_captions.log",
    benchmark:
        "benchmarks/augment_captions/{dataset}.tsv"
    priority: PRIORITY["data"]
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=600,
    params:
        langs=lambda wc: config["datasets"][wc.dataset]["langs"],
        settings=config["translate"],
        dictionaries=dictionaries_dir,
    script:
        "../workflow_scripts/augment_captions.py"


rule query_translations:
    """Every human caption of a split translated into every other language: test
    (CLC, Trans. to En) and val (CLC-C is fitted on the validation split)."""
    input:
        unpack(translate_inputs),
    output:
        f"{R}/{{dataset}}/{{split}}_translations.parquet",
    log:
        "logs/{dataset}/query_translations_{split}.log",
    benchmark:
        "benchmarks/query_translations/{dataset}/{split}.tsv"
    wildcard_constraints:
        split="test|val",
    priority: PRIORITY["data"]
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=600,
    params:
        langs=lambda wc: config["datasets"][wc.dataset]["langs"],
        settings=config["translate"],
        dictionaries=dictionaries_dir,
    script:
        "../workflow_scripts/query_translations.py"


rule mt_quality:
    """BLEU and chrF of the configured MT, en→xx against references of the same
    plan and xx→en against the English captions; real data (no references):
    rows marked 'unmeasured'. Read by the tables' MT footnote."""
    input:
        unpack(mt_quality_inputs),
    output:
        f"{R}/{{dataset}}/mt_quality.tsv",
    log:
        "logs/{dataset}/mt_quality.log",
    benchmark:
        "benchmarks/mt_quality/{dataset}.tsv"
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        langs=lambda wc: config["datasets"][wc.dataset]["langs"],
        settings=config["translate"],
        dictionaries=dictionaries_dir,
    script:
        "../workflow_scripts/mt_quality.py"
