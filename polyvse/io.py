"""Atomic writes: every output appears whole or not at all.

Each writer writes to a temporary file in the destination's directory and
renames it into place, so a killed job never leaves a partial output behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd


@contextlib.contextmanager
def atomic_path(path: str | Path, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    The temporary name keeps ``path``'s suffix (or ``suffix``) so that libraries
    that dispatch on the extension (numpy, torch, PIL) keep working.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or "".join(path.suffixes) or ".tmp",
                               dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    # mkstemp makes 0600 files; outputs get the ordinary permissions the umask allows
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp_path, 0o666 & ~umask)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_parquet(df: pd.DataFrame, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)


def write_tsv(df: pd.DataFrame, path: str | Path, **kwargs: Any) -> None:
    with atomic_path(path) as tmp:
        df.to_csv(tmp, sep="\t", index=False, **kwargs)


def write_text(text: str, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(obj: Any, path: str | Path) -> None:
    write_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n", path)


def write_npy(array: np.ndarray, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        np.save(tmp, array)


def save_torch(obj: Any, path: str | Path) -> None:
    import torch

    with atomic_path(path) as tmp:
        torch.save(obj, tmp)
