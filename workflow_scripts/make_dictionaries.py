"""Rule dictionaries: MUSE-format en-xx / xx-en dictionaries of the synthetic languages."""

import shutil
import tempfile
from pathlib import Path

from polyvse.logs import job_log

with job_log(snakemake.log[0], "dictionaries") as log:
    if snakemake.params.adapter != "synthetic":
        raise ValueError(
            f"dataset {snakemake.wildcards.dataset}: only the synthetic adapter writes dictionaries; "
            "for real data name MUSE dictionaries in config (translate.dictionaries)"
        )
    from polyvse.data.synthetic import write_dictionaries

    out = Path(snakemake.output[0])
    tmp = Path(tempfile.mkdtemp(prefix=".dictionaries.", dir=out.parent))
    try:
        paths = write_dictionaries(tmp, snakemake.params.langs, snakemake.params.lexicon)  # the captions' lexicon
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("wrote %d dictionaries", len(paths))
