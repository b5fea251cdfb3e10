"""Rule table: per-variant evaluations → a paper table (TSV + Markdown)."""

import json
from pathlib import Path

import pandas as pd

from polyvse.data.tables import read_captions
from polyvse.io import write_text, write_tsv
from polyvse.logs import job_log
from polyvse.report.tables import human_languages, smalr_table, to_markdown

with job_log(snakemake.log[0], "table") as log:
    rep, variants = snakemake.params.report, snakemake.params.variants
    evals = {key: pd.read_csv(p, sep="\t", keep_default_na=False)
             for key, p in zip(snakemake.params.evaluations, snakemake.input.evals)}
    params = {v: json.loads(Path(p).read_text()) for v, p in zip(variants, snakemake.input.params)}
    human = human_languages(read_captions(snakemake.input.captions))
    table, translated = smalr_table(rep["rows"], evals, params, human)
    ds = snakemake.params.dataset
    notes = [f"Dataset `{rep['dataset']}` (adapter {ds['adapter']}"
             + (f", synthetic profile {ds['synthetic']['profile']}" if ds["adapter"] == "synthetic" else "")
             + f"); human-annotated languages (HA): {', '.join(human)}. "
             "mR = mean of R@1/5/10 in both directions; parameters: train-time and test-time."]
    write_tsv(table, snakemake.output.tsv, na_rep="", float_format="%.1f")
    write_text(to_markdown(table, rep["caption"] or snakemake.wildcards.report, translated, notes), snakemake.output.md)
    log.info("\n%s", table.to_string(index=False))
