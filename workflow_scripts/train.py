"""Rule train: one model variant → model.pt (best epoch), epochs.tsv, params.json."""

from pathlib import Path

import numpy as np

from polyvse.data.tables import read_captions
from polyvse.io import load_torch, save_torch, write_json, write_tsv
from polyvse.logs import job_log
from polyvse.text.reduction import load_english_dictionaries
from polyvse.text.vocab import read_counts
from polyvse.train.families import FamilyInputs
from polyvse.train.run import train_variant


def tables(paths) -> dict:
    """lang → array of fasttext/{origin}/{lang}.npy or {lang}.pca{d}.npy files."""
    return {Path(p).name.split(".")[0]: np.load(p) for p in paths}


with job_log(snakemake.log[0], "train") as log:
    settings = snakemake.params.settings
    vocab_counts = {Path(p).stem: read_counts(p) for p in snakemake.input.vocab}
    given = snakemake.input.keys()
    # row order of the FastText / PCA tables: their vocabulary files (human + MT captions)
    tokens = (
        {Path(p).stem: list(read_counts(p)) for p in snakemake.input.fasttext_vocab}
        if "fasttext_vocab" in given
        else {}
    )
    inputs = FamilyInputs(
        tokens=tokens,
        fasttext=tables(snakemake.input.fasttext) if "fasttext" in given else {},
        pca=tables(snakemake.input.pca) if "pca" in given else {},
        latent=load_torch(snakemake.input.pretrain) if "pretrain" in given else None,
        dictionaries=(
            load_english_dictionaries(snakemake.input.dictionaries, settings["train_langs"])
            if "dictionaries" in given
            else {}
        ),
    )
    ids = Path(snakemake.input.ids).read_text(encoding="utf-8").split()
    trained = train_variant(
        read_captions(snakemake.input.captions),
        np.load(snakemake.input.features),
        ids,
        vocab_counts,
        settings,
        Path(snakemake.params.checkpoint_dir),
        threads=snakemake.threads,
        inputs=inputs,
    )
    write_tsv(trained.fit.log, snakemake.output.epochs, float_format="%.5g")
    summary = trained.parameter_summary()
    if hasattr(trained.vocab, "n_mapped"):
        summary["dictionary_mapped_words"] = trained.vocab.n_mapped()
    write_json(
        {"variant": snakemake.wildcards.variant, "vocabulary_size": len(trained.vocab), **summary},
        snakemake.output.params,
    )
    save_torch(trained.saved(), snakemake.output.model)
