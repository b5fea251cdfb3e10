"""Rule pretrain: captions + FastText → the latent vocabulary's frozen assignment (pretrain/{name}.pt)
and how its words spread over the tokens (pretrain/{name}_usage.tsv)."""

from pathlib import Path

import numpy as np

from polyvse.data.tables import read_captions
from polyvse.io import save_torch, write_tsv
from polyvse.logs import job_log
from polyvse.text.vocab import read_counts
from polyvse.train.pretrain import latent_usage, pretrain_latent_vocabulary
from polyvse.train.checkpoints import claim_for_inputs

with job_log(snakemake.log[0], "pretrain") as log:
    counts = {Path(p).stem: read_counts(p) for p in snakemake.input.vocab}
    claim_for_inputs(snakemake.params.checkpoint_dir, snakemake.input)  # a checkpoint of other inputs is dropped
    # captions and FastText tables passed without a name here: the pretraining frees them
    # once it has encoded the sentences and built its word vectors
    saved = pretrain_latent_vocabulary(
        read_captions(snakemake.input.captions),
        {l: list(c) for l, c in counts.items()},
        counts,
        {Path(p).stem: np.load(p) for p in snakemake.input.fasttext},
        snakemake.params.settings,
        snakemake.params.text,
        Path(snakemake.params.checkpoint_dir),
        seed=snakemake.params.seed,
        threads=snakemake.threads,
    )
    log.info(
        "%d latent tokens kept (of %d) for %d words",
        saved["embeddings"].shape[0],
        snakemake.params.settings["n_tokens"],
        len(saved["entries"]) - 1,
    )
    usage = latent_usage(saved["entries"], saved["word_to_token"], snakemake.params.settings["n_tokens"])
    log.info("usage of the latent tokens:\n%s", usage.to_string(index=False))
    write_tsv(usage, snakemake.output.usage)
    save_torch(saved, snakemake.output.latent)
