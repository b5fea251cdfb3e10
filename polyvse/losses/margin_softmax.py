"""Masked Margin Softmax and its special cases (thesis §2.2.2, eq. 2.8–2.9).

For paired batches X, Y with ``S[i, j] = S(X_i, Y_j)``, one direction is the
cross-entropy of each row against its own column after the positive score is
lowered by a margin M:

    MMS(X, Y) = -1/B · Σ_i log( e^{S_ii - M_i} / (e^{S_ii - M_i} + Σ_{k ≠ i, k ∉ Z} e^{S_ik}) )

(eq. 2.8 prints the ratio; the loss is its negative log, as in Ilharco et al.
and the thesis code). The loss is symmetric: ``L = MMS(X, Y) + MMS(Y, X)``
(eq. 2.9), i.e. rows and then columns of S. Z, the masked set, is empty for
the thesis data; ``mask`` lets a caller drop known false negatives.

Variants (thesis §3.1.4.1):

* InfoNCE: M = 0;
* MMS: fixed M = 1;
* MMS scheduled (Ilharco et al. 2019): ``M(step) = 0.001 · 1.002^{⌊step / 1000⌋}``;
* MMS adaptive / Adaptive Mean Margin (Monfort et al. 2021):
  ``M_i = α (S_ii - mean_{j ≠ i} S_ij)`` with α = 0.5, per row of the direction.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from polyvse.losses.similarity import check_square, similarity_matrix


def masked_margin_softmax(sim: Tensor, margin: float | Tensor = 0.0, mask: Tensor | None = None) -> Tensor:
    """One direction of eq. 2.8 (rows of ``sim`` are the anchors): a scalar.

    sim: ``(B, B)``; margin: a scalar or ``(B,)`` per-row margin subtracted from
    the diagonal; mask: optional ``(B, B)`` bool, True for off-diagonal entries
    to leave out of the denominator (the set Z); the diagonal is never masked.
    """
    b = check_square(sim)
    margin_t = torch.as_tensor(margin, dtype=sim.dtype, device=sim.device)
    if margin_t.dim() == 0:
        margin_t = margin_t.expand(b)
    if margin_t.shape != (b,):
        raise ValueError(f"margin must be a scalar or ({b},), got {tuple(margin_t.shape)}")
    logits = sim - torch.diag_embed(margin_t)
    if mask is not None:
        if mask.shape != sim.shape:
            raise ValueError(f"mask {tuple(mask.shape)} does not match sim {tuple(sim.shape)}")
        eye = torch.eye(b, dtype=torch.bool, device=sim.device)
        logits = logits.masked_fill(mask.to(torch.bool) & ~eye, float("-inf"))
    target = torch.arange(b, device=sim.device)
    return F.cross_entropy(logits, target)


def mms_loss(sim: Tensor, margin: float | Tensor = 0.0, mask: Tensor | None = None) -> Tensor:
    """Eq. 2.9: ``MMS(X, Y) + MMS(Y, X)`` with the same margin both ways. ``sim`` ``(B, B)``."""
    mask_t = None if mask is None else mask.T
    return masked_margin_softmax(sim, margin, mask) + masked_margin_softmax(sim.T, margin, mask_t)


def info_nce_loss(sim: Tensor, mask: Tensor | None = None) -> Tensor:
    """InfoNCE as the thesis names it: eq. 2.9 with M = 0. ``sim`` ``(B, B)``."""
    return mms_loss(sim, 0.0, mask)


def scheduled_margin(
    step: int, base: float = 0.001, growth: float = 1.002, every: int = 1000, max_margin: float | None = None
) -> float:
    """Ilharco et al. (2019) margin schedule: ``base · growth^{⌊step / every⌋}``, capped at ``max_margin``.

    The defaults are those of Ilharco et al. as used by the thesis code
    (0.001, ×1.002 every 1000 steps); step counts optimiser steps from 0.
    """
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    m = base * growth ** (step // every)
    return m if max_margin is None else min(m, max_margin)


def adaptive_mean_margin(sim: Tensor, alpha: float = 0.5) -> Tensor:
    """Monfort et al. (2021) AMM margin per row: ``α (S_ii - mean_{j≠i} S_ij)``, ``(B,)``.

    For the other direction pass ``sim.T`` (rows become columns).
    """
    b = check_square(sim)
    if b < 2:
        return sim.new_zeros(b)
    diag = sim.diagonal()
    mean_neg = (sim.sum(dim=1) - diag) / (b - 1)
    return alpha * (diag - mean_neg)


def adaptive_mms_loss(
    sim: Tensor, alpha: float = 0.5, mask: Tensor | None = None, detach_margin: bool = False
) -> Tensor:
    """MMS with the adaptive mean margin in each direction (rows, then columns of ``sim``).

    The margin is part of the graph by default (as in the thesis code);
    ``detach_margin`` treats it as a constant instead.
    """
    m_rows = adaptive_mean_margin(sim, alpha)
    m_cols = adaptive_mean_margin(sim.T, alpha)
    if detach_margin:
        m_rows, m_cols = m_rows.detach(), m_cols.detach()
    mask_t = None if mask is None else mask.T
    return masked_margin_softmax(sim, m_rows, mask) + masked_margin_softmax(sim.T, m_cols, mask_t)


class MMSLoss(nn.Module):
    """Eq. 2.9 with a fixed margin on embeddings ``x``, ``y`` ``(B, D)``: InfoNCE for M = 0, MMS for M = 1."""

    def __init__(self, margin: float = 1.0, similarity: str = "dot") -> None:
        super().__init__()
        self.margin = margin
        self.similarity = similarity

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        return mms_loss(similarity_matrix(x, y, self.similarity), self.margin)


class InfoNCELoss(MMSLoss):
    """Eq. 2.9 with M = 0 on embeddings ``(B, D)``."""

    def __init__(self, similarity: str = "dot") -> None:
        super().__init__(margin=0.0, similarity=similarity)


class ScheduledMMSLoss(nn.Module):
    """MMS whose margin follows :func:`scheduled_margin`.

    The training loop calls :meth:`step` once per optimiser step (not per call:
    a multiview framework calls the loss once per view pair). The step count is a
    buffer, so it is saved and restored with ``state_dict`` when training resumes.
    """

    def __init__(
        self,
        base: float = 0.001,
        growth: float = 1.002,
        every: int = 1000,
        max_margin: float | None = None,
        similarity: str = "dot",
    ) -> None:
        super().__init__()
        self.base, self.growth, self.every, self.max_margin = base, growth, every, max_margin
        self.similarity = similarity
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    @property
    def margin(self) -> float:
        return scheduled_margin(int(self.steps), self.base, self.growth, self.every, self.max_margin)

    def step(self) -> None:
        self.steps += 1

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        return mms_loss(similarity_matrix(x, y, self.similarity), self.margin)


class AdaptiveMMSLoss(nn.Module):
    """MMS with the adaptive mean margin (α = 0.5) on embeddings ``(B, D)``."""

    def __init__(self, alpha: float = 0.5, similarity: str = "dot", detach_margin: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.similarity = similarity
        self.detach_margin = detach_margin

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        return adaptive_mms_loss(similarity_matrix(x, y, self.similarity), self.alpha, detach_margin=self.detach_margin)
