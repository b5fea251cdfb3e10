"""Rule data_stats_table: every dataset's data_stats.tsv → results/data_stats.{tsv,md}, the Markdown
with the real Multi30K reference rows beside ours."""

import pandas as pd

from polyvse.data.stats import read_reference, read_stats, stats_markdown
from polyvse.io import write_text, write_tsv
from polyvse.logs import job_log

with job_log(snakemake.log[0], "data_stats_table") as log:
    ours = pd.concat([read_stats(p) for p in snakemake.input.stats], ignore_index=True)
    caption, reference = read_reference(snakemake.input.reference)
    write_tsv(ours, snakemake.output.tsv, na_rep="")
    write_text(stats_markdown(ours, reference, caption), snakemake.output.md)
    log.info("%d rows of %d datasets\n%s", len(ours), ours["dataset"].nunique(), ours.to_string(index=False))
