"""Learning-rate schedules, applied per optimiser step and resumed from a checkpoint.

:class:`StepSchedule` sets every parameter group's rate to its base rate times a multiplier of the
step; the multipliers here are pure functions of the step count. The thesis' warm-up and step decay
(§3.1.2) is :class:`polyvse.train.speech_schedule.WarmupStepDecay`; the word models' is
:class:`WarmupCosine`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

LR_SCHEDULES = ("constant", "cosine")
"""``training.lr_schedule``: one rate throughout, or :class:`WarmupCosine` over the epochs ceiling."""


@dataclass(frozen=True)
class WarmupCosine:
    """The multiplier of the base rate at optimiser step ``step`` (from 0) of ``total_steps``.

    step < W: ``(step + 1) / W``, a linear warm-up reaching the full rate at its last step;
    step ≥ W: ``½ (1 + cos(π (step − W) / (total_steps − W)))``, a half cosine from 1 to 0 at
    ``total_steps`` (SGDR without restarts, Loshchilov & Hutter 2017; VSE++ divides its rate by ten
    half-way instead, Faghri et al. 2018 §4). Steps past ``total_steps`` stay at 0.
    """

    total_steps: int
    warmup_steps: int = 0

    def __post_init__(self) -> None:
        if self.total_steps < 1:
            raise ValueError(f"total_steps must be >= 1, got {self.total_steps}")
        if not 0 <= self.warmup_steps < self.total_steps:
            raise ValueError(f"warmup_steps must be in [0, total_steps), got {self.warmup_steps} of {self.total_steps}")

    def __call__(self, step: int) -> float:
        w = self.warmup_steps
        if step < w:
            return (step + 1) / w
        done = min(1.0, (step - w) / (self.total_steps - w))
        return 0.5 * (1.0 + math.cos(math.pi * done))


class StepSchedule:
    """Sets each parameter group's rate to its base rate times ``multiplier(step)``, the step
    counted from 0 at construction; ``step()`` after every optimiser step. ``LambdaLR``'s
    rule and state-dict keys (``last_epoch``, ``base_lrs``), on polyvse's optimisers (any object
    with ``param_groups``)."""

    def __init__(self, optimizer: Any, multiplier: Callable[[int], float]) -> None:
        self.optimizer, self.multiplier = optimizer, multiplier
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.last_epoch = 0
        self._apply()

    def _apply(self) -> None:
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base * self.multiplier(self.last_epoch)

    def step(self) -> None:
        self.last_epoch += 1
        self._apply()

    def state_dict(self) -> dict[str, Any]:
        return {"last_epoch": self.last_epoch, "base_lrs": list(self.base_lrs)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.last_epoch, self.base_lrs = int(state["last_epoch"]), list(state["base_lrs"])
        self._apply()


def lr_schedule(
    optimizer: Any, kind: str, epochs: int, batches_per_epoch: int, warmup_epochs: float = 0.0
) -> StepSchedule | None:
    """The ``training.lr_schedule`` named ``kind`` over ``epochs × batches_per_epoch`` optimiser
    steps, its warm-up ``warmup_epochs`` epochs long; ``None`` for ``constant``."""
    if kind == "constant":
        return None
    if kind != "cosine":
        raise ValueError(f"training.lr_schedule: unknown schedule {kind!r} (one of {', '.join(LR_SCHEDULES)})")
    total = max(1, epochs * batches_per_epoch)
    warmup = min(total - 1, round(warmup_epochs * batches_per_epoch))
    return StepSchedule(optimizer, WarmupCosine(total, warmup))
