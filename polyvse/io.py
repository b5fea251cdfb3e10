"""Atomic writes: every output appears whole or not at all.

Each writer writes to a temporary file in the destination's directory and
renames it into place, so a killed job never leaves a partial output behind.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import errno
import glob
import json
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd

from polyvse.errors import InputError
from polyvse.runlock import pid_alive


def _proc_umask() -> int | None:
    """The umask as Linux reports it in /proc/self/status (``Umask:`` line, kernel 4.7+), or None."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _umask_at_import() -> int:
    mask = _proc_umask()
    if mask is None:
        # Without /proc the umask can only be read by setting it: once, at import
        # (single-threaded), never around writes.
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


_IMPORT_UMASK = _umask_at_import()


def current_umask() -> int:
    """The process's umask, read without changing it: from /proc/self/status on
    Linux (so a later ``os.umask`` call is seen), elsewhere the umask at import.

    Reading it with ``os.umask(0)`` would change it process-wide for a moment: a
    thread creating a file in that moment would create it world-writable."""
    mask = _proc_umask()
    return _IMPORT_UMASK if mask is None else mask


def _writer_tag() -> str:
    """``host-pid`` of this process: the part of a temporary name that says who writes it."""
    host = socket.gethostname().replace(".", "_").replace("-", "_") or "host"
    return f"{host}-{os.getpid()}"


def remove_stale_temporaries(path: str | Path, suffix: str) -> list[Path]:
    """Remove the temporary siblings of ``path`` left by writers on this host that were killed.

    A SIGKILL gives a writer no chance to remove its temporary file, so the next
    writer of ``path`` does it: names carry ``host-pid`` (see :func:`temporary_sibling`)
    and only those of this host whose process is gone are removed; a live writer's
    file, or one of another host sharing the filesystem, is left alone.
    """
    path = Path(path)
    host = _writer_tag().rsplit("-", 1)[0]
    removed = []
    for old in path.parent.glob(f".{glob.escape(path.name)}.{host}-*{glob.escape(suffix)}"):
        pid = old.name[len(f".{path.name}.{host}-") :].split(".", 1)[0]
        if not pid.isdigit() or pid_alive(int(pid)):  # malformed, or still writing
            continue
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)
        removed.append(old)
    return removed


def temporary_sibling(path: str | Path, suffix: str, directory: bool = False) -> Path:
    """Create an empty temporary file (or directory) beside ``path`` and return its path.

    Named ``.{name}.{host}-{pid}.{random}{suffix}``, after removing what killed
    writers of ``path`` left (:func:`remove_stale_temporaries`): re-running a
    killed job leaves no debris beside its outputs.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path, suffix)
    prefix = f".{path.name}.{_writer_tag()}."
    if directory:
        return Path(tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=path.parent))
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=path.parent)
    os.close(fd)
    return Path(tmp)


FULL_DISK_BYTES = 256 * 2**20  # a write that fails with less free than this is blamed on the disk


@contextlib.contextmanager
def atomic_path(path: str | Path, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    The temporary name keeps ``path``'s suffix (or ``suffix``) so that libraries
    that dispatch on the extension (numpy, torch, PIL) keep working.
    """
    path = Path(path)
    tmp_path = temporary_sibling(path, suffix or "".join(path.suffixes) or ".tmp")
    # mkstemp makes 0600 files; outputs get the ordinary permissions the umask allows
    os.chmod(tmp_path, 0o666 & ~current_umask())
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except Exception as err:
        # a full disk surfaces as whatever the writer says (torch: "unexpected pos 14895808 vs
        # 14895696"): say what it is while the partial file still holds the space it took
        free = shutil.disk_usage(path.parent).free
        if free < FULL_DISK_BYTES:
            raise OSError(
                errno.ENOSPC, f"{path}: not written, its disk is full ({free / 2**20:.0f} MB free): {err}"
            ) from err
        raise
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def release_freed_memory() -> None:
    """Hand memory that the process freed but its allocators keep back to the system.

    pandas' string columns live in pyarrow's memory pool, which keeps what a frame freed for
    its next allocation: after the scale config's 1.45M training captions were encoded and
    their frames dropped, 0.85 GB stayed in the process (measured), counted in its peak memory
    for the rest of a long job. glibc's malloc likewise keeps freed blocks in its arenas
    (``malloc_trim`` returns them; a no-op where the C library is not glibc). Call it after
    dropping large frames, and now and then in a long loop of varying allocations."""
    import pyarrow as pa  # pandas' parquet and string backend; imported here, where it is used

    pa.default_memory_pool().release_unused()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


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


_PLAIN_SCALARS = (str, int, float, bool, type(None))


def check_plain(obj: Any, where: str = "checkpoint") -> None:
    """Raise TypeError naming the first value of ``obj`` that is not plain data.

    Plain data is what ``torch.load(weights_only=True)`` accepts without an
    allow-list: tensors, dicts (OrderedDicts: state dicts), lists, tuples, str,
    int, float, bool and None. Dataclasses, numpy arrays and scalars, Paths or
    any other class would need the pickle of arbitrary code to load."""
    import torch

    kind = type(obj)
    if kind in _PLAIN_SCALARS or isinstance(obj, (torch.Tensor, torch.Size, torch.dtype, torch.device)):
        return
    if kind in (dict, collections.OrderedDict):
        for key, value in obj.items():
            if type(key) not in _PLAIN_SCALARS:
                raise TypeError(f"{where}: key {key!r} is a {type(key).__name__}, not plain data")
            check_plain(value, f"{where}.{key}")
        return
    if kind in (list, tuple):
        for i, value in enumerate(obj):
            check_plain(value, f"{where}[{i}]")
        return
    raise TypeError(
        f"{where} is a {kind.__module__}.{kind.__qualname__}, not plain data (tensors, dicts, lists, "
        f"str, int, float, bool, None): store its fields and rebuild it on load"
    )


def save_torch(obj: Any, path: str | Path) -> None:
    """Write ``obj`` (plain data only, :func:`check_plain`) so that :func:`load_torch` reads it."""
    import torch

    check_plain(obj, f"{Path(path).name}")
    # through a file object, not the path: torch names the archive's records after a path's file name,
    # the temporary one here, so the same object would give other bytes on every write
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        torch.save(obj, f)


def load_torch(path: str | Path, map_location: Any = "cpu") -> Any:
    """Read a file of :func:`save_torch` with ``weights_only=True``: unpickling runs no
    code of the file's choosing. A file of another kind fails naming it."""
    import pickle

    import torch

    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise InputError(
            path,
            f"not a checkpoint of plain data, refused by torch.load(weights_only=True) "
            f"({reason}); delete it and re-run the rule that writes it",
        ) from err
    except (RuntimeError, EOFError, ValueError, OSError) as err:
        if isinstance(err, OSError) and not Path(path).is_file():
            raise  # a missing file is the caller's to name
        # torch's zip reader says "failed finding central directory" for a truncated file, EOFError for an empty one
        reason = str(err).strip().splitlines()[0].split(". ")[0] if str(err).strip() else type(err).__name__
        raise InputError(path, f"a damaged checkpoint, truncated or not torch's ({reason})") from err
