"""Rule mlmme_train: one MLMME / VSE run → model.pt (best epoch), epochs.tsv, params.json, and its
test retrieval eval.tsv (long form)."""

from pathlib import Path

import numpy as np

from polyvse.data.tables import read_captions
from polyvse.evaluate.mlmme import evaluate_mlmme
from polyvse.io import save_torch, write_json, write_tsv
from polyvse.logs import job_log
from polyvse.text.vocab import read_counts
from polyvse.train.loop import resolve_device
from polyvse.train.mlmme import load_mlmme, train_mlmme

with job_log(snakemake.log[0], "mlmme_train") as log:
    vocab_counts = {Path(p).stem: read_counts(p) for p in snakemake.input.vocab}
    ids = Path(snakemake.input.ids).read_text(encoding="utf-8").split()
    captions, features = read_captions(snakemake.input.captions), np.load(snakemake.input.features)
    trained = train_mlmme(
        captions,
        features,
        ids,
        vocab_counts,
        snakemake.params.settings,
        Path(snakemake.params.checkpoint_dir),
        threads=snakemake.threads,
    )
    write_tsv(trained.fit.log, snakemake.output.epochs, float_format="%.5g")
    write_json({"run": snakemake.wildcards.mlmme_run, **trained.parameter_summary()}, snakemake.output.params)
    saved = trained.saved()
    save_torch(saved, snakemake.output.model)
    # sentence→image, image→sentence per language and sentence→sentence between its languages on
    # the test split, from the model as model.pt holds it (docs/architecture.md, "A job is worth
    # its start-up")
    model, vocab = load_mlmme(saved)
    model.to(resolve_device(snakemake.params.settings["training"]["device"]))
    table = evaluate_mlmme(model, vocab, captions, features, ids, saved["langs"], saved["max_len"])
    write_tsv(table, snakemake.output.evaluation, float_format="%.2f")
    log.info("\n%s", table.to_string(index=False))
