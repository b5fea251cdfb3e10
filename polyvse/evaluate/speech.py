"""Retrieval between every pair of views (thesis §3.1.3).

For a view pair (A, B) of N datapoints, each A viewpoint retrieves among the N B
viewpoints and vice versa; the truth of query i is candidate i, and the reported
R@K is the mean of the two directions. Pairs are named as
in the thesis tables: ``E&I``, ``H&I``, ``J&I`` (image retrieval, a language with
the image), then ``H&E``, ``J&E``, ``J&H`` (cross-lingual). Scores are dot
products; for the hypersphere loss (or a cosine similarity) the embeddings are
unit-normalised first (§3.1.3).

Ties count against the ground truth, the convention of every retrieval metric
of the project: a candidate scoring the same as the truth ranks above it, so
``rank = 1 + #{other candidates scoring >= the truth}``
(:func:`polyvse.evaluate.retrieval.pessimistic_ranks`, shared with the text
metric). A collapsed model (constant embeddings, which the thesis meets with
λ_u = .5 in Table 3.1 and the average-all anchor in Table 4.1) therefore ranks
every truth last and scores 0 %, never a free 100 %. The thesis prints chance
level for such rows (0.10 / 0.50 / 1.00 % on 1,000 test images, what random
tie-breaking gives); under this convention they read 0 %.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from polyvse.evaluate.retrieval import KS, one_hot_truth, pessimistic_ranks
from polyvse.evaluate.views import IMAGE_VIEW, ORDERED_COLUMNS, view_pairs
from polyvse.speech.data import ViewSet
from polyvse.models.grounded_speech import GroundedSpeechModel


@torch.no_grad()
def embed_views(
    model: GroundedSpeechModel,
    views: ViewSet,
    features: Tensor,
    batch_size: int = 64,
    device: torch.device | str = "cpu",
) -> dict[str, np.ndarray]:
    """Every view of ``views`` embedded: ``{"image": (N, D), lang: (N, D)}`` float32, datapoint order.

    Utterances are batched by length (less padding); masking makes the result
    independent of the batching.
    """
    model.eval()
    rows = torch.as_tensor(views.image_rows, dtype=torch.long)
    out = {
        IMAGE_VIEW: torch.cat(
            [
                model.embed_images(features[rows[i : i + 1024]].float().to(device)).cpu()
                for i in range(0, len(rows), 1024)
            ]
        ).numpy()
    }
    for lang in views.langs:
        order = np.argsort(views.lengths(lang), kind="stable")
        emb = np.empty((len(views), model.embed_dim), dtype=np.float32)
        for lo in range(0, len(order), batch_size):
            index = order[lo : lo + batch_size]
            batch = views.batch(index, features, device)
            x, lengths = batch["speech"][lang]  # type: ignore[index]
            emb[index] = model.embed_speech(lang, x, lengths).float().cpu().numpy()
        out[lang] = emb
    return out


def diagonal_ranks(scores: np.ndarray, block: int = 2048) -> np.ndarray:
    """For ``scores`` ``(N, N)`` whose row i's truth is column i: the 1-based pessimistic rank
    of every row's truth, ``1 + #{j != i : scores[i, j] >= scores[i, i]}``, ``(N,)`` int64."""
    scores = np.asarray(scores)
    n = scores.shape[0]
    if scores.ndim != 2 or scores.shape[1] != n:
        raise ValueError(f"expected a square (N, N) score matrix, got {scores.shape}")
    ranks = np.empty(n, dtype=np.int64)
    for lo in range(0, n, block):
        s = scores[lo : lo + block]
        ranks[lo : lo + block] = pessimistic_ranks(s, one_hot_truth(np.arange(lo, lo + len(s)), n))
    return ranks


def diagonal_recalls(scores: np.ndarray, ks: Sequence[int] = KS) -> tuple[dict[int, float], float]:
    """R@K in percent of the row queries of ``scores`` ``(N, N)`` (truth on the diagonal) and
    their median rank, both from :func:`diagonal_ranks` (ties count against the truth)."""
    ranks = diagonal_ranks(np.asarray(scores, dtype=np.float32))
    return {k: 100.0 * float((ranks <= k).mean()) for k in ks}, float(np.median(ranks))


