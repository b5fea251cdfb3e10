"""Rule pretrain: captions + FastText → the latent vocabulary's frozen assignment (pretrain/{name}.pt)."""

from pathlib import Path

import numpy as np

from polyvse.data.tables import read_captions
from polyvse.io import save_torch
from polyvse.logs import job_log
from polyvse.text.vocab import read_counts
from polyvse.train.pretrain import pretrain_latent_vocabulary

with job_log(snakemake.log[0], "pretrain") as log:
    counts = {Path(p).stem: read_counts(p) for p in snakemake.input.vocab}
    fasttext = {Path(p).stem: np.load(p) for p in snakemake.input.fasttext}
    saved = pretrain_latent_vocabulary(read_captions(snakemake.input.captions), {l: list(c) for l, c in counts.items()},
                                       counts, fasttext, snakemake.params.settings, snakemake.params.text,
                                       Path(snakemake.params.checkpoint_dir), seed=snakemake.params.seed,
                                       threads=snakemake.threads)
    log.info("%d latent tokens kept (of %d) for %d words", saved["embeddings"].shape[0],
             snakemake.params.settings["n_tokens"], len(saved["entries"]) - 1)
    save_torch(saved, snakemake.output[0])
