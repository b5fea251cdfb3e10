"""Rule corpus: a synthetic language's text-only corpus, one sentence a line (FastText's training text)."""

import time

from polyvse.data.synthetic.corpus import write_text_corpus
from polyvse.logs import job_log

with job_log(snakemake.log[0], "corpus") as log:
    lang, p = snakemake.wildcards.lang, snakemake.params
    t0 = time.perf_counter()
    summary = write_text_corpus(
        snakemake.output[0],
        lang,
        p.sentences,
        seed=p.seed,
        lexicon=p.lexicon,
        english_share=p.english_share,
        typicality=p.typicality,
    )
    log.info(
        "%s: %d lines, %d tokens, %d types (lexicon %s, seed %d, English lines %.3f, typicality %.2f) in %.1f s",
        lang,
        summary["lines"],
        summary["tokens"],
        summary["types"],
        p.lexicon,
        p.seed,
        p.english_share,
        p.typicality,
        time.perf_counter() - t0,
    )
