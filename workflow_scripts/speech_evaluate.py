"""Rule speech_evaluate: a trained variant → retrieval between every view pair on the test split."""

import torch

from polyvse.io import load_torch, write_tsv
from polyvse.logs import job_log
from polyvse.speech.evaluate import evaluate_views
from polyvse.speech.run import load_views
from polyvse.speech.train import model_from_saved
from polyvse.train.loop import resolve_device

with job_log(snakemake.log[0], "speech_evaluate") as log:
    torch.set_num_threads(snakemake.threads)
    saved = load_torch(snakemake.input.model)
    training = saved["settings"]["training"]
    device = resolve_device(training["device"])
    model = model_from_saved(saved).to(device)
    features, views = load_views(
        snakemake.input.utterances,
        snakemake.input.logmel,
        snakemake.input.features,
        snakemake.input.ids,
        list(model.langs),
        splits=("test",),
    )
    table = evaluate_views(
        model,
        views["test"],
        torch.from_numpy(features.astype("float32")),
        saved["normalize"],
        training["eval_batch_size"],
        device,
    )
    table["best_epoch"] = int(saved["best_epoch"])
    log.info(
        "test retrieval (best epoch %d):\n%s",
        saved["best_epoch"],
        table[["pair", "r1", "r5", "r10"]].to_string(index=False),
    )
    write_tsv(table, snakemake.output[0], float_format="%.4f")
