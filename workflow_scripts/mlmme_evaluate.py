"""Rule mlmme_evaluate: a trained MLMME / VSE run → its test retrieval (long-form TSV)."""

from pathlib import Path

import numpy as np
import torch

from polyvse.data.tables import read_captions
from polyvse.evaluate.mlmme import evaluate_mlmme
from polyvse.io import load_torch, write_tsv
from polyvse.logs import job_log
from polyvse.train.loop import resolve_device
from polyvse.train.mlmme import load_mlmme

with job_log(snakemake.log[0], "mlmme_evaluate") as log:
    torch.set_num_threads(snakemake.threads)
    saved = load_torch(snakemake.input.model)
    model, vocab = load_mlmme(saved)
    model.to(resolve_device(snakemake.params.device))
    ids = Path(snakemake.input.ids).read_text(encoding="utf-8").split()
    table = evaluate_mlmme(
        model,
        vocab,
        read_captions(snakemake.input.captions),
        np.load(snakemake.input.features),
        ids,
        saved["langs"],
        saved["max_len"],
    )
    write_tsv(table, snakemake.output[0], float_format="%.2f")
    log.info("\n%s", table.to_string(index=False))
