"""Gradient reversal (Ganin & Lempitsky 2015) and the DANN weight schedule.

MULE "Language Domain Alignment" (eq. 2, 4) and SMALR §3.3 (L_adv): a language
classifier on the universal sentence vectors u minimises its cross-entropy,
while the language-specific parameters below it maximise it. A gradient
reversal layer does both in one backward pass: identity forward, gradient
multiplied by ``-λ`` backward.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class _ReverseGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, weight: float) -> Tensor:  # noqa: D401
        ctx.weight = weight
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:
        return -ctx.weight * grad, None


def reverse_gradient(x: Tensor, weight: float = 1.0) -> Tensor:
    """Identity on ``x``; the gradient flowing back is multiplied by ``-weight``."""
    return _ReverseGradient.apply(x, float(weight))


class GradientReversal(nn.Module):
    """:func:`reverse_gradient` as a module; set ``weight`` as training progresses."""

    def __init__(self, weight: float = 1.0):
        super().__init__()
        self.weight = float(weight)

    def forward(self, x: Tensor) -> Tensor:
        return reverse_gradient(x, self.weight)

    def extra_repr(self) -> str:
        return f"weight={self.weight}"


def dann_lambda(progress: float, gamma: float = 10.0) -> float:
    """DANN schedule ``λ_p = 2 / (1 + exp(-γ p)) - 1`` for training progress p ∈ [0, 1].

    Starts at 0 (the classifier is random early on, its reversed gradient is
    noise) and approaches 1.
    """
    p = min(max(float(progress), 0.0), 1.0)
    return 2.0 / (1.0 + math.exp(-gamma * p)) - 1.0
