"""Rule references: English test captions' plans realised in every language (synthetic data)."""

from polyvse.io import write_parquet
from polyvse.logs import job_log
from polyvse.translate.stage import synthetic_references

with job_log(snakemake.log[0], "references") as log:
    refs = synthetic_references(snakemake.params.dataset, snakemake.params.langs)
    log.info("%d references of %d English test captions in %s", len(refs),
             int((refs["lang"] == "en").sum()), ", ".join(dict.fromkeys(refs["lang"])))
    write_parquet(refs, snakemake.output[0])
