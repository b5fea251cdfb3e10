"""Rule train: one model variant → model.pt (best epoch), epochs.tsv, params.json."""

from pathlib import Path

import numpy as np

from polyvse.data.tables import read_captions
from polyvse.io import save_torch, write_json, write_tsv
from polyvse.logs import job_log
from polyvse.text.vocab import read_counts
from polyvse.train.run import train_variant

with job_log(snakemake.log[0], "train") as log:
    settings = snakemake.params.settings
    vocab_counts = {Path(p).stem: read_counts(p) for p in snakemake.input.vocab}
    ids = Path(snakemake.input.ids).read_text(encoding="utf-8").split()
    trained = train_variant(read_captions(snakemake.input.captions), np.load(snakemake.input.features), ids,
                            vocab_counts, settings, Path(snakemake.params.checkpoint_dir),
                            threads=snakemake.threads)
    write_tsv(trained.fit.log, snakemake.output.epochs, float_format="%.5g")
    write_json({"variant": snakemake.wildcards.variant, **trained.parameter_summary()}, snakemake.output.params)
    save_torch(trained.saved(), snakemake.output.model)
