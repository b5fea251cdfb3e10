"""Rule vocab: token counts of one language's training captions."""

from polyvse.data.tables import read_captions
from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.text.vocab import count_tokens, counts_frame

with job_log(snakemake.log[0], "vocab") as log:
    lang = snakemake.wildcards.lang
    captions = read_captions(snakemake.input.captions)
    train = captions[(captions["split"] == "train") & (captions["lang"] == lang)]
    if train.empty:
        raise ValueError(f"{snakemake.input.captions}: no training captions in language {lang!r}")
    vocab = counts_frame(count_tokens(train["text"], lang, snakemake.params.segmenter))
    log.info("%s: %d training sentences, %d distinct tokens", lang, len(train), len(vocab))
    write_tsv(vocab, snakemake.output[0])
