"""Rule references: every human caption's plan realised in every language (synthetic data)."""

from polyvse.io import write_parquet
from polyvse.logs import job_log
from polyvse.translate.stage import synthetic_realisations

with job_log(snakemake.log[0], "references") as log:
    refs = synthetic_realisations(snakemake.params.dataset, snakemake.params.langs)
    human = refs[refs["lang"] == refs["src_lang"]]
    log.info(
        "%d realisations of %d human captions (%d English test) in %s",
        len(refs),
        len(human),
        int(((human["lang"] == "en") & (human["split"] == "test")).sum()),
        ", ".join(dict.fromkeys(refs["lang"])),
    )
    write_parquet(refs, snakemake.output[0])
