"""Multiview contrasting frameworks (thesis §2.3 after Tian et al.'s CMC, and §4.1).

Every framework takes the K view embeddings of one batch, ``[(B, D)] * K``, row i
of every view belonging to datapoint i (view 0 is the image by convention), and
a symmetric pairwise loss ``loss(V_a, V_b) -> scalar``, and returns the total.

* full graph: the mean over every pair of distinct views. §2.3 prints the
  normaliser K(K+1)/2 with ``t ≥ j``, which would contrast each view with itself;
  CMC's full graph (which the thesis follows) uses the K(K-1)/2 pairs ``j < t``,
  and so do we;
* anchor: the mean over the K-1 pairs that include the anchor view (the image
  view for "image anchor", §4.1);
* average-all anchor: the anchor is the per-datapoint centroid of all K views;
  the mean over the K pairs (centroid, view k). The centroid is not detached:
  each view sits on both sides of its term, which the thesis suspects made this
  variant unstable (§4.2);
* average-others anchor: view k against the centroid of the other K-1 views;
  the mean over k.
"""

from __future__ import annotations

from itertools import combinations
from typing import Callable, Sequence

import torch
from torch import Tensor

PairLoss = Callable[[Tensor, Tensor], Tensor]


def _check_views(views: Sequence[Tensor], minimum: int = 2) -> None:
    if len(views) < minimum:
        raise ValueError(f"need at least {minimum} views, got {len(views)}")
    shape = views[0].shape
    if len(shape) != 2 or any(v.shape != shape for v in views):
        raise ValueError(f"views must all be (B, D) of one shape, got {[tuple(v.shape) for v in views]}")


def full_graph(views: Sequence[Tensor], loss: PairLoss) -> Tensor:
    """Mean of ``loss(V_j, V_t)`` over the K(K-1)/2 pairs ``j < t``."""
    _check_views(views)
    terms = [loss(views[j], views[t]) for j, t in combinations(range(len(views)), 2)]
    return torch.stack(terms).mean()


def anchor(views: Sequence[Tensor], loss: PairLoss, anchor_index: int = 0) -> Tensor:
    """Mean of ``loss(V_anchor, V_t)`` over the K-1 other views (image anchor: index 0)."""
    _check_views(views)
    if not 0 <= anchor_index < len(views):
        raise ValueError(f"anchor_index {anchor_index} out of range for {len(views)} views")
    terms = [loss(views[anchor_index], v) for t, v in enumerate(views) if t != anchor_index]
    return torch.stack(terms).mean()


def average_all_anchor(views: Sequence[Tensor], loss: PairLoss) -> Tensor:
    """Mean over k of ``loss(C, V_k)`` with ``C`` the mean of all K views ``(B, D)``."""
    _check_views(views)
    centroid = torch.stack(list(views)).mean(dim=0)
    return torch.stack([loss(centroid, v) for v in views]).mean()


def average_others_anchor(views: Sequence[Tensor], loss: PairLoss) -> Tensor:
    """Mean over k of ``loss(V_k, C_{-k})`` with ``C_{-k}`` the mean of the other K-1 views."""
    _check_views(views)
    stacked = torch.stack(list(views))  # (K, B, D)
    total = stacked.sum(dim=0)
    k = len(views)
    terms = [loss(v, (total - v) / (k - 1)) for v in views]
    return torch.stack(terms).mean()


FRAMEWORKS: dict[str, Callable[[Sequence[Tensor], PairLoss], Tensor]] = {
    "full_graph": full_graph,
    "image_anchor": lambda views, loss: anchor(views, loss, 0),
    "average_all": average_all_anchor,
    "average_others": average_others_anchor,
}
"""Names as config values; "image_anchor" assumes the image is view 0."""


def multiview_loss(framework: str, views: Sequence[Tensor], loss: PairLoss) -> Tensor:
    """Dispatch on a framework name of :data:`FRAMEWORKS`."""
    try:
        fn = FRAMEWORKS[framework]
    except KeyError:
        raise ValueError(f"unknown multiview framework {framework!r}; expected one of {sorted(FRAMEWORKS)}") from None
    return fn(views, loss)
