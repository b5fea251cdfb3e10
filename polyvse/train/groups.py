"""One job, several trainings: a variant and its seed replicas train one after the other in one job
(the workflow's ``*_seeds`` rules), which reads their shared inputs once. A training rule's
per-training params and outputs are then lists, one item per training, where a job of one training
has single values; :func:`per_training` reads both alike."""

from __future__ import annotations

from typing import Any


def per_training(*values: Any) -> list[tuple]:
    """Zip per-training values: each a single value (a path, or a dict of settings: a job of one
    training) or a sequence of them (a group's, in member order). ``[(a0, b0, …), (a1, b1, …)]``."""
    lists = [[v] if isinstance(v, (str, dict)) else list(v) for v in values]
    sizes = {len(items) for items in lists}
    if len(sizes) != 1:
        raise ValueError(f"per-training values of different lengths: {[len(items) for items in lists]}")
    return list(zip(*lists))


def first_of(value: Any) -> Any:
    """The first training's value: what the group's members share (their inputs' settings)."""
    return value if isinstance(value, (str, dict)) else next(iter(value))
