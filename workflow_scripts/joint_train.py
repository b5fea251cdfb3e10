"""Rule joint_train: one joint variant → model.pt (best epoch), epochs.tsv, params.json, and eval.tsv:
retrieval between every ordered pair of its views on the test split."""

from pathlib import Path

import numpy as np
import torch

from polyvse.data.tables import read_captions
from polyvse.features.image import read_ids
from polyvse.io import save_torch, write_json, write_tsv
from polyvse.logs import job_log
from polyvse.speech.evaluate import ordered_pair_retrieval
from polyvse.speech.run import load_views
from polyvse.text.joint_vectors import joint_vectors
from polyvse.text.vocab import Vocabulary, read_counts
from polyvse.train.joint import embed_joint_views, joint_model_from_saved, joint_views, train_joint
from polyvse.train.loop import resolve_device

with job_log(snakemake.log[0], "joint_train") as log:
    settings = snakemake.params.settings
    text_langs, speech_langs, text = settings["text_langs"], settings["speech_langs"], settings["text"]
    given = snakemake.input.keys()
    if speech_langs:
        features, speech = load_views(
            snakemake.input.utterances,
            snakemake.input.logmel,
            snakemake.input.features,
            snakemake.input.ids,
            speech_langs,
        )
    else:
        features, speech = np.load(snakemake.input.features, mmap_mode="r"), {"train": None, "val": None}
    vocab, vectors = None, None
    if text_langs:
        counts = {Path(p).stem: read_counts(p) for p in snakemake.input.vocab}
        vocab = Vocabulary.from_counts(counts, int(text["min_count"]), text["segmenter"])
        if "fasttext" in given:
            tokens = {Path(p).stem: list(read_counts(p)) for p in snakemake.input.fasttext_vocab}
            tables = {Path(p).name.split(".")[0]: np.load(p) for p in snakemake.input.fasttext}
            vectors = torch.from_numpy(joint_vectors(vocab, tokens, tables))
    captions = read_captions(snakemake.input.captions)
    index = {image_id: i for i, image_id in enumerate(read_ids(snakemake.input.ids))}
    views = {
        split: joint_views(
            captions, split, text_langs, vocab, int(text["max_len"]), settings["cap_idx"], index, speech[split]
        )
        for split in ("train", "val")
    }
    trained = train_joint(
        views["train"],
        views["val"],
        features,
        vocab,
        vectors,
        settings,
        Path(snakemake.params.checkpoint_dir),
        threads=snakemake.threads,
    )
    write_tsv(trained.fit.log, snakemake.output.epochs, float_format="%.5g")
    write_json({"variant": snakemake.wildcards.variant, **trained.summary()}, snakemake.output.params)
    saved = trained.saved()
    save_torch(saved, snakemake.output.model)
    # Test retrieval between every ordered pair of views, on the model as model.pt holds it, in this
    # job: one of its own would import torch and read the views again (docs/architecture.md, "A job
    # is worth its start-up").
    training = saved["settings"]["training"]
    device = resolve_device(training["device"])
    model, vocab = joint_model_from_saved(saved)
    model.to(device)
    if model.speech_langs:
        features, test_speech = load_views(
            snakemake.input.utterances,
            snakemake.input.logmel,
            snakemake.input.features,
            snakemake.input.ids,
            list(model.speech_langs),
            splits=("test",),
        )
        test_speech = test_speech["test"]
    else:
        test_speech = None
    test = joint_views(
        captions,
        "test",
        list(model.text_langs),
        vocab,
        int(saved["settings"]["text"]["max_len"]),
        saved["settings"]["cap_idx"],
        index,
        test_speech,
    )
    feats = torch.from_numpy(np.asarray(features, dtype=np.float32))
    embeddings = embed_joint_views(model, test, feats, training["eval_batch_size"], device)
    table = ordered_pair_retrieval(embeddings, model.view_names, saved["normalize"])
    table["best_epoch"] = int(saved["best_epoch"])
    log.info(
        "test retrieval of %d datapoints (best epoch %d):\n%s",
        len(test),
        saved["best_epoch"],
        table[["query", "target", "r1", "r10", "mr"]].to_string(index=False),
    )
    write_tsv(table, snakemake.output.evaluation, float_format="%.4f")
