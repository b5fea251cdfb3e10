"""Rule findings: the claims' rows over every seed → results/findings.tsv and findings.md."""

import json
from pathlib import Path

import pandas as pd

from polyvse.io import write_text, write_tsv
from polyvse.logs import job_log
from polyvse.report.findings import findings_markdown, findings_table


def read(path: str):
    """A .json (params) as a dict, a .tsv (an evaluation) as a table."""
    if path.endswith(".json"):
        return json.loads(Path(path).read_text())
    return pd.read_csv(path, sep="\t", keep_default_na=False)


with job_log(snakemake.log[0], "findings") as log:
    plan = snakemake.params.plan
    table = findings_table(plan, read)
    write_tsv(table, snakemake.output.tsv, na_rep="")
    write_text(findings_markdown(plan, table), snakemake.output.md)
    log.info("\n%s", table.to_string(index=False))
