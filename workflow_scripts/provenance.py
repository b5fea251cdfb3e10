"""Rule provenance: the environment and the SHA-256 of every result file, by stage."""

from pathlib import Path

from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.report.provenance import environment, provenance

with job_log(snakemake.log[0], "provenance") as log:
    record = provenance(Path(snakemake.params.results), environment())
    write_tsv(record, snakemake.output[0])
    log.info("%d files of %d stages recorded", (record["stage"] != "environment").sum(), record["stage"].nunique())
