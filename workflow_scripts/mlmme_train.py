"""Rules mlmme_train and mlmme_train_seeds: MLMME / VSE runs → model.pt (best epoch), epochs.tsv,
params.json, and their test retrieval eval.tsv (long form). mlmme_train trains one run;
mlmme_train_seeds a run and its seed replicas, which read the same data: it is read once, and each
training is the one mlmme_train would run."""

from pathlib import Path

import numpy as np

from polyvse.data.tables import read_captions
from polyvse.evaluate.mlmme import evaluate_mlmme
from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.text.vocab import read_counts
from polyvse.train.groups import job_trainings, write_trained
from polyvse.train.loop import resolve_device
from polyvse.models.trained import load_model
from polyvse.train.mlmme import train_mlmme


with job_log(snakemake.log[0], snakemake.rule) as log:
    vocab_counts = {Path(p).stem: read_counts(p) for p in snakemake.input.vocab}
    ids = Path(snakemake.input.ids).read_text(encoding="utf-8").split()
    captions, features = read_captions(snakemake.input.captions), np.load(snakemake.input.features)
    for training in job_trainings(snakemake.params, snakemake.output, snakemake.input):
        trained = train_mlmme(
            captions,
            features,
            ids,
            vocab_counts,
            training.settings,
            training.checkpoint_dir,
            threads=snakemake.threads,
        )
        saved = write_trained(trained, training, {"run": training.name, **trained.summary()})
        # sentence→image, image→sentence per language and sentence→sentence between its languages on
        # the test split, from the model as model.pt holds it (docs/architecture.md, "A job is worth
        # its start-up")
        model, vocab = load_model(saved)
        model.to(resolve_device(training.settings["training"]["device"]))
        table = evaluate_mlmme(model, vocab, captions, features, ids, saved["langs"], saved["max_len"])
        write_tsv(table, training.evaluation, float_format="%.2f")
        log.info("%s:\n%s", training.name, table.to_string(index=False))
