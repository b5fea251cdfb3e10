"""Rules speech_train and speech_train_seeds: grounded-speech variants → model.pt (best epoch),
epochs.tsv, params.json, and eval.tsv: retrieval between every view pair on the test split.
Rule speech_train trains one variant; speech_train_seeds a variant and its seed replicas, which
read the same views: they are read once, and each training is the one speech_train would run."""

import torch

from polyvse.evaluate.speech import evaluate_views
from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.speech.run import load_views
from polyvse.train.groups import first_of, job_trainings, write_trained
from polyvse.train.loop import resolve_device
from polyvse.models.trained import load_model
from polyvse.train.speech import train_speech


def views_of(langs: list[str], splits: tuple[str, ...]):
    """Image features and the view sets of ``splits`` (memory-mapped stores)."""
    i = snakemake.input
    return load_views(i.utterances, i.logmel, i.features, i.ids, langs, splits=splits)


with job_log(snakemake.log[0], snakemake.rule) as log:
    features, views = views_of(first_of(snakemake.params.settings)["langs"], ("train", "val"))
    for training in job_trainings(snakemake.params, snakemake.output, snakemake.input):
        trained = train_speech(
            views["train"],
            views["val"],
            features,
            training.settings,
            training.checkpoint_dir,
            threads=snakemake.threads,
        )
        saved = write_trained(trained, training, {"variant": training.name, **trained.summary()})
        # Test retrieval (thesis §3.1.3) on the model as model.pt holds it, in this job: one of its own
        # would import torch and read the views again (docs/architecture.md, "A job is worth its start-up").
        options = saved["settings"]["training"]
        device = resolve_device(options["device"])
        model = load_model(saved)[0].to(device)
        _, test = views_of(list(model.langs), ("test",))
        table = evaluate_views(
            model,
            test["test"],
            torch.from_numpy(features.astype("float32")),
            saved["normalize"],
            options["eval_batch_size"],
            device,
        )
        table["best_epoch"] = int(saved["best_epoch"])
        log.info(
            "%s: test retrieval (best epoch %d):\n%s",
            training.name,
            saved["best_epoch"],
            table[["pair", "r1", "r5", "r10"]].to_string(index=False),
        )
        write_tsv(table, training.evaluation, float_format="%.4f")
