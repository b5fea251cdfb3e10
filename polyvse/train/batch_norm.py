"""Batch-norm statistics of the current weights before a model is scored ("precise BN").

In training mode a batch norm normalises with its batch's statistics and keeps running
estimates for evaluation, an exponential average (momentum 0.1) over the last ~10 steps. A
training moves its weights fast: after 64 steps at 3e-3 (4 epochs of 16, the speech budget of an
earlier default) the running estimates describe the weights of several steps before, and the model
that validation and the test score is not the one that was trained (an InfoNCE model: validation
recall 12.0 with the running estimates, 17.5 with its batches' own statistics, 17.5 again after
:func:`recalibrate_batch_norm`; ``docs/speech_learning.md``). Wu & Johnson (2021, "Rethinking
'Batch' in BatchNorm", §3) call the remedy precise BN: recompute the population statistics
with the weights as they are, from a few training batches, before evaluating. The thesis scores
its encoders in evaluation mode (§3.1.3); this makes those statistics the encoders' own.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm


def batch_norms(model: nn.Module) -> list[_BatchNorm]:
    """The model's batch norms that keep running statistics."""
    return [m for m in model.modules() if isinstance(m, _BatchNorm) and m.track_running_stats]


@torch.no_grad()
def recalibrate_batch_norm(model: nn.Module, batches: Iterable[Any], forward: Callable[[Any], object]) -> int:
    """Replace every batch norm's running mean and variance by their averages over ``forward(batch)``
    for each of ``batches``, with the model's current weights; returns the number of batches.

    Only the batch norms run in training mode (the cumulative average, momentum ``None``); every other
    module stays in evaluation mode, so dropout draws nothing and the batches' statistics are those
    of the network that is evaluated. The variance is the mean of the batches' (unbiased) variances:
    with batches of thousands of frames the spread of their means adds little. The model's modes and
    the norms' momenta are restored. With no batch the statistics are left as they were.
    """
    norms = batch_norms(model)
    iterator = iter(batches)
    first = next(iterator, None)
    if not norms or first is None:
        return 0
    n = 0
    modes = {m: m.training for m in model.modules()}
    momenta = [bn.momentum for bn in norms]
    try:
        model.eval()
        for bn in norms:
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over the batches
            bn.train()
        for batch in itertools.chain([first], iterator):
            forward(batch)
            n += 1
    finally:
        for bn, momentum in zip(norms, momenta):
            bn.momentum = momentum
        for m, training in modes.items():
            m.train(training)
    return n
