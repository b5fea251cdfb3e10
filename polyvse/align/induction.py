"""Dictionary induction: precision@1 of a language mapping on held-out pairs.

The precision@1 on held-out dictionary pairs is the standard evaluation of Joulin et al. (2018) and MUSE.
Every distinct target word of the held-out dictionary is a query; it is mapped
with M, and the source word it retrieves is correct when it is *any* of the
query's gold translations (dictionaries list several translations of a word).

Two retrieval criteria:

- ``nn``: cosine nearest neighbour;
- ``csls`` (Conneau et al. 2018, used by Joulin et al.):
  ``CSLS(Ma, b) = 2 cos(Ma, b) − r_S(Ma) − r_T(b)``, with r_S(Ma) the mean
  cosine of Ma to its k nearest source words and r_T(b) the mean cosine of b to
  its k nearest mapped target words; it penalises "hub" words that are near
  everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from polyvse.align.procrustes import as_matrix
from polyvse.errors import InputError


def translation_pairs(
    dictionary: Iterable[tuple[str, str]],
    target_words: Sequence[str] | Mapping[str, int],
    source_words: Sequence[str] | Mapping[str, int],
) -> np.ndarray:
    """Row indices of the dictionary's pairs whose both words have vectors.

    dictionary: ``(target_word, source_word)`` pairs (for a MUSE file
    ``fr-de.txt`` with target fr and source de, each line as read); target_words
    / source_words: the words of the vector matrices in row order, or a
    word → row map. Pairs with a word missing from either side are dropped
    (MUSE does the same and reports the coverage). Returns ``(m, 2)`` int64
    ``[target_row, source_row]``, duplicates removed, in first-seen order.
    """
    t_index = target_words if isinstance(target_words, Mapping) else {w: i for i, w in enumerate(target_words)}
    s_index = source_words if isinstance(source_words, Mapping) else {w: i for i, w in enumerate(source_words)}
    seen: dict[tuple[int, int], None] = {}
    for t, s in dictionary:
        if t in t_index and s in s_index:
            seen.setdefault((t_index[t], s_index[s]), None)
    return np.array(list(seen), dtype=np.int64).reshape(-1, 2)


@dataclass(frozen=True)
class InductionResult:
    """Precision@1 in percent for each retrieval criterion, and the query count."""

    nn: float
    csls: float
    n_queries: int

    def as_row(self) -> dict[str, float]:
        return {"p1_nn": self.nn, "p1_csls": self.csls, "n_queries": self.n_queries}


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def _mean_topk(queries: np.ndarray, candidates: np.ndarray, k: int, chunk: int) -> np.ndarray:
    """Mean of the k largest inner products of each query with the candidates, ``(n,)``."""
    out = np.empty(len(queries))
    for lo in range(0, len(queries), chunk):
        sim = queries[lo : lo + chunk] @ candidates.T
        out[lo : lo + chunk] = np.partition(sim, -k, axis=1)[:, -k:].mean(axis=1)
    return out


def induction_precision(
    m: ArrayLike,
    target_vectors: ArrayLike,
    source_vectors: ArrayLike,
    pairs: ArrayLike,
    *,
    k: int = 10,
    chunk: int = 2048,
) -> InductionResult:
    """Precision@1 of mapping M on the dictionary ``pairs``, by NN and by CSLS.

    m: ``(d_s, d_t)`` (``M t ≈ s``); target_vectors ``(V_t, d_t)``: the target
    vocabulary (queries, and the mapped words of CSLS's r_T); source_vectors
    ``(V_s, d_s)``: the retrieval candidates; pairs ``(m, 2)`` rows
    ``[target_row, source_row]`` (see :func:`translation_pairs`), held out from
    the dictionary M was learnt on. ``k``: CSLS neighbourhood size (10).
    """
    where = "induction_precision"
    mat = as_matrix(m, f"{where}(m)")
    tv = as_matrix(target_vectors, f"{where}(target_vectors)")
    sv = as_matrix(source_vectors, f"{where}(source_vectors)")
    pr = np.asarray(pairs)
    if mat.shape != (sv.shape[1], tv.shape[1]):
        raise InputError(
            f"{where}(m)", f"M must be (d_source, d_target) = ({sv.shape[1]}, {tv.shape[1]}), got {mat.shape}"
        )
    if pr.ndim != 2 or pr.shape[1] != 2 or len(pr) == 0 or not np.issubdtype(pr.dtype, np.integer):
        raise InputError(f"{where}(pairs)", f"expected a non-empty (m, 2) integer array, got {pr.dtype} {pr.shape}")
    if pr[:, 0].min() < 0 or pr[:, 0].max() >= len(tv) or pr[:, 1].min() < 0 or pr[:, 1].max() >= len(sv):
        raise InputError(f"{where}(pairs)", "row index outside the vector matrices")
    if not 1 <= k <= min(len(tv), len(sv)):
        raise InputError(where, f"k = {k}, but there are {len(tv)} target and {len(sv)} source words")

    queries, inverse = np.unique(pr[:, 0], return_inverse=True)
    # gold (query, source row) pairs as integer keys: a (q, V_s) mask would not fit for 200k words
    gold_keys = inverse.astype(np.int64) * len(sv) + pr[:, 1]

    def hits(first_query: int, predicted: np.ndarray) -> int:
        keys = (first_query + np.arange(len(predicted), dtype=np.int64)) * len(sv) + predicted
        return int(np.isin(keys, gold_keys).sum())

    mapped_vocab = _unit(tv @ mat.T)  # (V_t, d_s)
    candidates = _unit(sv)  # (V_s, d_s)
    mapped_queries = mapped_vocab[queries]  # (q, d_s)
    r_target = _mean_topk(candidates, mapped_vocab, k, chunk)  # r_T(b) for every candidate
    r_source = _mean_topk(mapped_queries, candidates, k, chunk)  # r_S(Ma) for every query

    hits_nn = hits_csls = 0
    for lo in range(0, len(queries), chunk):
        cos = mapped_queries[lo : lo + chunk] @ candidates.T
        hits_nn += hits(lo, cos.argmax(axis=1))
        csls = 2.0 * cos - r_source[lo : lo + chunk, None] - r_target[None, :]
        hits_csls += hits(lo, csls.argmax(axis=1))
    n = len(queries)
    return InductionResult(nn=100.0 * hits_nn / n, csls=100.0 * hits_csls / n, n_queries=n)
