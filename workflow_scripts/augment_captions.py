"""Rule augment_captions: human captions + machine translations."""

from polyvse.data.tables import read_captions
from polyvse.io import write_parquet
from polyvse.logs import job_log
from polyvse.translate.stage import augmented_captions

with job_log(snakemake.log[0], "augment_captions") as log:
    captions = read_captions(snakemake.input.captions)
    references = snakemake.input.references if "references" in snakemake.input.keys() else None
    out = augmented_captions(
        captions, snakemake.params.langs, snakemake.params.settings, snakemake.params.dictionaries, references
    )
    log.info(
        "%d human + %d machine-translated captions; per language and split:\n%s",
        int((out["origin"] == "human").sum()),
        int((out["origin"] == "mt").sum()),
        out.groupby(["split", "lang"]).size().unstack(fill_value=0).to_string(),
    )
    write_parquet(out, snakemake.output[0])
