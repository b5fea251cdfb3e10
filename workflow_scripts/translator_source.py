"""Rule translator_source: the source-language VSE model over its word vectors → model.pt, epochs.tsv, params.json."""

from pathlib import Path

import numpy as np

from polyvse.data.tables import read_captions
from polyvse.io import save_torch, write_json, write_tsv
from polyvse.logs import job_log
from polyvse.text.vocab import read_counts
from polyvse.train.translator import train_source
from polyvse.train.checkpoints import claim_for_inputs

with job_log(snakemake.log[0], "translator_source") as log:
    ids = Path(snakemake.input.ids).read_text(encoding="utf-8").split()
    claim_for_inputs(snakemake.params.checkpoint_dir, snakemake.input)  # a checkpoint of other inputs is dropped
    trained = train_source(
        read_captions(snakemake.input.captions),
        np.load(snakemake.input.features),
        ids,
        snakemake.params.source,
        read_counts(snakemake.input.vocab),
        np.load(snakemake.input.vectors),
        snakemake.params.settings,
        Path(snakemake.params.checkpoint_dir),
        threads=snakemake.threads,
    )
    train, test = trained.model.parameter_counts()
    write_tsv(trained.fit.log, snakemake.output.epochs, float_format="%.5g")
    write_json(
        {
            "lang": snakemake.params.source,
            "params_train": int(train),
            "params_test": int(test),
            "best_epoch": int(trained.fit.best_epoch),
            "val_mR": round(float(trained.fit.best_score), 3),
        },
        snakemake.output.params,
    )
    save_torch(trained.saved(), snakemake.output.model)
