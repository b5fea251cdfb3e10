"""Rule data_stats_table: every dataset's data_stats.tsv → results/data_stats.{tsv,md}, the Markdown
with the real Multi30K reference rows beside ours; every synthetic dataset's attribute_words.tsv →
results/attribute_words.tsv and its table below them in the Markdown."""

import pandas as pd

from polyvse.data.stats import read_reference, read_stats, stats_markdown
from polyvse.io import write_text, write_tsv
from polyvse.logs import job_log
from polyvse.text.attribute_words import ATTRIBUTE_COLUMNS, attribute_words_markdown, read_attribute_words

with job_log(snakemake.log[0], "data_stats_table") as log:
    ours = pd.concat([read_stats(p) for p in snakemake.input.stats], ignore_index=True)
    caption, reference = read_reference(snakemake.input.reference)
    attributes = pd.concat(
        [pd.DataFrame(columns=list(ATTRIBUTE_COLUMNS))]
        + [read_attribute_words(p) for p in snakemake.input.attribute_words],
        ignore_index=True,
    )
    markdown = stats_markdown(ours, reference, caption)
    if len(attributes):
        markdown += "\n" + attribute_words_markdown(attributes)
    write_tsv(ours, snakemake.output.tsv, na_rep="")
    write_tsv(attributes, snakemake.output.attribute_words, na_rep="")
    write_text(markdown, snakemake.output.md)
    log.info("%d rows of %d datasets\n%s", len(ours), ours["dataset"].nunique(), ours.to_string(index=False))
