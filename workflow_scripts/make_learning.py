"""Rule learning: every trained model's test score against chance, its best epoch and stop reason →
results/learning.tsv and learning.md, and a figure of validation curves per table."""

import json
from functools import lru_cache
from pathlib import Path

import pandas as pd

from polyvse.io import write_text, write_tsv
from polyvse.logs import job_log
from polyvse.report.learning import curve_panels, learning_markdown, learning_table, plot_curves


@lru_cache(maxsize=None)
def read(path: str):
    """A .json (params) as a dict, a .tsv (an evaluation, a per-epoch log) or .parquet (captions,
    utterances: read once, for every model of its dataset) as a table."""
    if path.endswith(".json"):
        return json.loads(Path(path).read_text())
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    return pd.read_csv(path, sep="\t", keep_default_na=False)


with job_log(snakemake.log[0], "learning") as log:
    plan = snakemake.params.plan
    table = learning_table(plan, read)
    write_tsv(table, snakemake.output.tsv, na_rep="")
    write_text(learning_markdown(plan, table), snakemake.output.md)
    curves = [read(model["epochs"]) for model in plan["models"]]
    for name, path in zip(snakemake.params.tables, snakemake.output.curves):
        plot_curves(curve_panels(plan, table, curves, name), f"{name}: {plan['tables'][name]}", path)
    log.info("\n%s", table.to_string(index=False))
