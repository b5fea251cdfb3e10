"""Hypersphere loss: alignment + uniformity (thesis §2.2.3, eq. 2.10; Wang & Isola 2020).

Works on the two embedding batches ``x``, ``y`` ``(B, D)`` (row i of each paired),
unit-normalised first: the loss is defined on the hypersphere, and the thesis
normalises the outputs for retrieval for the same reason (§3.1.3).

* alignment ``A(X, Y) = 1/B Σ_i ||X_i - Y_i||^α`` (α = 2);
* uniformity as the thesis prints it,
  ``U(X, Y) = 1/(B(B+1)/2) Σ_i Σ_{j≥i} exp(-t ||X_i - Y_j||²)`` (t = 2). This form
  reads only the upper triangle, so it is not symmetric in X and Y; we use
  ``½ (U(X, Y) + U(Y, X)) = (Σ_{i,j} K_ij + Σ_i K_ii) / (B(B+1))`` with
  ``K_ij = exp(-t ||X_i - Y_j||²)``, which is;
* ``uniformity="wang"`` gives Wang & Isola's original instead: the log of the
  mean Gaussian potential over the pairs within each view, averaged over the
  two views (what the thesis code calls its "custom" uniformity).

``L = λ_a · A + λ_u · U`` (eq. 2.10) with λ_a = 1 and λ_u ∈ {1, .875, .75, .5}
(Table 3.1).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

UNIFORMITIES: tuple[str, ...] = ("thesis", "wang")


def _squared_distances(x: Tensor, y: Tensor) -> Tensor:
    """``(B, D), (C, D) -> (B, C)`` squared Euclidean distances.

    Expanded form instead of ``cdist`` so that the gradient at distance 0 (a
    positive pair that has collapsed) is finite.
    """
    d = (x * x).sum(-1, keepdim=True) + (y * y).sum(-1).unsqueeze(0) - 2.0 * x @ y.T
    return d.clamp(min=0.0)


def alignment(x: Tensor, y: Tensor, alpha: float = 2.0) -> Tensor:
    """``1/B Σ_i ||x_i - y_i||^α`` over paired rows ``(B, D)``."""
    sq = (x - y).pow(2).sum(-1)
    return sq.pow(alpha / 2.0).mean()


def uniformity(x: Tensor, y: Tensor, t: float = 2.0) -> Tensor:
    """The thesis uniformity, symmetrised: ``(Σ_ij K_ij + tr K) / (B(B+1))``, ``K = exp(-t d²)``."""
    b = x.shape[0]
    k = torch.exp(-t * _squared_distances(x, y))
    return (k.sum() + k.diagonal().sum()) / (b * (b + 1))


def uniformity_wang(x: Tensor, y: Tensor, t: float = 2.0) -> Tensor:
    """Wang & Isola: ``½ Σ_{V ∈ {x, y}} log mean_{i<j} exp(-t ||V_i - V_j||²)``; needs B ≥ 2."""
    if x.shape[0] < 2:
        raise ValueError("Wang & Isola's uniformity needs a batch of at least 2")

    def one_view(v: Tensor) -> Tensor:
        b = v.shape[0]
        iu = torch.triu_indices(b, b, offset=1, device=v.device)
        d = _squared_distances(v, v)[iu[0], iu[1]]
        return torch.logsumexp(-t * d, dim=0) - torch.log(torch.tensor(float(d.numel()), device=v.device))

    return 0.5 * (one_view(x) + one_view(y))


def hypersphere_loss(
    x: Tensor,
    y: Tensor,
    lambda_a: float = 1.0,
    lambda_u: float = 1.0,
    t: float = 2.0,
    alpha: float = 2.0,
    uniformity_kind: str = "thesis",
    normalize: bool = True,
) -> Tensor:
    """Eq. 2.10 on embeddings ``x``, ``y`` ``(B, D)``: ``λ_a · A(x, y) + λ_u · U(x, y)``, a scalar."""
    if uniformity_kind not in UNIFORMITIES:
        raise ValueError(f"unknown uniformity {uniformity_kind!r}; expected one of {UNIFORMITIES}")
    if x.shape != y.shape or x.dim() != 2:
        raise ValueError(f"expected two (B, D) batches of one shape, got {tuple(x.shape)} and {tuple(y.shape)}")
    if normalize:
        x = F.normalize(x, dim=-1)
        y = F.normalize(y, dim=-1)
    u = uniformity(x, y, t) if uniformity_kind == "thesis" else uniformity_wang(x, y, t)
    return lambda_a * alignment(x, y, alpha) + lambda_u * u


class HypersphereLoss(nn.Module):
    """Eq. 2.10 as a module on embeddings ``(B, D)``; see :func:`hypersphere_loss`."""

    def __init__(
        self,
        lambda_a: float = 1.0,
        lambda_u: float = 1.0,
        t: float = 2.0,
        alpha: float = 2.0,
        uniformity_kind: str = "thesis",
        normalize: bool = True,
    ) -> None:
        super().__init__()
        if uniformity_kind not in UNIFORMITIES:
            raise ValueError(f"unknown uniformity {uniformity_kind!r}; expected one of {UNIFORMITIES}")
        self.lambda_a, self.lambda_u, self.t, self.alpha = lambda_a, lambda_u, t, alpha
        self.uniformity_kind = uniformity_kind
        self.normalize = normalize

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        return hypersphere_loss(
            x, y, self.lambda_a, self.lambda_u, self.t, self.alpha, self.uniformity_kind, self.normalize
        )
