"""Rule joint_train: one joint variant → model.pt (best epoch), epochs.tsv, params.json."""

from pathlib import Path

import numpy as np
import torch

from polyvse.data.tables import read_captions
from polyvse.features.image import read_ids
from polyvse.io import save_torch, write_json, write_tsv
from polyvse.logs import job_log
from polyvse.speech.run import load_views
from polyvse.text.joint_vectors import joint_vectors
from polyvse.text.vocab import Vocabulary, read_counts
from polyvse.train.joint import joint_views, train_joint

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
    save_torch(trained.saved(), snakemake.output.model)
