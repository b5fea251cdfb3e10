"""Rule attribute_words: a synthetic dataset's FastText tables → how far apart they put each language's
colour words and shape words (polyvse.text.attribute_words)."""

import numpy as np
import pandas as pd

from polyvse.data.synthetic.languages import ATTRIBUTES, attribute_tokens
from polyvse.errors import InputError
from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.text.attribute_words import ATTRIBUTE_COLUMNS, attribute_separation
from polyvse.text.vocab import read_counts

with job_log(snakemake.log[0], "attribute_words") as log:
    rows = []
    for lang, vectors, vocab in zip(snakemake.params.langs, snakemake.input.vectors, snakemake.input.vocab):
        counts = read_counts(vocab)
        table, tokens = np.load(vectors, allow_pickle=False), list(counts)
        if table.ndim != 2 or len(table) != len(tokens):
            raise InputError(vectors, f"{table.shape} vectors for a vocabulary of {len(tokens)} tokens ({vocab})")
        for attribute in ATTRIBUTES:
            words = attribute_tokens(lang, attribute, snakemake.params.segmenter)
            separation = attribute_separation(table, tokens, words, counts)
            rows.append({"dataset": snakemake.wildcards.dataset, "lang": lang, "attribute": attribute, **separation})
    out = pd.DataFrame(rows, columns=list(ATTRIBUTE_COLUMNS))
    log.info("\n%s", out.to_string(index=False))
    write_tsv(out, snakemake.output[0], na_rep="")
