"""A per-language, memory-mappable store of log-Mel features (``results/{dataset}/logmel/{lang}.npz``).

Layout: an *uncompressed* ``.npz`` (a ZIP archive with stored members) holding

* ``frames.npy``  float32 ``(Σ T_i, n_mels)``: every utterance's frames, one after another;
* ``offsets.npy`` int64 ``(N + 1,)``: utterance i is ``frames[offsets[i]:offsets[i+1]]``;
* ``keys.npy``    str ``(N,)``: the utterance keys, in order;
* ``meta.npy``    a JSON string: front-end settings and provenance.

Why this layout: ``np.load(npz, mmap_mode="r")`` silently ignores ``mmap_mode``
for ``.npz`` members and reads them whole, which for a real corpus (100 k
utterances × ~1000 frames × 40 bins × 4 B ≈ 16 GB per language) does not fit.
A stored (uncompressed) ZIP member is a plain ``.npy`` byte range inside the
file, so :func:`open_store` finds where the ``frames`` array starts (local ZIP
header, then the ``.npy`` header) and maps exactly that range with
``np.memmap``. The writer pads each member's ZIP header (an extra field, the
trick of Android's zipalign) so that the array data start on a 64-byte
boundary, and the file stays a valid ``.npz`` that plain ``np.load`` reads.
One file per language keeps the Snakemake output a single, atomically written
file.

Writing streams: :class:`StoreWriter` appends each utterance's frames to a
temporary file, so extraction never holds a whole language in memory.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import struct
import time
import zipfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from polyvse.errors import InputError
from polyvse.io import atomic_path, temporary_sibling

N_MELS = 40
_ALIGN = 64
_PAD_EXTRA_ID = 0xD935  # the extra-field id zipalign uses for padding; readers skip unknown ids
_ZIP64_EXTRA_LEN = 20  # zipfile writes a 20-byte zip64 extra when force_zip64=True
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # the 30-byte ZIP local file header
_COPY_CHUNK = 1 << 24


# ----------------------------------------------------------------------------- writing


def _npy_header(shape: tuple[int, ...], dtype: np.dtype) -> bytes:
    buf = io.BytesIO()
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": shape}
    try:
        np.lib.format.write_array_header_1_0(buf, header)
    except ValueError:  # a header over 64 KiB (absurd shapes) needs format 2.0
        buf = io.BytesIO()
        np.lib.format.write_array_header_2_0(buf, header)
    return buf.getvalue()


def _write_member(
    zf: zipfile.ZipFile, name: str, shape: tuple[int, ...], dtype: np.dtype, chunks: Iterable[bytes]
) -> None:
    """Write one stored ``.npy`` member whose array data start 64-byte aligned."""
    header = _npy_header(shape, dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    zinfo = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    zinfo.compress_type = zipfile.ZIP_STORED
    zinfo.file_size = len(header) + nbytes
    name_len = len(name.encode("utf-8"))
    start = zf.start_dir  # where this member's local header will go
    fixed = start + _LOCAL_HEADER.size + name_len + 4 + _ZIP64_EXTRA_LEN + len(header)
    pad = (-fixed) % _ALIGN
    zinfo.extra = struct.pack("<HH", _PAD_EXTRA_ID, pad) + b"\0" * pad
    written = 0
    with zf.open(zinfo, "w", force_zip64=True) as out:
        out.write(header)
        for chunk in chunks:
            out.write(chunk)
            written += len(chunk)
    if written != nbytes:
        raise RuntimeError(f"{name}: wrote {written} bytes of array data, expected {nbytes}")


def _array_member(zf: zipfile.ZipFile, name: str, array: np.ndarray) -> None:
    array = np.asarray(array)
    if not array.flags.c_contiguous:  # (ascontiguousarray would turn a 0-d array into 1-d)
        array = array.copy(order="C")
    _write_member(zf, name, array.shape, array.dtype, [array.tobytes()])


class StoreWriter:
    """Stream utterances into a store: ``add(key, frames)`` in order, then ``close()``.

    Use as a context manager; on an exception nothing is written and the
    temporary frame file is removed. The store appears atomically at ``path``.
    """

    def __init__(self, path: str | Path, n_mels: int = N_MELS, meta: dict[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.n_mels = n_mels
        self.meta = dict(meta or {})
        self.keys: list[str] = []
        self.lengths: list[int] = []
        self._raw_path = temporary_sibling(self.path, ".frames")
        self._raw = open(self._raw_path, "wb")
        self._closed = False

    def add(self, key: str, frames: np.ndarray) -> None:
        frames = np.asarray(frames)
        if frames.ndim != 2 or frames.shape[1] != self.n_mels or frames.shape[0] < 1:
            raise ValueError(f"{key}: expected frames (T >= 1, {self.n_mels}), got {frames.shape}")
        self._raw.write(np.ascontiguousarray(frames, dtype=np.float32).tobytes())
        self.keys.append(str(key))
        self.lengths.append(int(frames.shape[0]))

    def close(self) -> None:
        if self._closed:
            return
        self._raw.close()
        try:
            if len(set(self.keys)) != len(self.keys):
                dup = sorted({k for k in self.keys if self.keys.count(k) > 1})[:5]
                raise ValueError(f"{self.path}: duplicate utterance keys, e.g. {dup}")
            offsets = np.zeros(len(self.lengths) + 1, dtype=np.int64)
            np.cumsum(self.lengths, out=offsets[1:])
            total = int(offsets[-1])
            meta = {
                **self.meta,
                "n_mels": self.n_mels,
                "n_utterances": len(self.keys),
                "n_frames": total,
                "layout": "stored npz: frames (sum T, n_mels) float32, offsets (N+1,) int64, keys (N,)",
            }
            with atomic_path(self.path) as tmp:
                with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
                    with open(self._raw_path, "rb") as raw:
                        _write_member(
                            zf,
                            "frames.npy",
                            (total, self.n_mels),
                            np.dtype(np.float32),
                            iter(lambda: raw.read(_COPY_CHUNK), b""),
                        )
                    _array_member(zf, "offsets.npy", offsets)
                    _array_member(zf, "keys.npy", np.asarray(self.keys, dtype=str))
                    _array_member(zf, "meta.npy", np.asarray(json.dumps(meta, sort_keys=True)))
        finally:
            self._closed = True
            self._raw_path.unlink(missing_ok=True)

    def abort(self) -> None:
        if not self._closed:
            self._raw.close()
            self._raw_path.unlink(missing_ok=True)
            self._closed = True

    def __enter__(self) -> "StoreWriter":
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_store(
    path: str | Path,
    keys: Sequence[str],
    features: Iterable[np.ndarray],
    meta: dict[str, Any] | None = None,
    n_mels: int = N_MELS,
) -> None:
    """Write utterances ``features`` (each ``(T_i, n_mels)``) under ``keys`` as one store."""
    with StoreWriter(path, n_mels, meta) as writer:
        for key, feats in zip(list(keys), features, strict=True):
            writer.add(key, feats)


# ----------------------------------------------------------------------------- reading


@dataclass
class LogMelStore:
    """Read side of a store. ``store[i]`` is utterance i's frames ``(T_i, n_mels)`` (a view
    into the memory map); ``lengths`` ``(N,)``; ``keys`` ``(N,)``; ``row(key)`` its index."""

    path: str
    frames: np.ndarray
    offsets: np.ndarray
    keys: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def memory_mapped(self) -> bool:
        return isinstance(self.frames, np.memmap)

    def __getitem__(self, i: int) -> np.ndarray:
        if not -len(self) <= i < len(self):
            raise IndexError(f"utterance {i} out of range for a store of {len(self)}")
        i = i % len(self)
        return self.frames[self.offsets[i] : self.offsets[i + 1]]

    @cached_property
    def _rows(self) -> dict[str, int]:
        return {str(k): i for i, k in enumerate(self.keys)}

    def row(self, key: str) -> int:
        try:
            return self._rows[key]
        except KeyError:
            raise KeyError(f"{self.path}: no utterance with key {key!r}") from None

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(len(self)):
            yield self[i]


def _member_data_offset(
    path: Path, f: io.BufferedReader, info: zipfile.ZipInfo
) -> tuple[int, tuple[int, ...], bool, np.dtype]:
    """Byte offset of a stored ``.npy`` member's array data, and its shape, order and dtype."""
    f.seek(info.header_offset)
    local = _LOCAL_HEADER.unpack(f.read(_LOCAL_HEADER.size))
    if local[0] != b"PK\x03\x04":
        raise InputError(path, f"{info.filename}: bad ZIP local header")
    f.seek(info.header_offset + _LOCAL_HEADER.size + local[10] + local[11])
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
    else:
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    return f.tell(), shape, fortran, dtype


