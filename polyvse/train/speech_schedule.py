"""Optimiser and learning-rate schedule of thesis §3.1.2.

Adam with β = (0.9, 0.999), learning rate 1e-3; the rate rises linearly from 0
over the first 10 % of the training steps, then is multiplied by 0.99 after
every 50 steps (counted from the end of the warm-up).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Iterable

import torch
from polyvse.optim import FusedAdam, adam
from polyvse.train.lr_schedules import StepSchedule, WarmupCosine

SPEECH_LR_SCHEDULES = ("step_decay", "cosine")
"""``speech.training.lr_schedule``: the thesis' :class:`WarmupStepDecay`, or the same warm-up followed by a half
cosine to 0 at the epochs ceiling (:class:`polyvse.train.lr_schedules.WarmupCosine`)."""


@dataclass(frozen=True)
class WarmupStepDecay:
    """The multiplier of the base rate at a given step.

    step < W:  ``(step + 1) / W`` — linear, reaching the full rate at the last
    warm-up step (starting at ``1/W``, not 0, so that no step is wasted);
    step ≥ W:  ``decay^{⌊(step - W) / every⌋}``; with ``W = ceil(warmup_fraction · total_steps)``.
    """

    total_steps: int
    warmup_fraction: float = 0.1
    decay: float = 0.99
    every: int = 50

    def __post_init__(self) -> None:
        if self.total_steps < 1:
            raise ValueError(f"total_steps must be >= 1, got {self.total_steps}")
        if not 0.0 <= self.warmup_fraction < 1.0:
            raise ValueError(f"warmup_fraction must be in [0, 1), got {self.warmup_fraction}")
        if self.every < 1:
            raise ValueError(f"every must be >= 1, got {self.every}")

    @property
    def warmup_steps(self) -> int:
        return math.ceil(self.warmup_fraction * self.total_steps)

    def __call__(self, step: int) -> float:
        w = self.warmup_steps
        if step < w:
            return (step + 1) / w
        return self.decay ** ((step - w) // self.every)


def make_adam(
    params: Iterable[torch.nn.Parameter] | Iterable[dict],
    lr: float = 1e-3,
    betas: tuple[float, float] = (0.9, 0.999),
    weight_decay: float = 0.0,
) -> FusedAdam:
    """Adam as §3.1.2 (β₁ = 0.9, β₂ = 0.999, lr = 1e-3)."""
    return adam(params, lr=lr, betas=betas, weight_decay=weight_decay)


def warmup_step_decay_scheduler(
    optimizer: FusedAdam,
    total_steps: int,
    warmup_fraction: float = 0.1,
    decay: float = 0.99,
    every: int = 50,
) -> StepSchedule:
    """:class:`StepSchedule` applying :class:`WarmupStepDecay`; call ``scheduler.step()`` after every optimiser step."""
    return StepSchedule(optimizer, WarmupStepDecay(total_steps, warmup_fraction, decay, every))


def speech_lr_scheduler(
    optimizer: FusedAdam,
    kind: str,
    total_steps: int,
    warmup_fraction: float = 0.1,
    decay: float = 0.99,
    every: int = 50,
) -> StepSchedule:
    """The schedule ``kind`` (:data:`SPEECH_LR_SCHEDULES`) over ``total_steps`` optimiser steps, both with a
    linear warm-up over ``warmup_fraction`` of them; ``decay`` and ``every`` are the step decay's."""
    if kind == "step_decay":
        return warmup_step_decay_scheduler(optimizer, total_steps, warmup_fraction, decay, every)
    if kind != "cosine":
        raise ValueError(f"lr_schedule: unknown schedule {kind!r} (one of {', '.join(SPEECH_LR_SCHEDULES)})")
    warmup = WarmupStepDecay(total_steps, warmup_fraction).warmup_steps
    return StepSchedule(optimizer, WarmupCosine(total_steps, min(total_steps - 1, warmup)))
