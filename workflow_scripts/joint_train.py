"""Rules joint_train and joint_train_seeds: joint variants → model.pt (best epoch), epochs.tsv,
params.json, and eval.tsv: retrieval between every ordered pair of its views on the test split.
joint_train trains one variant; joint_train_seeds a variant and its seed replicas, which read the
same views: they are read once, and each training is the one joint_train would run."""

from pathlib import Path

import numpy as np
import torch

from polyvse.data.tables import read_captions
from polyvse.evaluate.speech import ordered_pair_retrieval
from polyvse.features.image import read_ids
from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.speech.run import load_views
from polyvse.text.joint_vectors import joint_vectors
from polyvse.text.vocab import Vocabulary, read_counts
from polyvse.train.groups import first_of, job_trainings, write_trained
from polyvse.models.trained import load_model
from polyvse.train.joint import embed_joint_views, joint_views, train_joint
from polyvse.train.loop import resolve_device


with job_log(snakemake.log[0], snakemake.rule) as log:
    settings = first_of(snakemake.params.settings)  # the seeds of a group differ in their seed alone
    text_langs, speech_langs, text = settings["text_langs"], settings["speech_langs"], settings["text"]
    given = snakemake.input.keys()
    splits = ("train", "val", "test")
    if speech_langs:
        features, speech = load_views(
            snakemake.input.utterances,
            snakemake.input.logmel,
            snakemake.input.features,
            snakemake.input.ids,
            speech_langs,
            splits=splits,
        )
    else:
        features, speech = np.load(snakemake.input.features, mmap_mode="r"), dict.fromkeys(splits)
    vocab, vectors = None, None
    if text_langs:
        counts = {Path(p).stem: read_counts(p) for p in snakemake.input.vocab}
        vocab = Vocabulary.from_counts(counts, int(text["min_count"]), text["segmenter"])
        if "fasttext" in given:
            tokens = {Path(p).stem: list(read_counts(p)) for p in snakemake.input.fasttext_vocab}
            tables = {Path(p).name.split(".")[0]: np.load(p) for p in snakemake.input.fasttext}
            vectors = torch.from_numpy(joint_vectors(vocab, tokens, tables))  # copied into each model
    captions = read_captions(snakemake.input.captions)
    index = {image_id: i for i, image_id in enumerate(read_ids(snakemake.input.ids))}
    views = {
        split: joint_views(
            captions, split, text_langs, vocab, int(text["max_len"]), settings["cap_idx"], index, speech[split]
        )
        for split in splits
    }
    feats = torch.from_numpy(np.asarray(features, dtype=np.float32))
    for training in job_trainings(snakemake.params, snakemake.output, snakemake.input):
        trained = train_joint(
            views["train"],
            views["val"],
            features,
            vocab,
            vectors,
            training.settings,
            training.checkpoint_dir,
            threads=snakemake.threads,
        )
        saved = write_trained(trained, training, {"variant": training.name, **trained.summary()})
        # Test retrieval between every ordered pair of views, on the model as model.pt holds it, in this
        # job: one of its own would import torch and read the views again (docs/architecture.md, "A job
        # is worth its start-up").
        options = saved["settings"]["training"]
        device = resolve_device(options["device"])
        model, _ = load_model(saved)
        model.to(device)
        embeddings = embed_joint_views(model, views["test"], feats, options["eval_batch_size"], device)
        table = ordered_pair_retrieval(embeddings, model.view_names, saved["normalize"])
        table["best_epoch"] = int(saved["best_epoch"])
        log.info(
            "%s: test retrieval of %d datapoints (best epoch %d):\n%s",
            training.name,
            len(views["test"]),
            saved["best_epoch"],
            table[["query", "target", "r1", "r10", "mr"]].to_string(index=False),
        )
        write_tsv(table, training.evaluation, float_format="%.4f")
