"""Rule data_stats: a dataset's human captions → vocabulary statistics per language (polyvse.data.stats)."""

from polyvse.data.stats import dataset_stats
from polyvse.data.tables import read_captions
from polyvse.io import write_tsv
from polyvse.logs import job_log

with job_log(snakemake.log[0], "data_stats") as log:
    path = snakemake.input[0]
    table = dataset_stats(read_captions(path), snakemake.wildcards.dataset, snakemake.params.langs, where=path)
    log.info("\n%s", table.to_string(index=False))
    write_tsv(table, snakemake.output[0], na_rep="")