def open_store(path: str | Path, mmap: bool = True) -> LogMelStore:
    """Open a store; ``frames`` is a read-only ``np.memmap`` when ``mmap`` (and the member is stored).

    A compressed ``.npz`` (e.g. re-saved with ``np.savez_compressed``) still opens,
    with ``frames`` read into memory.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "log-Mel store does not exist")
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise InputError(path, f"not a log-Mel store (not an npz/ZIP file: {exc})") from exc
    with zf:
        infos = {i.filename: i for i in zf.infolist()}
        missing = {"frames.npy", "offsets.npy", "keys.npy"} - set(infos)
        if missing:
            raise InputError(path, f"not a log-Mel store: missing members {sorted(missing)}")

        def small(name: str) -> np.ndarray:
            with zf.open(name) as m:
                return np.load(io.BytesIO(m.read()), allow_pickle=False)

        offsets = small("offsets.npy").astype(np.int64, copy=False)
        keys = small("keys.npy")
        meta = json.loads(str(small("meta.npy").reshape(-1)[0])) if "meta.npy" in infos else {}
        finfo = infos["frames.npy"]
        if mmap and finfo.compress_type == zipfile.ZIP_STORED:
            with open(path, "rb") as f:
                start, shape, fortran, dtype = _member_data_offset(path, f, finfo)
            frames: np.ndarray = np.memmap(
                path, dtype=dtype, mode="r", offset=start, shape=shape, order="F" if fortran else "C"
            )
        else:
            frames = small("frames.npy")
    if (
        frames.ndim != 2
        or offsets.ndim != 1
        or len(offsets) != len(keys) + 1
        or offsets[0] != 0
        or offsets[-1] != frames.shape[0]
        or np.any(np.diff(offsets) < 0)
    ):
        raise InputError(
            path, f"inconsistent log-Mel store: frames {frames.shape}, {len(offsets)} offsets, {len(keys)} keys"
        )
    return LogMelStore(str(path), frames, offsets, keys, meta)


# ----------------------------------------------------------------------------- extraction


@dataclass(frozen=True)
class ExtractionStats:
    """What :func:`extract_store` did, for the rule's log."""

    n_utterances: int
    n_frames: int
    audio_seconds: float
    wall_seconds: float
    threads: int

    @property
    def utterances_per_s(self) -> float:
        return self.n_utterances / self.wall_seconds if self.wall_seconds > 0 else float("inf")

    def as_dict(self) -> dict[str, float | int]:
        return {
            "n_utterances": self.n_utterances,
            "n_frames": self.n_frames,
            "audio_seconds": round(self.audio_seconds, 3),
            "wall_seconds": round(self.wall_seconds, 3),
            "threads": self.threads,
            "utterances_per_s": round(self.utterances_per_s, 3),
        }


