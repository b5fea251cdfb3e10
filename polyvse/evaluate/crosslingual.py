"""Sentence–sentence retrieval between two languages (what MLMME's S_S term,
Calixto et al. 2017 §2 eq. 2, trains for).

Queries are the test sentences of language k, candidates every test sentence
of language l. A query is a hit at K when *any* l-sentence describing the same
image is among its K best-scored candidates (as an image query is in
:mod:`polyvse.evaluate.retrieval`); ranks follow that module's one tie
convention (:func:`~polyvse.evaluate.retrieval.pessimistic_ranks`): a
non-matching candidate that ties with the best match ranks above it. With several
captions per image in both languages (Multi30K's comparable data: 5 + 5) every
sentence is a query.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from polyvse.errors import InputError
from polyvse.evaluate.retrieval import KS, pessimistic_ranks


def cross_lingual_ranks(
    scores: np.ndarray, image_of_query: np.ndarray, image_of_candidate: np.ndarray, block: int = 1024
) -> np.ndarray:
    """Rank of the best-ranked matching candidate for every query.

    scores ``(Q, C)``: similarity of query q to candidate c; image_of_query
    ``(Q,)`` and image_of_candidate ``(C,)``: the image each sentence describes
    (any hashable ids, compared for equality). Returns ``(Q,)`` 1-based ranks;
    a query with no matching candidate gets ``C + 1`` (never a hit).
    """
    scores = np.asarray(scores, dtype=np.float32)
    img_q, img_c = np.asarray(image_of_query), np.asarray(image_of_candidate)
    if scores.ndim != 2 or scores.shape != (len(img_q), len(img_c)):
        raise InputError(
            "cross_lingual_ranks",
            f"scores {scores.shape} disagree with {len(img_q)} queries and {len(img_c)} candidates",
        )
    ranks = np.empty(len(img_q), dtype=np.int64)
    for lo in range(0, len(img_q), block):
        s = scores[lo : lo + block]
        ranks[lo : lo + block] = pessimistic_ranks(s, img_q[lo : lo + block, None] == img_c[None, :])
    return ranks


@dataclass(frozen=True)
class DirectionResult:
    """Recall@K in percent and the median rank of one query → candidate direction."""

    recall: dict[int, float]
    medr: float
    n_queries: int

    def as_row(self) -> dict[str, float]:
        return {**{f"r{k}": v for k, v in self.recall.items()}, "medr": self.medr, "n_queries": self.n_queries}


def ranks_to_result(ranks: np.ndarray, ks: tuple[int, ...] = KS) -> DirectionResult:
    """R@K (percent of ranks ≤ K) and the median rank of ``ranks`` ``(Q,)``."""
    ranks = np.asarray(ranks)
    if ranks.size == 0:
        raise InputError("ranks_to_result", "no queries")
    return DirectionResult(
        {k: 100.0 * float((ranks <= k).mean()) for k in ks}, float(np.median(ranks)), int(ranks.size)
    )


def sentence_retrieval(
    emb_k: np.ndarray, image_k: np.ndarray, emb_l: np.ndarray, image_l: np.ndarray, ks: tuple[int, ...] = KS
) -> tuple[DirectionResult, DirectionResult]:
    """Both directions between two languages' sentence embeddings.

    emb_k ``(S_k, D)``, emb_l ``(S_l, D)``: unit-norm embeddings (dot product =
    cosine, as MLMME's s_s); image_k ``(S_k,)``, image_l ``(S_l,)``: image ids.
    Returns (k → l, l → k).
    """
    scores = np.asarray(emb_k, dtype=np.float32) @ np.asarray(emb_l, dtype=np.float32).T
    k_to_l = cross_lingual_ranks(scores, image_k, image_l)
    l_to_k = cross_lingual_ranks(scores.T, image_l, image_k)
    return ranks_to_result(k_to_l, ks), ranks_to_result(l_to_k, ks)
