"""A warm-up of the hinge losses' negatives: every negative of the batch first, the papers'
most violated ones after.

Why: SMALR eq. (1)/(3) and MULE eq. (1)/(3) keep, for each positive pair, its K = 10 most violated
negatives. A freshly initialised model maps every sentence near one point and every image near
another (the biases and the L2 norm dominate small inputs), so all distances are nearly equal and
every hinge term sits at its margin: the loss reads ``m · (1 + λ1)`` = 0.125, and the K "hardest"
negatives are whichever the noise ranks first. Their gradients point in directions that change
from step to step, and the models stayed on that plateau for tens of epochs (SMALR(10): 20 epochs
at 0.13 before it learned). Averaged over every negative the same hinge has one consistent
direction at the start (pull the positive in, push the batch's mean away), as in the sum-of-hinges
loss that VSE++ (Faghri et al. 2018) trains before its hardest-negative loss. The warm-up lasts a
fixed number of optimiser steps; after it the objective is the paper's, so that what the model
converges to is the paper's objective.
"""

from __future__ import annotations

from polyvse.train.steps import StepCounted

EVERY_NEGATIVE = 2**31 - 1
"""A ``top_k`` larger than any batch: the hinge keeps every negative (:func:`polyvse.losses.triplet.top_k_hinge`
takes the smaller of ``top_k`` and the number of negatives)."""


class NegativesWarmup(StepCounted):
    """Sets ``objective.top_k`` to :data:`EVERY_NEGATIVE` for the first ``steps`` optimiser steps,
    then back to the objective's own ``top_k``. Its step count travels in the checkpoint, so a
    resumed training continues the warm-up where it stopped."""

    def __init__(self, objective: object, steps: int):
        if steps < 0:
            raise ValueError(f"a warm-up of negatives lasts 0 or more steps, got {steps}")
        self.objective, self.warmup, self.steps = objective, int(steps), 0
        self.top_k = getattr(objective, "top_k", None)
        self._publish()

    @property
    def warming_up(self) -> bool:
        return self.steps < self.warmup

    def _publish(self) -> None:
        if self.top_k is not None:
            self.objective.top_k = EVERY_NEGATIVE if self.warming_up else self.top_k  # type: ignore[attr-defined]
