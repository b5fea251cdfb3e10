"""Rule speech_train: one grounded-speech variant → model.pt (best epoch), epochs.tsv, params.json."""

from pathlib import Path

from polyvse.io import save_torch, write_json, write_tsv
from polyvse.logs import job_log
from polyvse.speech.run import load_views
from polyvse.speech.train import train_speech

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
    save_torch(trained.saved(), snakemake.output.model)
