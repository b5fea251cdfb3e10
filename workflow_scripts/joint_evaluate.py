"""Rule joint_evaluate: a trained joint variant → retrieval between every ordered pair of its views on the test split."""

import numpy as np
import torch

from polyvse.data.tables import read_captions
from polyvse.features.image import read_ids
from polyvse.io import load_torch, write_tsv
from polyvse.logs import job_log
from polyvse.speech.evaluate import ordered_pair_retrieval
from polyvse.speech.run import load_views
from polyvse.train.joint import embed_joint_views, joint_model_from_saved, joint_views
from polyvse.train.loop import resolve_device

with job_log(snakemake.log[0], "joint_evaluate") as log:
    torch.set_num_threads(snakemake.threads)
    saved = load_torch(snakemake.input.model)
    settings, training = saved["settings"], saved["settings"]["training"]
    device = resolve_device(training["device"])
    model, vocab = joint_model_from_saved(saved)
    model.to(device)
    if model.speech_langs:
        features, speech = load_views(
            snakemake.input.utterances,
            snakemake.input.logmel,
            snakemake.input.features,
            snakemake.input.ids,
            list(model.speech_langs),
            splits=("test",),
        )
        speech = speech["test"]
    else:
        features, speech = np.load(snakemake.input.features, mmap_mode="r"), None
    index = {image_id: i for i, image_id in enumerate(read_ids(snakemake.input.ids))}
    test = joint_views(
        read_captions(snakemake.input.captions),
        "test",
        list(model.text_langs),
        vocab,
        int(settings["text"]["max_len"]),
        settings["cap_idx"],
        index,
        speech,
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
    write_tsv(table, snakemake.output[0], float_format="%.4f")
