"""Rule translator_curve: every target run's evaluation → the poster's Figure 3 (PNG) and its numbers (TSV)."""

import json
from pathlib import Path

import pandas as pd

from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.report.translator_curve import alignment_note, curve_table, initialisation_note, plot_curve

with job_log(snakemake.log[0], "translator_curve") as log:
    rows = [pd.read_csv(p, sep="\t").iloc[0].to_dict() for p in snakemake.input.evals]
    table = curve_table(rows)
    summary = json.loads(Path(snakemake.input.align).read_text())
    note = alignment_note(summary, snakemake.params.source, snakemake.params.target)
    init = initialisation_note(snakemake.params.image_branch, snakemake.params.source)
    log.info("%s; %s", init, note)
    plot_curve(
        table, snakemake.output.png, snakemake.params.caption, snakemake.params.target, note, initialisation=init
    )
    write_tsv(table, snakemake.output.tsv, float_format="%.2f")
    log.info("\n%s", table.to_string(index=False))
