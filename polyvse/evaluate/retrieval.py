"""Bidirectional image–sentence retrieval metrics with the label-matrix convention.

SMALR §4 "Metrics" and MULE "Metrics": Recall@K for K in (1, 5, 10) in both
directions, mR = the mean of those six values, and the median rank. An image
query is a hit at K when *any* of its ground-truth sentences is in the top K;
a sentence query is a hit when its image is.

Ties count against the ground truth (pessimistic ranks, :func:`pessimistic_ranks`):
a candidate scoring the same as the ground truth ranks above it, so
``rank = 1 + #{non-ground-truth candidates scoring >= the (best) ground truth}``.
A collapsed model that scores everything alike gets rank N, never a free hit.
This is the one tie convention of the project: the speech metric
(:mod:`polyvse.evaluate.speech`) ranks with the same function.

Ranks are computed blockwise from one matrix product per block: memory stays
bounded for MSCOCO-sized test sets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KS: tuple[int, ...] = (1, 5, 10)


@dataclass(frozen=True)
class RetrievalResult:
    """Recalls in percent, median ranks (1-based), and mR."""

    t2i: dict[int, float]
    i2t: dict[int, float]
    medr_t2i: float
    medr_i2t: float

    @property
    def mean_recall(self) -> float:
        return float(np.mean(list(self.t2i.values()) + list(self.i2t.values())))

    def as_row(self) -> dict[str, float]:
        row = {f"r{k}_t2i": v for k, v in self.t2i.items()}
        row.update({f"r{k}_i2t": v for k, v in self.i2t.items()})
        row.update(medr_t2i=self.medr_t2i, medr_i2t=self.medr_i2t, mR=self.mean_recall)
        return row


def pessimistic_ranks(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """1-based rank of the best-scored ground truth of every query, ties counted against it.

    scores: ``(Q, C)`` similarity of query q to candidate c; truth: ``(Q, C)`` bool,
    True where c is a ground truth of q (one or several per row).
    ``rank_q = 1 + #{c : not truth[q, c] and scores[q, c] >= max_{truth} scores[q, ·]}``;
    a query without any ground truth gets ``C + 1`` (it can never be a hit).
    Returns ``(Q,)`` int64. One block at a time: callers slice large matrices.
    """
    scores, truth = np.asarray(scores), np.asarray(truth, dtype=bool)
    if scores.ndim != 2 or truth.shape != scores.shape:
        raise ValueError(f"scores {scores.shape} and ground-truth mask {truth.shape} must be the same (Q, C)")
    best = np.where(truth, scores, -np.inf).max(axis=1, initial=-np.inf)
    ranks = ((scores >= best[:, None]) & ~truth).sum(axis=1).astype(np.int64) + 1
    ranks[~truth.any(axis=1)] = scores.shape[1] + 1
    return ranks


def one_hot_truth(columns: np.ndarray, n_candidates: int) -> np.ndarray:
    """``(Q, n_candidates)`` bool mask with row q True at ``columns[q]`` (one ground truth per query)."""
    columns = np.asarray(columns, dtype=np.int64)
    return columns[:, None] == np.arange(n_candidates)[None, :]


def sentence_to_image_ranks(scores: np.ndarray, image_of_sentence: np.ndarray, block: int = 4096) -> np.ndarray:
    """Rank of the ground-truth image for every sentence query.

    scores: ``(S, N)`` similarity of sentence s to image n; image_of_sentence: ``(S,)``.
    Returns ``(S,)`` 1-based ranks.
    """
    ranks = np.empty(scores.shape[0], dtype=np.int64)
    for lo in range(0, scores.shape[0], block):
        s = scores[lo : lo + block]
        ranks[lo : lo + block] = pessimistic_ranks(s, one_hot_truth(image_of_sentence[lo : lo + block], s.shape[1]))
    return ranks


def image_to_sentence_ranks(scores: np.ndarray, image_of_sentence: np.ndarray, block: int = 1024) -> np.ndarray:
    """Rank of the best-ranked ground-truth sentence for every image query.

    scores: ``(S, N)`` as above. Returns ``(N,)`` 1-based ranks; an image with no
    sentence gets rank ``S + 1`` (it can never be a hit).
    """
    n_images = scores.shape[1]
    ranks = np.empty(n_images, dtype=np.int64)
    for lo in range(0, n_images, block):
        s = scores[:, lo : lo + block].T  # (n, S)
        gt = image_of_sentence[None, :] == np.arange(lo, lo + s.shape[0])[:, None]
        ranks[lo : lo + block] = pessimistic_ranks(s, gt)
    return ranks


def bidirectional_retrieval(
    scores: np.ndarray, image_of_sentence: np.ndarray, ks: tuple[int, ...] = KS
) -> RetrievalResult:
    """R@K in both directions, median ranks and mR for one language.

    scores: ``(S, N)`` sentence-by-image similarities; image_of_sentence: ``(S,)``
    column index of each sentence's image. Images without a sentence are scored
    as image queries that never hit (the caller filters them out if unwanted).
    """
    scores = np.asarray(scores, dtype=np.float32)
    image_of_sentence = np.asarray(image_of_sentence, dtype=np.int64)
    if scores.ndim != 2 or scores.shape[0] != image_of_sentence.shape[0]:
        raise ValueError(f"scores {scores.shape} and labels {image_of_sentence.shape} disagree")
    t2i = sentence_to_image_ranks(scores, image_of_sentence)
    i2t = image_to_sentence_ranks(scores, image_of_sentence)
    return RetrievalResult(
        t2i={k: 100.0 * float((t2i <= k).mean()) for k in ks},
        i2t={k: 100.0 * float((i2t <= k).mean()) for k in ks},
        medr_t2i=float(np.median(t2i)),
        medr_i2t=float(np.median(i2t)),
    )
