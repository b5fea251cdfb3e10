"""Rule translator_align: word vectors + bilingual dictionary → the Translator matrix M
(SVD, then RCSLS), its RCSLS steps and its held-out dictionary-induction precision@1."""

import numpy as np

from polyvse.align.dictionaries import bilingual_pairs
from polyvse.align.translator_matrix import fit_translator_matrix
from polyvse.io import write_json, write_npy, write_tsv
from polyvse.logs import job_log
from polyvse.text.vocab import read_counts

with job_log(snakemake.log[0], "translator_align") as log:
    src, tgt, align = snakemake.params.source, snakemake.params.target, snakemake.params.align
    pairs, how = bilingual_pairs(snakemake.input.dictionaries, tgt, src, snakemake.params.pivots)
    log.info("%s→%s dictionary: %d pairs from %s", tgt, src, len(pairs), how)
    result = fit_translator_matrix(
        np.load(snakemake.input.target_vectors),
        list(read_counts(snakemake.input.target_vocab)),
        np.load(snakemake.input.source_vectors),
        list(read_counts(snakemake.input.source_vocab)),
        pairs,
        k=align["k"],
        n_iter=align["n_iter"],
        lr=align["lr"],
        constraint=align["constraint"],
        heldout=align["heldout"],
        seed=snakemake.params.seed,
        refit_all=align["refit_all"],
    )
    summary = {
        "target": tgt,
        "source": src,
        "dictionary": how,
        "dictionary_pairs": len(pairs),
        "matrix_shape": list(result.matrix.shape),
        **result.summary(),
    }
    log.info(
        "held-out precision@1 (%d %s words): SVD %.1f%% (NN) / %.1f%% (CSLS); SVD + RCSLS %.1f%% / %.1f%%",
        summary["heldout_queries"],
        tgt,
        summary["p1_nn_svd"],
        summary["p1_csls_svd"],
        summary["p1_nn_rcsls"],
        summary["p1_csls_rcsls"],
    )
    log.info("summary: %s", summary)
    write_tsv(result.rcsls_log, snakemake.output.steps, float_format="%.6g")
    write_json(summary, snakemake.output.summary)
    write_npy(result.matrix.astype(np.float32), snakemake.output.matrix)
