"""Rule mt_quality: BLEU/chrF of the configured MT against references of the same plan."""

import pandas as pd

from polyvse.data.tables import read_captions
from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.translate.stage import measure_quality

with job_log(snakemake.log[0], "mt_quality") as log:
    refs = pd.read_parquet(snakemake.input.references) if "references" in snakemake.input.keys() else None
    if refs is None:
        log.info("no references (real data): every pair is written 'unmeasured'")
    table = measure_quality(
        read_captions(snakemake.input.captions),
        refs,
        snakemake.params.langs,
        snakemake.params.settings,
        snakemake.params.dictionaries,
    )
    log.info("\n%s", table.to_string(index=False))
    write_tsv(table, snakemake.output[0])
