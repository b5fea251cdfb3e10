"""Rule query_translations: every human caption of a split (test or val) in every other language."""

from polyvse.data.tables import read_captions
from polyvse.io import write_parquet
from polyvse.logs import job_log
from polyvse.translate.stage import query_translations

with job_log(snakemake.log[0], "query_translations") as log:
    table = query_translations(
        read_captions(snakemake.input.captions),
        snakemake.params.langs,
        snakemake.params.settings,
        snakemake.params.dictionaries,
        split=snakemake.wildcards.split,
        references=snakemake.input.references if "references" in snakemake.input.keys() else None,
    )
    log.info("%d translated %s queries", len(table), snakemake.wildcards.split)
    write_parquet(table, snakemake.output[0])
