"""Rule mlmme_table: every run's evaluation → MLMME Table 1 (TSV + Markdown)."""

import json
from pathlib import Path

import pandas as pd

from polyvse.io import write_text, write_tsv
from polyvse.logs import job_log
from polyvse.report.mlmme import mlmme_markdown, mlmme_table
from polyvse.report.tables import format_params

with job_log(snakemake.log[0], "mlmme_table") as log:
    runs, langs, ds = snakemake.params.runs, snakemake.params.langs, snakemake.params.dataset
    evals = {run: pd.read_csv(p, sep="\t", keep_default_na=False) for run, p in zip(runs, snakemake.input.evals)}
    params = {run: json.loads(Path(p).read_text()) for run, p in zip(runs, snakemake.input.params)}
    table = mlmme_table(evals, runs, langs)
    sizes = ", ".join(f"{run} {format_params(params[run]['params_train'])}" for run in runs)
    notes = [
        f"Dataset `{ds['name']}` ({ds.get('adapter', '?')}): human test captions, every caption a query. "
        f"mrank = median rank. Parameters (train time): {sizes}."
    ]
    write_tsv(table, snakemake.output.tsv, na_rep="", float_format="%.1f")
    write_text(mlmme_markdown(table, runs, langs, snakemake.params.caption, notes), snakemake.output.md)
    log.info("\n%s", table.to_string(index=False))
