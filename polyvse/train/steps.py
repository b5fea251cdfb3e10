"""Settings of an objective that follow the optimiser's steps (a schedule, a warm-up), counted so
that a resumed training continues them where it stopped."""

from __future__ import annotations


class StepCounted:
    """Counts optimiser steps and publishes what they set on an objective (:meth:`_publish`, after
    every step and on loading); the count travels in the checkpoint (``state_dict``)."""

    steps: int = 0

    def _publish(self) -> None:
        raise NotImplementedError

    def step(self) -> None:
        self.steps += 1
        self._publish()

    def state_dict(self) -> dict:
        return {"steps": self.steps}

    def load_state_dict(self, state: dict) -> None:
        self.steps = int(state["steps"])
        self._publish()
