"""Rule figure: per-variant evaluations → a paper figure (PNG) and its numbers (TSV)."""

import json
from pathlib import Path

import pandas as pd

from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.report.figures import languages_frame, plot_languages, plot_vocab_reduction, vocab_reduction_frame

TITLES = {"m30k": "Multi30K-like", "coco": "MSCOCO-like", "multi30k": "Multi30K"}

with job_log(snakemake.log[0], "figure") as log:
    fig, variants = snakemake.params.figure, snakemake.params.variants
    evals = {
        tuple(key): pd.read_csv(p, sep="\t", keep_default_na=False)
        for key, p in zip(snakemake.params.sources, snakemake.input.evals)
    }
    params = {v: json.loads(Path(p).read_text()) for (v, _), p in zip(snakemake.params.sources, snakemake.input.params)}
    if fig["kind"] == "vocab_reduction":
        frame = vocab_reduction_frame(fig["points"], evals, params, fig["datasets"])
        titles = {}
        for ds, settings in snakemake.params.datasets.items():
            kind = settings["adapter"]
            name = TITLES.get(settings.get("synthetic", {}).get("profile") if kind == "synthetic" else kind, ds)
            titles[ds] = f"{name} ({ds}{', synthetic' if kind == 'synthetic' else ''})"
        plot_vocab_reduction(frame, fig["datasets"], titles, fig["caption"], snakemake.output.png)
    else:
        frame = languages_frame(fig["points"], evals, params, {v: s["train_langs"] for v, s in variants.items()})
        plot_languages(frame, fig["caption"], snakemake.output.png)
    write_tsv(frame, snakemake.output.tsv, float_format="%.2f")
    log.info("\n%s", frame.to_string(index=False))
