"""Rule dataset: raw dataset → captions.parquet + images.parquet."""

from pathlib import Path

from polyvse.data.adapters import make_dataset
from polyvse.io import write_parquet
from polyvse.logs import job_log

with job_log(snakemake.log[0], "dataset") as log:
    captions, images = make_dataset(
        snakemake.wildcards.dataset, snakemake.params.dataset, Path(snakemake.params.out_dir)
    )
    log.info(
        "%d images, %d captions; captions per language and split:\n%s",
        len(images),
        len(captions),
        captions.groupby(["split", "lang"]).size().unstack(fill_value=0).to_string(),
    )
    # tables last: they are the outputs, so the dataset is complete when they exist
    write_parquet(images, snakemake.output.images)
    write_parquet(captions, snakemake.output.captions)
