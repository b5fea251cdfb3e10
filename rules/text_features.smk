rule vocab:
    """Token counts of one language's training captions (no test word leaks in),
    from the human captions or from human + machine-translated ones."""
    input:
        captions=lambda wc: captions_file(wc.dataset, wc.origin),
    output:
        f"{R}/{{dataset}}/vocab/{{origin}}/{{lang}}.tsv",
    log:
        "logs/{dataset}/vocab_{origin}_{lang}.log",
    wildcard_constraints:
        origin="human|augmented",
    priority: PRIORITY["data"]
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        segmenter=config["text"]["segmenter"],
    script:
        "../workflow_scripts/build_vocab.py"


rule corpus:
    """Synthetic datasets: one language's text-only corpus, the captions' grammar and
    lexicon on unrendered scenes (polyvse.data.synthetic.corpus), the stand-in for the
    Wikipedia text of the papers' FastText vectors (SMALR §3.1/§4, MULE §Experiments)."""
    output:
        f"{R}/{{dataset}}/corpus/{{lang}}.txt",
    log:
        "logs/{dataset}/corpus_{lang}.log",
    benchmark:
        "benchmarks/corpus/{dataset}/{lang}.tsv"
    priority: PRIORITY["data"]
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc: 1000 + config["datasets"][wc.dataset]["synthetic"]["corpus_sentences"] // 1000,
        runtime=lambda wc: 10 + config["datasets"][wc.dataset]["synthetic"]["corpus_sentences"] // 100_000,
    params:  # only what the corpus depends on: other generator settings do not rerun it
        sentences=lambda wc: config["datasets"][wc.dataset]["synthetic"]["corpus_sentences"],
        seed=lambda wc: config["datasets"][wc.dataset]["synthetic"]["seed"],
        lexicon=lambda wc: config["datasets"][wc.dataset]["synthetic"]["lexicon"],
        # 0 for the Latin-script languages: a share set for the others does not rerun theirs
        english_share=lambda wc: english_share_for(
            wc.lang, config["datasets"][wc.dataset]["synthetic"]["corpus_english_share"]
        ),
        typicality=lambda wc: config["datasets"][wc.dataset]["synthetic"]["corpus_typicality"],
    script:
        "../workflow_scripts/make_corpus.py"


rule fasttext:
    """FastText vectors of one language's vocabulary, row i for the vocabulary's
    token i (SMALR §3.1, MULE): a skip-gram model trained on the language's
    text-only corpus (synthetic datasets, rule corpus) or else its training
    captions, or the user's pretrained cc.{lang}.300.bin / .vec."""
    input:
        unpack(fasttext_inputs),
    output:
        f"{R}/{{dataset}}/fasttext/{{origin}}/{{lang}}.npy",
    log:
        "logs/{dataset}/fasttext_{origin}_{lang}.log",
    benchmark:
        "benchmarks/fasttext/{dataset}/{origin}/{lang}.tsv"
    wildcard_constraints:
        origin="human|augmented",
    priority: PRIORITY["data"]
    conda:
        "../envs/polyvse.yaml"
    threads: config["fasttext"]["threads"]
    resources:
        mem_mb=fasttext_mem_mb,
        runtime=30,
    params:
        settings=config["fasttext"],
        segmenter=config["text"]["segmenter"],
    script:
        "../workflow_scripts/fasttext_vectors.py"


PCA_DIMS = pca_dims()

if PCA_DIMS:

    rule pca:
        """PCA of one language's FastText vectors to every dimension the config asks for
        (pca_dims: SMALR §3.1's 50, Figure 3's sizes, HEM's specific_dim); the .npz files keep
        mean and components for new words."""
        input:
            f"{R}/{{dataset}}/fasttext/{{origin}}/{{lang}}.npy",
        output:
            vectors=expand(f"{R}/{{{{dataset}}}}/fasttext/{{{{origin}}}}/{{{{lang}}}}.pca{{dim}}.npy", dim=PCA_DIMS),
            projections=expand(f"{R}/{{{{dataset}}}}/fasttext/{{{{origin}}}}/{{{{lang}}}}.pca{{dim}}.npz", dim=PCA_DIMS),
        log:
            "logs/{dataset}/pca_{origin}_{lang}.log",
        benchmark:
            "benchmarks/pca/{dataset}/{origin}_{lang}.tsv"
        wildcard_constraints:
            origin="human|augmented",
        priority: PRIORITY["data"]
        conda:
            "../envs/polyvse.yaml"
        threads: 1
        resources:
            mem_mb=1000,
            runtime=10,
        params:
            dims=PCA_DIMS,
            seed=config["seed"],
        script:
            "../workflow_scripts/pca_vectors.py"


rule attribute_words:
    """Synthetic datasets: how far apart the FastText tables the word models start from put each
    language's colour words, and its shape words (polyvse.text.attribute_words): the mean cosine of
    their pairs after centring, shown by the data statistics' report."""
    input:
        unpack(attribute_word_inputs),
    output:
        f"{R}/{{dataset}}/attribute_words.tsv",
    log:
        "logs/{dataset}/attribute_words.log",
    benchmark:
        "benchmarks/attribute_words/{dataset}.tsv"
    priority: PRIORITY["data"]
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        langs=lambda wc: list(attribute_word_tables(wc.dataset)),
        segmenter=config["text"]["segmenter"],
    script:
        "../workflow_scripts/attribute_words.py"
