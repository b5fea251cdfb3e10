"""Rule speech_table: per-variant speech evaluations → a thesis table (TSV + Markdown)."""

import json
from pathlib import Path

import pandas as pd

from polyvse.io import write_text, write_tsv
from polyvse.logs import job_log
from polyvse.report.speech import chance_note, speech_markdown, speech_table, table_notes

with job_log(snakemake.log[0], "speech_table") as log:
    rep, langs = snakemake.params.report, snakemake.params.langs
    variants = snakemake.params.variants
    evals = {v: pd.read_csv(p, sep="\t", keep_default_na=False) for v, p in zip(variants, snakemake.input.evals)}
    params = {v: json.loads(Path(p).read_text()) for v, p in zip(variants, snakemake.input.params)}
    table = speech_table(rep["rows"], evals, params, langs)
    n_test = int(next(iter(evals.values()))["n"].iloc[0])
    notes = [
        f"Dataset {snakemake.params.dataset} ({', '.join(langs)}). " + chance_note(n_test),
        *table_notes(rep, snakemake.wildcards.speech_report),
    ]
    write_tsv(table, snakemake.output.tsv, float_format="%.2f")
    write_text(
        speech_markdown(table, langs, rep["caption"] or snakemake.wildcards.speech_report, notes), snakemake.output.md
    )
    log.info("\n%s", table.to_string(index=False))
