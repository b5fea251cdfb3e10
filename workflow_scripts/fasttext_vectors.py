"""Rule fasttext: FastText vectors of one language's vocabulary, aligned with its rows."""

from polyvse.data.tables import read_captions
from polyvse.io import write_npy
from polyvse.logs import job_log
from polyvse.text.fasttext_vectors import read_corpus, vocabulary_vectors
from polyvse.text.tokenize import tokenize
from polyvse.text.vocab import read_counts, training_texts

with job_log(snakemake.log[0], "fasttext") as log:
    lang = snakemake.wildcards.lang
    settings = snakemake.params.settings
    tokens = list(read_counts(snakemake.input.vocab))
    sentences = None
    if "corpus" in snakemake.input.keys():
        sentences, source = read_corpus(snakemake.input.corpus, lang, snakemake.params.segmenter), "corpus"
    elif "captions" in snakemake.input.keys():
        texts = training_texts(read_captions(snakemake.input.captions), lang, where=snakemake.input.captions)
        sentences, source = [tokenize(t, lang, snakemake.params.segmenter) for t in texts], "training captions"
    if sentences is not None:
        log.info(
            "%s: training skip-gram FastText (dim %d, %d epochs, min_count %d, bucket %d) on %d sentences "
            "of the %s with %d thread(s)%s",
            lang,
            settings["dim"],
            settings["epochs"],
            settings["min_count"],
            settings["bucket"],
            len(sentences),
            source,
            snakemake.threads,
            "" if snakemake.threads == 1 else " (not reproducible run to run: use 1 for identical vectors)",
        )
    else:
        log.info("%s: loading pretrained vectors %s", lang, snakemake.input.pretrained)
    vectors, summary = vocabulary_vectors(tokens, lang, settings, sentences, threads=snakemake.threads)
    log.info(
        "%s: %s in %.1f s",
        lang,
        "trained" if summary["source"] == "trained" else f"loaded {summary['source']} file",
        summary["seconds"],
    )
    if summary["unknown"]:
        log.warning(
            "%s: %d of %d vocabulary words are not in the FastText model's vocabulary and get %s, e.g. %s",
            lang,
            summary["unknown"],
            summary["words"],
            summary["unknown_filled_with"],
            ", ".join(summary["unknown_examples"]),
        )
    log.info("summary: %s", summary)
    write_npy(vectors, snakemake.output[0])
