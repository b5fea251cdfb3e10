"""Rules mlmme_train and mlmme_train_seeds: MLMME / VSE runs → model.pt (best epoch), epochs.tsv,
params.json, and their test retrieval eval.tsv (long form). mlmme_train trains one run;
mlmme_train_seeds a run and its seed replicas, which read the same data: it is read once, and each
training is the one mlmme_train would run."""

from pathlib import Path

import numpy as np

from polyvse.data.tables import read_captions
from polyvse.evaluate.mlmme import evaluate_mlmme
from polyvse.io import save_torch, write_json, write_tsv
from polyvse.logs import job_log
from polyvse.text.vocab import read_counts
from polyvse.train.groups import per_training
from polyvse.train.loop import resolve_device
from polyvse.models.trained import load_model
from polyvse.train.mlmme import train_mlmme
from polyvse.train.checkpoints import claim_for_inputs


with job_log(snakemake.log[0], snakemake.rule) as log:
    vocab_counts = {Path(p).stem: read_counts(p) for p in snakemake.input.vocab}
    ids = Path(snakemake.input.ids).read_text(encoding="utf-8").split()
    captions, features = read_captions(snakemake.input.captions), np.load(snakemake.input.features)
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
        run = Path(model_file).parent.name
        trained = train_mlmme(
            captions,
            features,
            ids,
            vocab_counts,
            settings,
            Path(checkpoint_dir),
            threads=snakemake.threads,
        )
        write_tsv(trained.fit.log, epochs_file, float_format="%.5g")
        write_json({"run": run, **trained.summary()}, params_file)
        saved = trained.saved()
        save_torch(saved, model_file)
        # sentence→image, image→sentence per language and sentence→sentence between its languages on
        # the test split, from the model as model.pt holds it (docs/architecture.md, "A job is worth
        # its start-up")
        model, vocab = load_model(saved)
        model.to(resolve_device(settings["training"]["device"]))
        table = evaluate_mlmme(model, vocab, captions, features, ids, saved["langs"], saved["max_len"])
        write_tsv(table, eval_file, float_format="%.2f")
        log.info("%s:\n%s", run, table.to_string(index=False))
