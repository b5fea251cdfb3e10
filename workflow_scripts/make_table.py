"""Rule table: per-variant evaluations → a paper table (TSV + Markdown)."""

import json
from pathlib import Path

import pandas as pd

from polyvse.io import write_text, write_tsv
from polyvse.logs import job_log
from polyvse.report.tables import dataset_note, mule_mt_table, mule_table, smalr_table, to_markdown
from polyvse.translate.quality import mt_footnote, read_mt_quality

with job_log(snakemake.log[0], "table") as log:
    rep, datasets = snakemake.params.report, snakemake.params.datasets
    evals = {
        tuple(key): pd.read_csv(p, sep="\t", keep_default_na=False)
        for key, p in zip(snakemake.params.evaluations, snakemake.input.evals)
    }
    params = {v: json.loads(Path(p).read_text()) for v, p in zip(snakemake.params.variants, snakemake.input.params)}
    if rep["layout"] == "mule_mt":
        columns = {ds: datasets[ds]["human_langs"] for ds in rep["datasets"]}
        table, translated = mule_mt_table(rep["rows"], evals, params, columns), []
    elif rep["layout"] == "mule":
        table, translated = mule_table(rep["rows"], evals, params, datasets[rep["dataset"]]["human_langs"]), []
    else:
        ds = datasets[rep["dataset"]]
        table, translated = smalr_table(rep["rows"], evals, params, ds["human_langs"], ds["langs"])
    notes = [dataset_note(name, ds) for name, ds in datasets.items()] + list(rep.get("notes", []))
    if snakemake.params.mt_datasets:  # rows trained or tested on MT: say how good the MT was
        notes.append(
            mt_footnote(
                {
                    ds: read_mt_quality(p)
                    for ds, p in zip(snakemake.params.mt_datasets, snakemake.input.mt_quality, strict=True)
                }
            )
        )
    write_tsv(table, snakemake.output.tsv, na_rep="", float_format="%.1f")
    write_text(to_markdown(table, rep["caption"] or snakemake.wildcards.report, translated, notes), snakemake.output.md)
    log.info("\n%s", table.to_string(index=False))
