"""Rule described_queries: a model searching its test images for short colour × shape queries →
results/described_queries.{tsv,md}."""

import pandas as pd

from polyvse.evaluate.described import descriptions, mean_precision, scene_plans
from polyvse.io import write_text, write_tsv
from polyvse.logs import job_log
from polyvse.query import described_precision, open_model
from polyvse.report.described_queries import described_markdown, described_table

with job_log(snakemake.log[0], "described_queries") as log:
    p = snakemake.params
    images = pd.read_parquet(snakemake.input.images)
    test = list(images.loc[images["split"] == "test", "image_id"])
    scenes = scene_plans(test, p.seed, p.lexicon)
    found = described_precision(open_model(p.model_dir), scenes, descriptions(p.counts), p.k)
    mean, counted = mean_precision(found, p.min_relevant)
    log.info("%s: mean precision at %d %.3f over %d descriptions", p.variant, p.k, mean, counted)
    write_tsv(described_table(found, p.min_relevant), snakemake.output.tsv)
    write_text(described_markdown(found, p.variant, p.k, p.min_relevant, len(test)), snakemake.output.md)
