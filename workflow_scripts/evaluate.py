"""Rule evaluate: a trained variant → per-language test retrieval TSV."""

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from polyvse.data.tables import read_captions
from polyvse.evaluate.run import evaluate_model
from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.models.registry import model_from_checkpoint
from polyvse.train.loop import resolve_device

with job_log(snakemake.log[0], "evaluate") as log:
    torch.set_num_threads(snakemake.threads)
    saved = torch.load(snakemake.input.model, map_location="cpu", weights_only=False)
    model, vocab = model_from_checkpoint(saved)
    model.to(resolve_device(snakemake.params.device))
    ids = Path(snakemake.input.ids).read_text(encoding="utf-8").split()
    translations = (pd.read_parquet(snakemake.input.translations)
                    if "translations" in snakemake.input.keys() else None)
    table = evaluate_model(model, vocab, read_captions(snakemake.input.captions), np.load(snakemake.input.features),
                           ids, snakemake.params.langs, saved["max_len"], translations,
                           snakemake.params.query_lang)
    write_tsv(table, snakemake.output[0], float_format="%.2f")
