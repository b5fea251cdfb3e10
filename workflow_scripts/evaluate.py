"""Rule evaluate: a trained variant → per-language test retrieval TSV (direct,
to_en, or the CLC protocols clc_a / clc_c)."""

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from polyvse.data.tables import read_captions
from polyvse.evaluate.clc import CLC_PROTOCOLS, evaluate_clc
from polyvse.evaluate.run import evaluate_model
from polyvse.io import load_torch, write_tsv
from polyvse.logs import job_log
from polyvse.models.trained import load_model
from polyvse.train.loop import resolve_device

with job_log(snakemake.log[0], "evaluate") as log:
    torch.set_num_threads(snakemake.threads)
    protocol = snakemake.wildcards.protocol
    saved = load_torch(snakemake.input.model)
    model, vocab = load_model(saved)
    model.to(resolve_device(snakemake.params.device))
    ids = Path(snakemake.input.ids).read_text(encoding="utf-8").split()
    captions = read_captions(snakemake.input.captions)
    features = np.load(snakemake.input.features)
    translations = pd.read_parquet(snakemake.input.translations) if "translations" in snakemake.input.keys() else None
    if protocol in CLC_PROTOCOLS:
        val_translations = (
            pd.read_parquet(snakemake.input.val_translations) if "val_translations" in snakemake.input.keys() else None
        )
        table, added = evaluate_clc(
            model,
            vocab,
            captions,
            features,
            ids,
            snakemake.params.langs,
            saved["max_len"],
            translations,
            protocol,
            val_translations,
            seed=snakemake.params.seed,
        )
    else:
        table, added = (
            evaluate_model(
                model,
                vocab,
                captions,
                features,
                ids,
                snakemake.params.langs,
                saved["max_len"],
                translations,
                snakemake.params.query_lang,
            ),
            0,
        )
    # parameters the protocol adds to the model's (CLC-C's MLP), for the tables' counts
    table["added_params"] = int(added)
    write_tsv(table, snakemake.output[0], float_format="%.2f")
