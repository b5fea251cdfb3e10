"""Checkpoints belong to the input files they were trained from.

A training resumes from ``last.pt`` when the settings' fingerprint matches (polyvse.train.loop), but
the settings do not say which files the training read: a FastText table, captions or features
made again (another corpus, another seed) have the same shapes. Resuming then continues a model
trained on other data. The scale run met this: its pretraining, rerun on new FastText vectors,
resumed the epoch trained on the old ones and assigned the new words with it.

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
    """Make ``checkpoint_dir`` a place for a checkpoint of a training on ``inputs``: a ``last.pt``
    made from other files (or with no record of its files) is removed. Returns whether one was."""
    checkpoint_dir = Path(checkpoint_dir)
    current = file_identities(inputs)
    record = checkpoint_dir / RECORD
    last = checkpoint_dir / "last.pt"
    stale = last.exists() and (not record.exists() or json.loads(record.read_text(encoding="utf-8")) != current)
    if stale:
        changed = "no record of its input files"
        if record.exists():
            before = json.loads(record.read_text(encoding="utf-8"))
            differ = sorted(
                set(before) ^ set(current) | {p for p in before if p in current and before[p] != current[p]}
            )
            changed = f"{len(differ)} input file(s) changed, e.g. {differ[0]}" if differ else changed
        log.info("checkpoint %s was trained from other inputs (%s); starting afresh", last, changed)
        last.unlink()
    if stale or not record.exists() or json.loads(record.read_text(encoding="utf-8")) != current:
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        write_text(json.dumps(current, indent=1) + "\n", record)
    return stale
