"""Rule translator_train: one protocol on n target examples → model.pt, epochs.tsv and its test retrieval (eval.tsv)."""

from pathlib import Path

import numpy as np
import pandas as pd

from polyvse.data.tables import read_captions
from polyvse.io import load_torch, save_torch, write_tsv
from polyvse.logs import job_log
from polyvse.text.vocab import read_counts
from polyvse.models.trained import load_model
from polyvse.train.translator import evaluate_target, train_target
from polyvse.train.checkpoints import claim_for_inputs

with job_log(snakemake.log[0], "translator_train") as log:
    wc, inp = snakemake.wildcards, snakemake.input
    protocol, n = wc.translator_protocol, int(wc.n_examples)
    source = load_model(load_torch(inp.source))[0] if "source" in inp.keys() else None
    matrix = np.load(inp.matrix) if "matrix" in inp.keys() else None
    captions, features = read_captions(inp.captions), np.load(inp.features)
    ids = Path(inp.ids).read_text(encoding="utf-8").split()
    claim_for_inputs(snakemake.params.checkpoint_dir, snakemake.input)  # a checkpoint of other inputs is dropped
    trained = train_target(
        protocol,
        n,
        captions,
        features,
        ids,
        snakemake.params.target,
        read_counts(inp.vocab),
        np.load(inp.vectors),
        snakemake.params.settings,
        Path(snakemake.params.checkpoint_dir),
        source=source,
        matrix=matrix,
        examples=snakemake.params.examples,
        threads=snakemake.threads,
    )
    result = evaluate_target(
        trained.model,
        trained.vocab,
        captions,
        features,
        ids,
        snakemake.params.target,
        snakemake.params.settings["text"]["max_len"],
    )
    train, test = trained.model.parameter_counts()
    row = {
        "protocol": protocol,
        "n_examples": n,
        "lang": snakemake.params.target,
        **result,
        "best_epoch": int(trained.fit.best_epoch),
        "val_mR": float(trained.fit.best_score),
        "params_train": int(train),
        "params_test": int(test),
    }
    log.info(
        "%s, %d %s examples: test mR %.1f (R@1 text→image %.1f, image→text %.1f)",
        protocol,
        n,
        snakemake.params.target,
        row["mR"],
        row["r1_t2i"],
        row["r1_i2t"],
    )
    write_tsv(trained.fit.log, snakemake.output.epochs, float_format="%.5g")
    write_tsv(pd.DataFrame([row]), snakemake.output.eval, float_format="%.2f")
    save_torch(trained.saved(), snakemake.output.model)
