"""The six learning objectives of thesis §3.1.4.1 by config name.

Every objective is a module ``loss(x, y) -> scalar`` on two paired embedding
batches ``(B, D)``, symmetric in x and y, ready for :mod:`polyvse.losses.multiview`.
Objectives that keep a schedule (``mms_sched``) expose ``step()``; the training
loop calls it once per optimiser step (:func:`step_objective`).

The scheduled margin counts absolute optimiser steps, not a share of the run:
the thesis defines MMS_Sch. only as "scheduled updates for M following the
original work by Ilharco et al." (§3.1.4.1), and Ilharco et al.'s schedule is
``M = 0.001 · 1.002^⌊step / 1000⌋`` (:func:`polyvse.losses.margin_softmax.scheduled_margin`).
Over the thesis' 75 epochs of 774 steps (58,050) M makes 58 increments, to
0.00112; a shorter run sees fewer (the default config's at most 1,280 steps: none). The
``every`` option compresses the schedule into a short run (the default config's
ablation row "MMS_Sch. †", ``every: 22``); the thesis' own setting is the default.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from polyvse.losses.hypersphere import HypersphereLoss
from polyvse.losses.imposter_triplet import ImposterTripletLoss
from polyvse.losses.margin_softmax import AdaptiveMMSLoss, InfoNCELoss, MMSLoss, ScheduledMMSLoss

OBJECTIVES: dict[str, type[nn.Module]] = {
    "hypersphere": HypersphereLoss,  # λ_a, λ_u, t, α (Table 3.1)
    "triplet": ImposterTripletLoss,  # random + hardest imposters, margin 1
    "infonce": InfoNCELoss,  # MMS with M = 0
    "mms": MMSLoss,  # M = 1
    "mms_sched": ScheduledMMSLoss,  # Ilharco schedule
    "mms_adapt": AdaptiveMMSLoss,  # Monfort AMM, α = 0.5
}


def make_objective(name: str, **params: Any) -> nn.Module:
    """Build the objective ``name`` of :data:`OBJECTIVES` with keyword ``params``
    (e.g. ``make_objective("hypersphere", lambda_u=0.75)``, ``similarity="cosine"``)."""
    try:
        cls = OBJECTIVES[name]
    except KeyError:
        raise ValueError(f"unknown objective {name!r}; expected one of {sorted(OBJECTIVES)}") from None
    return cls(**params)


def step_objective(objective: nn.Module) -> None:
    """Advance an objective's schedule by one optimiser step (no-op for objectives without one)."""
    step = getattr(objective, "step", None)
    if callable(step):
        step()
