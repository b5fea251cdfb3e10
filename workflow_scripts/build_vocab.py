"""Rule vocab: token counts of one language's training captions."""

from polyvse.data.tables import read_captions
from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.text.vocab import counts_frame, training_counts

with job_log(snakemake.log[0], "vocab") as log:
    lang = snakemake.wildcards.lang
    captions = read_captions(snakemake.input.captions)
    counts = training_counts(captions, lang, snakemake.params.segmenter, where=snakemake.input.captions)
    vocab = counts_frame(counts)
    log.info("%s: %d training tokens, %d distinct", lang, sum(counts.values()), len(vocab))
    write_tsv(vocab, snakemake.output[0])