def pair_retrieval(
    embeddings: Mapping[str, np.ndarray], langs: Sequence[str], normalize: bool = False, ks: Sequence[int] = KS
) -> pd.DataFrame:
    """One row per view pair: ``pair, kind, view_a, view_b``, the averaged ``r1 r5 r10``, each
    direction (``r1_ab`` = A queries retrieving B, ``r1_ba``), recalls in percent, and each
    direction's median rank (``medr_ab``, ``medr_ba``, 1-based; ties count against the truth)."""
    emb = {k: np.asarray(v, dtype=np.float32) for k, v in embeddings.items()}
    if normalize:
        emb = {k: v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12) for k, v in emb.items()}
    rows = []
    for name, a, b, kind in view_pairs(langs):
        scores = emb[a] @ emb[b].T  # (N, N): A queries are rows, B queries columns
        ab, medr_ab = diagonal_recalls(scores, ks)
        ba, medr_ba = diagonal_recalls(scores.T, ks)
        row = {"pair": name, "kind": kind, "view_a": a, "view_b": b}
        row.update({f"r{k}": (ab[k] + ba[k]) / 2.0 for k in ks})
        row.update({f"r{k}_ab": ab[k] for k in ks})
        row.update({f"r{k}_ba": ba[k] for k in ks})
        row.update(medr_ab=medr_ab, medr_ba=medr_ba, n=int(scores.shape[0]))
        rows.append(row)
    return pd.DataFrame(rows)


def mean_recall(table: pd.DataFrame, kind: str | None = None, ks: Sequence[int] = KS) -> float:
    """Mean of the averaged R@K over the pairs (of ``kind``, when given) and K."""
    sub = table if kind is None else table[table["kind"] == kind]
    return float(sub[[f"r{k}" for k in ks]].to_numpy().mean())


def retrieval_scores(table: pd.DataFrame) -> dict[str, float]:
    """The validation columns of the per-epoch log: ``val_recall`` (all pairs; selects the
    best epoch), ``val_image_recall`` and ``val_cross_recall``."""
    return {
        "val_recall": mean_recall(table),
        "val_image_recall": mean_recall(table, "image"),
        "val_cross_recall": mean_recall(table, "cross"),
    }


def evaluate_views(
    model: GroundedSpeechModel,
    views: ViewSet,
    features: Tensor,
    normalize: bool,
    batch_size: int = 64,
    device: torch.device | str = "cpu",
) -> pd.DataFrame:
    """:func:`pair_retrieval` of a trained model on one split."""
    return pair_retrieval(embed_views(model, views, features, batch_size, device), views.langs, normalize)


def ordered_pair_retrieval(
    embeddings: Mapping[str, np.ndarray], views: Sequence[str], normalize: bool = False, ks: Sequence[int] = KS
) -> pd.DataFrame:
    """Retrieval between every ordered pair of ``views`` (any-to-any): one row per
    (query view, target view), query ≠ target, in ``views`` order; each query item retrieves
    among the N target items, its truth the item of the same datapoint. Columns
    :data:`ORDERED_COLUMNS`: recalls in percent, ``mr`` their mean, ``medr`` the median rank
    (ties count against the truth). ``embeddings``: view → ``(N, D)``."""
    emb = {v: np.asarray(embeddings[v], dtype=np.float32) for v in views}
    if normalize:
        emb = {k: v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12) for k, v in emb.items()}
    rows = []
    for query in views:
        for target in views:
            if query == target:
                continue
            recalls, medr = diagonal_recalls(emb[query] @ emb[target].T, ks)
            row: dict[str, object] = {"query": query, "target": target}
            row.update({f"r{k}": recalls[k] for k in ks})
            row.update(mr=float(np.mean([recalls[k] for k in ks])), medr=medr, n=int(len(emb[query])))
            rows.append(row)
    return pd.DataFrame(rows, columns=[*ORDERED_COLUMNS[:2], *(f"r{k}" for k in ks), *ORDERED_COLUMNS[-3:]])
