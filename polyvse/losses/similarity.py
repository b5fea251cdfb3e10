"""Similarity matrices between two batches of embeddings.

Thesis §3.1.3 scores pairs with the dot product (and notes that unit-normalising
first makes it the cosine); every contrastive loss in this package that works
on a similarity matrix takes ``S[i, j] = S(X_i, Y_j)`` built here.
"""

from __future__ import annotations

import torch
from torch import Tensor

SIMILARITIES: tuple[str, ...] = ("dot", "cosine")


def similarity_matrix(x: Tensor, y: Tensor, kind: str = "dot") -> Tensor:
    """``(B, D), (C, D) -> (B, C)`` with ``S[i, j] = sim(x_i, y_j)``.

    kind: ``"dot"`` (thesis §3.1.3) or ``"cosine"`` (dot product of unit vectors).
    """
    if kind not in SIMILARITIES:
        raise ValueError(f"unknown similarity {kind!r}; expected one of {SIMILARITIES}")
    if x.dim() != 2 or y.dim() != 2 or x.shape[1] != y.shape[1]:
        raise ValueError(f"expected (B, D) and (C, D) embeddings, got {tuple(x.shape)} and {tuple(y.shape)}")
    if kind == "cosine":
        x = torch.nn.functional.normalize(x, dim=-1)
        y = torch.nn.functional.normalize(y, dim=-1)
    return x @ y.T


def check_square(sim: Tensor) -> int:
    """Return B for a ``(B, B)`` similarity matrix of paired batches; raise otherwise."""
    if sim.dim() != 2 or sim.shape[0] != sim.shape[1]:
        raise ValueError(f"expected a square (B, B) similarity matrix, got {tuple(sim.shape)}")
    return sim.shape[0]
