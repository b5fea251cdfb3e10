# The Translator poster (translator_poster): a translator variant learns a matrix M from its
# target language's word vectors into its source language's (SVD + RCSLS from a bilingual
# dictionary), a source model, and the FS / T1 / T2 target models on a growing number of
# target examples → a report of layout translator_curve (results/{report}.tsv/.png, the
# poster's Figure 3). Settings: the variant over the config's translator block.
# Paths: results/{dataset}/translator/{variant}/.

from polyvse.train.translator_runs import translator_block, translator_settings

TRANSLATOR_VARIANTS = family_variants(config, TRANSLATOR_FAMILY)


wildcard_constraints:
    translator_protocol="FS|T1|T2",
    n_examples="[0-9]+",
    translator_report=names_regex(layout_reports(config, "translator_curve")),


rule translator_align:
    """M from the target's word vectors into the source's: orthogonal Procrustes (SVD),
    then RCSLS (k nearest neighbours), on a dictionary composed through a pivot where
    no direct one exists; logs the held-out dictionary-induction precision@1."""
    input:
        unpack(
            lambda wc: {
                "target_vocab": f"{R}/{wc.dataset}/vocab/{translator_target_origin(wc)}/{translator_lang(wc, 'target')}.tsv",
                "target_vectors": translator_vectors(wc, "target", translator_target_origin(wc)),
                "source_vocab": f"{R}/{wc.dataset}/vocab/human/{translator_lang(wc, 'source')}.tsv",
                "source_vectors": translator_vectors(wc, "source", "human"),
                "dictionaries": dictionaries_dir(wc),
            }
        ),
    output:
        matrix=f"{TRANSLATOR_DIR}/align/translator.npy",
        summary=f"{TRANSLATOR_DIR}/align/align.json",
        steps=f"{TRANSLATOR_DIR}/align/rcsls.tsv",
    log:
        "logs/{dataset}/translator_align_{variant}.log",
    benchmark:
        "benchmarks/translator_align/{dataset}/{variant}.tsv"
    wildcard_constraints:
        variant=names_regex(TRANSLATOR_VARIANTS),
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        align=lambda wc: translator_block(config, wc.variant)["align"],
        pivots=lambda wc: translator_block(config, wc.variant)["pivots"],
        source=lambda wc: translator_lang(wc, "source"),
        target=lambda wc: translator_lang(wc, "target"),
        seed=lambda wc: translator_block(config, wc.variant)["seed"],
    script:
        "../workflow_scripts/translator_align.py"


rule translator_source:
    """The source-language VSE model over its frozen word vectors, on all its human
    captions; T1 and T2 start from its text encoder and image branch."""
    input:
        unpack(translator_source_inputs),
    output:
        model=f"{TRANSLATOR_DIR}/source/model.pt",
        epochs=f"{TRANSLATOR_DIR}/source/epochs.tsv",
        params=f"{TRANSLATOR_DIR}/source/params.json",
    log:
        "logs/{dataset}/translator_source_{variant}.log",
    benchmark:
        "benchmarks/translator_source/{dataset}/{variant}.tsv"
    wildcard_constraints:
        variant=names_regex(TRANSLATOR_VARIANTS),
    conda:
        "../envs/polyvse.yaml"
    threads: config["translator"]["threads"]
    resources:
        **training_resources("train", config["translator"]["threads"]),
    params:
        settings=lambda wc: translator_settings(config, wc.variant, "source"),
        source=lambda wc: translator_lang(wc, "source"),
        checkpoint_dir=lambda wc: f"{translator_dir(wc)}/source/checkpoint",
    script:
        "../workflow_scripts/translator_source.py"


rule translator_train:
    """One point of the curve: the target model of a protocol (FS, T1, T2) trained on the
    first {n_examples} target examples, then tested on the target's test captions
    (in the same job: the models are small and many)."""
    input:
        unpack(translator_train_inputs),
    output:
        model=f"{TRANSLATOR_DIR}/{{translator_protocol}}/n{{n_examples}}/model.pt",
        epochs=f"{TRANSLATOR_DIR}/{{translator_protocol}}/n{{n_examples}}/epochs.tsv",
        eval=f"{TRANSLATOR_DIR}/{{translator_protocol}}/n{{n_examples}}/eval.tsv",
    log:
        "logs/{dataset}/translator_train_{variant}_{translator_protocol}_n{n_examples}.log",
    benchmark:
        "benchmarks/translator_train/{dataset}/{variant}_{translator_protocol}_n{n_examples}.tsv"
    wildcard_constraints:
        variant=names_regex(TRANSLATOR_VARIANTS),
    conda:
        "../envs/polyvse.yaml"
    threads: config["translator"]["threads"]
    resources:
        **training_resources("train", config["translator"]["threads"]),
    params:
        settings=lambda wc: translator_settings(config, wc.variant, "target"),
        examples=lambda wc: translator_block(config, wc.variant)["target_captions"],
        target=lambda wc: translator_lang(wc, "target"),
        checkpoint_dir=lambda wc: f"{translator_dir(wc)}/{wc.translator_protocol}/n{wc.n_examples}/checkpoint",
    script:
        "../workflow_scripts/translator_train.py"


rule translator_curve:
    """The poster's Figure 3: R@1/5/10 text→image (first row) and image→text (second row)
    against the number of target examples, one line per protocol; the TSV holds the numbers."""
    input:
        evals=translator_curve_evals,
        align=lambda wc: f"{translator_report_dir(wc)}/align/align.json",
    output:
        png=report(f"{R}/{{translator_report}}.png", category="Figures", caption="../report/translator_curve.rst"),
        tsv=f"{R}/{{translator_report}}.tsv",
    log:
        "logs/report_{translator_report}.log",
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        caption=lambda wc: config["reports"][wc.translator_report]["caption"] or wc.translator_report,
        source=lambda wc: translator_block(config, translator_report_variant(wc))["source"],
        target=lambda wc: translator_block(config, translator_report_variant(wc))["target"],
        image_branch=lambda wc: translator_block(config, translator_report_variant(wc))["image_branch"],
    script:
        "../workflow_scripts/make_translator_curve.py"
