"""Rules train and train_seeds: model variants → model.pt (best epoch), epochs.tsv, params.json,
and the test split's direct evaluation eval/{variant}.direct.tsv (rule evaluate writes the other
protocols). Rule train trains one variant; train_seeds a variant and its seed replicas, which read
the same inputs: they are read once, and each training is the one rule train would run."""

from pathlib import Path

import numpy as np

from polyvse.data.tables import read_captions
from polyvse.evaluate.run import evaluate_model
from polyvse.io import load_torch, write_tsv
from polyvse.logs import job_log
from polyvse.models.trained import load_model
from polyvse.text.reduction import load_english_dictionaries
from polyvse.text.vocab import read_counts
from polyvse.train.families import FamilyInputs
from polyvse.train.groups import first_of, job_trainings, write_trained
from polyvse.train.loop import resolve_device
from polyvse.train.run import train_variant


def tables(paths) -> dict:
    """lang → array of fasttext/{origin}/{lang}.npy or {lang}.pca{d}.npy files."""
    return {Path(p).name.split(".")[0]: np.load(p) for p in paths}


with job_log(snakemake.log[0], snakemake.rule) as log:
    first = first_of(snakemake.params.settings)  # the seeds of a group differ in their seed alone
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
            load_english_dictionaries(snakemake.input.dictionaries, first["train_langs"])
            if "dictionaries" in given
            else {}
        ),
    )
    ids = Path(snakemake.input.ids).read_text(encoding="utf-8").split()
    features = np.load(snakemake.input.features)
    captions = read_captions(snakemake.input.captions)
    test_captions = read_captions(snakemake.input.test_captions)
    for training in job_trainings(snakemake.params, snakemake.output, snakemake.input):
        trained = train_variant(
            captions,
            features,
            ids,
            vocab_counts,
            training.settings,
            training.checkpoint_dir,
            threads=snakemake.threads,
            inputs=inputs,
        )
        summary = {"variant": training.name, "vocabulary_size": len(trained.vocab), **trained.summary()}
        if hasattr(trained.vocab, "n_mapped"):
            summary["dictionary_mapped_words"] = trained.vocab.n_mapped()
        saved = write_trained(trained, training, summary)
        # The test split's direct retrieval (queries in their own language), on the model as model.pt
        # holds it: in a job of its own it would import torch and read the data again, a second or two
        # for a fraction of one (docs/architecture.md, "A job is worth its start-up").
        model, vocab = load_model(saved)
        model.to(resolve_device(training.settings["training"]["device"]))
        table = evaluate_model(
            model,
            vocab,
            test_captions,
            features,
            ids,
            snakemake.params.eval_langs,
            saved["max_len"],
        )
        table["added_params"] = 0  # the direct protocol adds no parameters (CLC-C's MLP does: rule evaluate)
        write_tsv(table, training.evaluation, float_format="%.2f")
        log.info("%s: written", training.name)
