# The Translator poster (translator_poster): a matrix M from the target language's word
# vectors into the source language's (SVD + RCSLS from a bilingual dictionary), a source
# model, and the FS / T1 / T2 target models on a growing number of target examples
# → results/translator_curve.tsv/.png (the poster's Figure 3).
# Settings: the config's translator block. Paths: {dataset}/translator/{src}-{tgt}/.

from polyvse.train.translator_runs import check_translator_config, translator_settings

if "translator_curve" in config["extra_reports"]:
    check_translator_config(config)


wildcard_constraints:
    src="[a-z]{2}",
    tgt="[a-z]{2}",
    translator_protocol="FS|T1|T2",
    n_examples="[0-9]+",


rule translator_align:
    """M from the target's word vectors into the source's: orthogonal Procrustes (SVD),
    then RCSLS (k nearest neighbours), on a dictionary composed through a pivot where
    no direct one exists; logs the held-out dictionary-induction precision@1."""
    input:
        unpack(
            lambda wc: {
                "target_vocab": f"{R}/{wc.dataset}/vocab/{translator_target_origin()}/{wc.tgt}.tsv",
                "target_vectors": translator_vectors(wc.dataset, wc.tgt, translator_target_origin()),
                "source_vocab": f"{R}/{wc.dataset}/vocab/human/{wc.src}.tsv",
                "source_vectors": translator_vectors(wc.dataset, wc.src, "human"),
                "dictionaries": dictionaries_dir(wc),
            }
        ),
    output:
        matrix=f"{TRANSLATOR_DIR}/align/translator.npy",
        summary=f"{TRANSLATOR_DIR}/align/align.json",
        steps=f"{TRANSLATOR_DIR}/align/rcsls.tsv",
    log:
        "logs/{dataset}/translator_align_{src}-{tgt}.log",
    benchmark:
        "benchmarks/translator_align/{dataset}/{src}-{tgt}.tsv"
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        align=TRANSLATOR["align"],
        pivots=TRANSLATOR["pivots"],
        seed=config["seed"],
    script:
        "../workflow_scripts/translator_align.py"


rule translator_source:
    """The source-language VSE model over its frozen word vectors, on all its human
    captions; T1 and T2 start from its text encoder and image branch."""
    input:
        captions=f"{R}/{{dataset}}/captions.parquet",
        features=f"{R}/{{dataset}}/image_features/{BACKBONE}.npy",
        ids=f"{R}/{{dataset}}/image_features/{BACKBONE}.ids.txt",
        vocab=f"{R}/{{dataset}}/vocab/human/{{src}}.tsv",
        vectors=lambda wc: translator_vectors(wc.dataset, wc.src, "human"),
    output:
        model=f"{TRANSLATOR_DIR}/source/model.pt",
        epochs=f"{TRANSLATOR_DIR}/source/epochs.tsv",
        params=f"{TRANSLATOR_DIR}/source/params.json",
    log:
        "logs/{dataset}/translator_source_{src}-{tgt}.log",
    benchmark:
        "benchmarks/translator_source/{dataset}/{src}-{tgt}.tsv"
    conda:
        "../envs/polyvse.yaml"
    threads: TRANSLATOR["threads"]
    resources:
        **training_resources("train", TRANSLATOR["threads"]),
    params:
        settings=translator_settings(config, "source"),
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
        "logs/{dataset}/translator_train_{src}-{tgt}_{translator_protocol}_n{n_examples}.log",
    benchmark:
        "benchmarks/translator_train/{dataset}/{src}-{tgt}_{translator_protocol}_n{n_examples}.tsv"
    conda:
        "../envs/polyvse.yaml"
    threads: TRANSLATOR["threads"]
    resources:
        **training_resources("train", TRANSLATOR["threads"]),
    params:
        settings=translator_settings(config, "target"),
        examples=TRANSLATOR["target_captions"],
        checkpoint_dir=lambda wc: f"{translator_dir(wc)}/{wc.translator_protocol}/n{wc.n_examples}/checkpoint",
    script:
        "../workflow_scripts/translator_train.py"


rule translator_curve:
    """The poster's Figure 3: R@1/5/10 text→image (first row) and image→text (second row)
    against the number of target examples, one line per protocol; the TSV holds the numbers."""
    input:
        evals=expand(
            f"{TRANSLATOR_DIR}/{{protocol}}/n{{n}}/eval.tsv",
            dataset=TRANSLATOR["dataset"],
            src=TRANSLATOR["source"],
            tgt=TRANSLATOR["target"],
            protocol=TRANSLATOR["protocols"],
            n=sorted(TRANSLATOR["examples"]),
        ),
        align=expand(
            f"{TRANSLATOR_DIR}/align/align.json",
            dataset=TRANSLATOR["dataset"],
            src=TRANSLATOR["source"],
            tgt=TRANSLATOR["target"],
        ),
    output:
        png=report(f"{R}/translator_curve.png", category="Figures", caption="../report/translator_curve.rst"),
        tsv=f"{R}/translator_curve.tsv",
    log:
        "logs/report_translator_curve.log",
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        caption=TRANSLATOR["caption"],
        source=TRANSLATOR["source"],
        target=TRANSLATOR["target"],
        image_branch=TRANSLATOR["image_branch"],
    script:
        "../workflow_scripts/make_translator_curve.py"
