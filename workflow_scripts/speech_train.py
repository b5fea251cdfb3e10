"""Rules speech_train and speech_train_seeds: grounded-speech variants → model.pt (best epoch),
epochs.tsv, params.json, and eval.tsv: retrieval between every view pair on the test split.
Rule speech_train trains one variant; speech_train_seeds a variant and its seed replicas, which
read the same views: they are read once, and each training is the one speech_train would run."""

from pathlib import Path

import torch

from polyvse.evaluate.speech import evaluate_views
from polyvse.io import save_torch, write_json, write_tsv
from polyvse.logs import job_log
from polyvse.speech.run import load_views
from polyvse.train.groups import first_of, per_training
from polyvse.train.loop import resolve_device
from polyvse.models.trained import load_model
from polyvse.train.speech import train_speech
from polyvse.train.checkpoints import claim_for_inputs


def views_of(langs: list[str], splits: tuple[str, ...]):
    """Image features and the view sets of ``splits`` (memory-mapped stores)."""
    i = snakemake.input
    return load_views(i.utterances, i.logmel, i.features, i.ids, langs, splits=splits)


with job_log(snakemake.log[0], snakemake.rule) as log:
    features, views = views_of(first_of(snakemake.params.settings)["langs"], ("train", "val"))
    trainings = per_training(
        snakemake.params.settings,
        snakemake.params.checkpoint_dir,
        snakemake.output.epochs,
        snakemake.output.params,
        snakemake.output.model,
        snakemake.output.evaluation,
    )
    for settings, checkpoint_dir, epochs_file, params_file, model_file, eval_file in trainings:
        claim_for_inputs(checkpoint_dir, snakemake.input)  # a checkpoint of other inputs is dropped
        variant = Path(model_file).parent.name
        trained = train_speech(
            views["train"],
            views["val"],
            features,
            settings,
            Path(checkpoint_dir),
            threads=snakemake.threads,
        )
        write_tsv(trained.fit.log, epochs_file, float_format="%.5g")
        write_json({"variant": variant, **trained.summary()}, params_file)
        saved = trained.saved()
        save_torch(saved, model_file)
        # Test retrieval (thesis §3.1.3) on the model as model.pt holds it, in this job: one of its own
        # would import torch and read the views again (docs/architecture.md, "A job is worth its start-up").
        training = saved["settings"]["training"]
        device = resolve_device(training["device"])
        model = load_model(saved)[0].to(device)
        _, test = views_of(list(model.langs), ("test",))
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
            "%s: test retrieval (best epoch %d):\n%s",
            variant,
            saved["best_epoch"],
            table[["pair", "r1", "r5", "r10"]].to_string(index=False),
        )
        write_tsv(table, eval_file, float_format="%.4f")
