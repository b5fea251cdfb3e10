"""An approximate nearest-neighbour index of embeddings, for collections too large to score exactly.

The vectors ``(N, D)`` stay on disk as float32 chunks (``chunk_000.npy``, … memory-mapped); a faiss inverted
file over ``cells`` k-means cells holds them again as 8-bit scalar codes (a quarter of their size). A query
scores the codes of its ``probe`` nearest cells, keeps the ``rerank`` best candidates and re-scores them
exactly from the float vectors, so the scores it returns are the model's own (the dot product, as
:func:`polyvse.query.top_k` scores) and only which candidates it looks at is approximate. Adding vectors
appends a chunk and adds their codes to the cells already trained: no rebuild.

faiss is imported on demand: an exact search (:func:`exact_top_k`) needs only numpy.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from polyvse.errors import InputError
from polyvse.io import atomic_path, write_text

FORMAT = 1
"""Bumped when the files of an index change meaning; an index of another format is refused, not misread."""


@dataclass(frozen=True)
class IndexSettings:
    """How an index is built and searched.

    cells: k-means cells of the inverted file (None: about 4 √N, at least 1, at most N / 39 so that each cell
    has the 39 training points faiss asks for); probe: cells a query scores; rerank: candidates re-scored
    exactly; train_size: vectors drawn (seeded) to train the cells and the scalar quantiser."""

    cells: int | None = None
    probe: int = 32
    rerank: int = 100
    train_size: int = 200_000
    seed: int = 0

    def cells_for(self, n: int) -> int:
        if self.cells is not None:
            return int(self.cells)
        return max(1, min(int(4 * math.sqrt(n)), n // 39))


def exact_top_k(vectors: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best rows of ``vectors`` ``(N, D)`` for each query ``(Q, D)`` by dot product, best first:
    scores ``(Q, k')`` and rows ``(Q, k')``, ``k' = min(k, N)``; ties go to the lower row."""
    scores = np.asarray(queries, dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T
    k = min(k, scores.shape[1])
    part = (
        np.argpartition(-scores, k - 1, axis=1)[:, :k]
        if k < scores.shape[1]
        else np.tile(np.arange(k), (len(scores), 1))
    )
    chosen = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((part, -chosen), axis=1)
    rows = np.take_along_axis(part, order, axis=1)
    return np.take_along_axis(scores, rows, axis=1), rows


class VectorIndex:
    """An index in ``directory``: ``meta.json``, which names its inverted file (``ivf_NNN.faiss``) and the float
    vectors' chunks."""

    def __init__(self, directory: Path, meta: dict, ivf: object, chunks: list[np.ndarray]):
        self.directory = directory
        self.meta = meta
        self.ivf = ivf
        self.chunks = chunks
        self._offsets = np.cumsum([0] + [len(c) for c in chunks])

    @property
    def dim(self) -> int:
        return int(self.meta["dim"])

    def __len__(self) -> int:
        return int(self._offsets[-1])

    @property
    def settings(self) -> IndexSettings:
        return IndexSettings(**self.meta["settings"])

    @classmethod
    def build(
        cls, vectors: np.ndarray, directory: str | Path, settings: IndexSettings = IndexSettings()
    ) -> VectorIndex:
        """Train the cells and the quantiser on (a seeded draw of) ``vectors`` ``(N, D)``, add them all, and
        write the index to ``directory`` (replacing one there)."""
        import faiss

        vectors = _float32(vectors)
        n, dim = vectors.shape
        if n == 0:
            raise ValueError("an index needs at least one vector")
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for old in [*directory.glob("chunk_*.npy"), *directory.glob("ivf_*.faiss"), directory / "meta.json"]:
            old.unlink(missing_ok=True)
        cells = settings.cells_for(n)
        quantizer = faiss.IndexFlatIP(dim)
        ivf = faiss.IndexIVFScalarQuantizer(
            quantizer, dim, cells, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
        rng = np.random.default_rng(settings.seed)
        sample = (
            vectors if n <= settings.train_size else vectors[np.sort(rng.choice(n, settings.train_size, replace=False))]
        )
        ivf.cp.seed = settings.seed
        ivf.train(sample)
        index = cls(directory, {"format": FORMAT, "dim": dim, "cells": cells, "settings": asdict(settings)}, ivf, [])
        index._append(vectors)
        return index

    @classmethod
    def open(cls, directory: str | Path) -> VectorIndex:
        """The index written in ``directory``; raises InputError naming what is missing, damaged (truncated,
        of another shape, a symlink) or of another format."""
        import faiss

        directory = Path(directory)
        meta_path = directory / "meta.json"
        if not meta_path.is_file():
            raise InputError(directory, "no vector index here (no meta.json): build one with `polyvse index`")
        try:
            meta = json.loads(_own_file(meta_path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise InputError(meta_path, f"a damaged index file ({type(err).__name__}: {err})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            found = meta.get("format") if isinstance(meta, dict) else None
            raise InputError(meta_path, f"an index of format {found!r}, not {FORMAT}: build it again")
        try:
            dim, chunk_names, ivf_name = int(meta["dim"]), [str(c) for c in meta["chunks"]], str(meta["ivf"])
            IndexSettings(**meta["settings"])
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(meta_path, f"a damaged index file ({type(err).__name__}: {err})") from None
        chunks = []
        for name in chunk_names:
            path = _own_file(directory / name)
            try:
                chunk = np.load(path, mmap_mode="r")
            except (OSError, ValueError, EOFError) as err:
                raise InputError(path, f"a damaged index file ({type(err).__name__}: {err})") from None
            if chunk.ndim != 2 or chunk.shape[1] != dim or chunk.dtype != np.float32:
                raise InputError(path, f"a damaged index file ({chunk.dtype} {chunk.shape}, not float32 (N, {dim}))")
            chunks.append(chunk)
        try:
            ivf = faiss.read_index(str(_own_file(directory / ivf_name)))
        except (OSError, RuntimeError) as err:  # faiss says RuntimeError for a truncated or foreign file
            first = str(err).strip().splitlines()[0] if str(err).strip() else ""
            raise InputError(directory / ivf_name, f"a damaged index file ({first[:120]})") from None
        index = cls(directory, meta, ivf, chunks)
        if ivf.ntotal != len(index) or ivf.d != index.dim:
            raise InputError(
                directory, f"{ivf_name} holds {ivf.ntotal} {ivf.d}-D vectors, the chunks {len(index)}: build it again"
            )
        return index

    def add(self, vectors: np.ndarray) -> None:
        """Append ``vectors`` ``(M, D)``: their codes go into the trained cells, their floats into a new chunk."""
        vectors = _float32(vectors)
        if vectors.shape[1] != self.dim:
            raise ValueError(f"the index holds {self.dim}-D vectors, got {vectors.shape[1]}-D")
        if len(vectors):
            self._append(vectors)

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The float vectors of ``rows`` (any shape of row numbers) → ``rows.shape + (D,)``."""
        flat = np.asarray(rows).reshape(-1)
        out = np.empty((len(flat), self.dim), dtype=np.float32)
        which = np.searchsorted(self._offsets, flat, side="right") - 1
        for c in np.unique(which):
            at = which == c
            out[at] = self.chunks[c][flat[at] - self._offsets[c]]
        return out.reshape(*np.shape(rows), self.dim)

    def search(self, queries: np.ndarray, k: int, probe: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best rows for each query ``(Q, D)`` by dot product, best first: exact scores ``(Q, k')``
        and rows ``(Q, k')`` (``k' = min(k, N)``) among the candidates of the ``probe`` nearest cells."""
        queries = _float32(queries)
        settings = self.settings
        self.ivf.nprobe = int(probe or settings.probe)
        wanted = min(max(k, settings.rerank), len(self))
        _, candidates = self.ivf.search(queries, wanted)
        scores = np.full((len(queries), min(k, len(self))), -np.inf, dtype=np.float32)
        rows = np.full(scores.shape, -1, dtype=np.int64)
        for q, found in enumerate(candidates):
            found = found[found >= 0]  # faiss pads with -1 when the probed cells hold fewer
            s, r = exact_top_k(self.vectors(found), queries[q : q + 1], k)
            scores[q, : r.shape[1]], rows[q, : r.shape[1]] = s[0], found[r[0]]
        return scores, rows

    def _append(self, vectors: np.ndarray) -> None:
        """Write a chunk and the grown inverted file under new names, then the meta that names them: a run
        killed before the meta is written leaves the index as it was."""
        import faiss

        start, number = len(self), len(self.chunks)
        chunk, ivf_name = f"chunk_{number:03d}.npy", f"ivf_{number:03d}.faiss"
        with atomic_path(self.directory / chunk) as tmp:
            np.save(tmp, vectors)
        self.ivf.add_with_ids(vectors, np.arange(start, start + len(vectors), dtype=np.int64))
        with atomic_path(self.directory / ivf_name) as tmp:
            faiss.write_index(self.ivf, str(tmp))
        self.chunks.append(np.load(self.directory / chunk, mmap_mode="r"))
        self._offsets = np.append(self._offsets, start + len(vectors))
        self.meta.update(chunks=[f"chunk_{i:03d}.npy" for i in range(len(self.chunks))], ivf=ivf_name)
        write_text(json.dumps(self.meta, indent=1) + "\n", self.directory / "meta.json")
        for old in self.directory.glob("ivf_*.faiss"):
            if old.name != ivf_name:
                old.unlink()


def _own_file(path: Path) -> Path:
    """``path``, unless it is a symlink (an index reads only files of its own directory)."""
    if path.is_symlink():
        raise InputError(path, "a symlink in the index, not followed")
    return path


def _float32(vectors: np.ndarray) -> np.ndarray:
    out = np.ascontiguousarray(vectors, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected vectors (N, D), got shape {out.shape}")
    return out
