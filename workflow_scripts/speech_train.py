"""Rule speech_train: one grounded-speech variant → model.pt (best epoch), epochs.tsv, params.json,
and eval.tsv: retrieval between every view pair on the test split."""

from pathlib import Path

import torch

from polyvse.io import save_torch, write_json, write_tsv
from polyvse.logs import job_log
from polyvse.speech.evaluate import evaluate_views
from polyvse.speech.run import load_views
from polyvse.speech.train import model_from_saved, train_speech
from polyvse.train.loop import resolve_device

with job_log(snakemake.log[0], "speech_train") as log:
    settings = snakemake.params.settings
    features, views = load_views(
        snakemake.input.utterances,
        snakemake.input.logmel,
        snakemake.input.features,
        snakemake.input.ids,
        settings["langs"],
    )
    trained = train_speech(
        views["train"],
        views["val"],
        features,
        settings,
        Path(snakemake.params.checkpoint_dir),
        threads=snakemake.threads,
    )
    write_tsv(trained.fit.log, snakemake.output.epochs, float_format="%.5g")
    write_json({"variant": snakemake.wildcards.variant, **trained.summary()}, snakemake.output.params)
    saved = trained.saved()
    save_torch(saved, snakemake.output.model)
    # Test retrieval (thesis §3.1.3) on the model as model.pt holds it, in this job: one of its own
    # would import torch and read the views again (docs/architecture.md, "A job is worth its start-up").
    training = saved["settings"]["training"]
    device = resolve_device(training["device"])
    model = model_from_saved(saved).to(device)
    _, test = load_views(
        snakemake.input.utterances,
        snakemake.input.logmel,
        snakemake.input.features,
        snakemake.input.ids,
        list(model.langs),
        splits=("test",),
    )
    table = evaluate_views(
        model,
        test["test"],
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
    write_tsv(table, snakemake.output.evaluation, float_format="%.4f")