def _extract_one(path: str) -> tuple[str, Any, Any]:
    """Worker: ``("ok", frames, n_samples)`` or ``("error", where, reason)``.

    Errors travel as plain values: InputError's constructor takes (where, reason)
    and would not survive the pickling back to the parent as an exception.
    """
    from polyvse.speech.audio import read_wav
    from polyvse.speech.logmel import logmel

    try:
        signal = read_wav(path)
        return "ok", logmel(signal), int(signal.shape[0])
    except InputError as exc:
        return "error", exc.where, exc.reason


def extraction_processes(n_utterances: int, threads: int, min_per_process: int = 1000) -> int:
    """Worker processes worth starting for ``n_utterances``: at most ``threads``, one per
    ``min_per_process`` utterances. A fresh worker spends ~4 s importing librosa (numba)
    and compiling its STFT, while an utterance takes ~4 ms, so a few hundred utterances
    are done sooner in the calling process."""
    return max(1, min(int(threads), int(n_utterances) // max(1, min_per_process)))


def extract_store(
    wav_paths: Sequence[str | Path],
    keys: Sequence[str],
    out_path: str | Path,
    *,
    threads: int = 1,
    progress: bool = True,
    desc: str = "log-Mel",
    meta: dict[str, Any] | None = None,
) -> ExtractionStats:
    """Log-Mel features of every wav (in order) into the store ``out_path``, over ``threads`` processes.

    A bad wav raises ``InputError`` naming it (the store is not written). Progress
    goes to stderr (tqdm); the returned stats carry the throughput for the log.
    """
    from tqdm import tqdm

    from polyvse.speech import logmel as lm

    paths = [str(p) for p in wav_paths]
    keys = [str(k) for k in keys]
    if len(paths) != len(keys):
        raise ValueError(f"{len(paths)} wav paths but {len(keys)} keys")
    if len(set(keys)) != len(keys):
        raise ValueError("utterance keys must be unique")
    threads = max(1, int(threads))
    settings = {
        "sample_rate": lm.SAMPLE_RATE,
        "n_mels": lm.N_MELS,
        "n_fft": lm.N_FFT,
        "win_length": lm.WIN_LENGTH,
        "hop_length": lm.HOP_LENGTH,
        "preemphasis": lm.PREEMPHASIS,
        "fmin": lm.FMIN,
        "top_db": lm.TOP_DB,
        "log": "power_to_db(ref=max)",
    }
    start = time.perf_counter()
    n_samples = 0
    pool = None
    try:
        if threads == 1 or len(paths) < 2:
            results: Iterable[tuple[str, Any, Any]] = map(_extract_one, paths)
        else:
            # forkserver: children never inherit the parent's threads (a forked
            # child of a threaded parent can deadlock on a held lock)
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["polyvse.speech.logmel"])
            pool = ctx.Pool(threads)
            chunksize = max(1, min(32, len(paths) // (threads * 8)))
            results = pool.imap(_extract_one, paths, chunksize=chunksize)
        with StoreWriter(out_path, lm.N_MELS, {**settings, **(meta or {})}) as writer:
            for key, (status, a, b) in tqdm(
                zip(keys, results), total=len(paths), desc=desc, unit="utt", disable=not progress
            ):
                if status == "error":
                    raise InputError(a, b)
                writer.add(key, a)
                n_samples += b
            n_frames = sum(writer.lengths)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return ExtractionStats(len(paths), n_frames, n_samples / lm.SAMPLE_RATE, time.perf_counter() - start, threads)
