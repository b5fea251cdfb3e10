"""Checkpoints belong to the input files they were trained from.

A training resumes from ``last.pt`` when the settings' fingerprint matches (polyvse.train.loop), but
the settings do not say which files the training read: a FastText table, captions or features
made again (another corpus, another seed) have the same shapes. Resuming then continues a model
trained on other data: a pretraining rerun on new FastText vectors would resume the epoch trained
on the old ones and assign the new words with it.

:func:`claim_for_inputs` keeps a record of the input files (path, size, modification time) beside
the checkpoint; when they differ, the checkpoint is dropped and the training starts afresh. A run
killed and started again reads the same files, which Snakemake has not touched: it resumes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

from polyvse.io import write_text
from polyvse.train.loop import LAST_CHECKPOINT

log = logging.getLogger(__name__)
RECORD = "inputs.json"


def file_identities(paths: Iterable[str | Path]) -> dict[str, list[int]]:
    """``{path: [size, mtime_ns]}`` of each file (sorted by path)."""
    out = {}
    for p in sorted({str(p) for p in paths}):
        st = Path(p).stat()
        out[p] = [st.st_size, st.st_mtime_ns]
    return out


def claim_for_inputs(checkpoint_dir: str | Path, inputs: Iterable[str | Path]) -> bool:
    """Make ``checkpoint_dir`` a place for a checkpoint of a training on ``inputs``: a checkpoint
    made from other files (or with no record of its files) is removed. Returns whether one was."""
    checkpoint_dir = Path(checkpoint_dir)
    current, record = file_identities(inputs), checkpoint_dir / RECORD
    before = json.loads(record.read_text(encoding="utf-8")) if record.exists() else None
    if before == current:
        return False
    last = checkpoint_dir / LAST_CHECKPOINT
    stale = last.exists()
    if stale:
        changed = sorted(p for p in {*(before or {}), *current} if (before or {}).get(p) != current.get(p))
        why = f"{len(changed)} input file(s) changed, e.g. {changed[0]}" if before else "no record of its input files"
        log.info("checkpoint %s was trained from other inputs (%s); starting afresh", last, why)
        last.unlink()
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    write_text(json.dumps(current, indent=1) + "\n", record)
    return stale
