"""Rule mlmme_train: one MLMME / VSE run → model.pt (best epoch), epochs.tsv, params.json."""

from pathlib import Path

import numpy as np

from polyvse.data.tables import read_captions
from polyvse.io import save_torch, write_json, write_tsv
from polyvse.logs import job_log
from polyvse.text.vocab import read_counts
from polyvse.train.mlmme import train_mlmme

with job_log(snakemake.log[0], "mlmme_train") as log:
    vocab_counts = {Path(p).stem: read_counts(p) for p in snakemake.input.vocab}
    ids = Path(snakemake.input.ids).read_text(encoding="utf-8").split()
    trained = train_mlmme(
        read_captions(snakemake.input.captions),
        np.load(snakemake.input.features),
        ids,
        vocab_counts,
        snakemake.params.settings,
        Path(snakemake.params.checkpoint_dir),
        threads=snakemake.threads,
    )
    write_tsv(trained.fit.log, snakemake.output.epochs, float_format="%.5g")
    write_json({"run": snakemake.wildcards.mlmme_run, **trained.parameter_summary()}, snakemake.output.params)
    save_torch(trained.saved(), snakemake.output.model)
