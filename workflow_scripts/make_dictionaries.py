"""Rule dictionaries: MUSE-format en-xx / xx-en dictionaries of the synthetic languages."""

import shutil
from pathlib import Path

from polyvse.io import temporary_sibling
from polyvse.logs import job_log

with job_log(snakemake.log[0], "dictionaries") as log:
    if snakemake.params.adapter != "synthetic":
        raise ValueError(
            f"dataset {snakemake.wildcards.dataset}: only the synthetic adapter writes dictionaries; "
            "for real data name MUSE dictionaries in config (translate.dictionaries)"
        )
    from polyvse.data.synthetic import write_dictionaries

    out = Path(snakemake.output[0])
    tmp = temporary_sibling(out, ".partial", directory=True)
    try:
        paths = write_dictionaries(tmp, snakemake.params.langs, snakemake.params.lexicon)  # the captions' lexicon
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("wrote %d dictionaries", len(paths))
