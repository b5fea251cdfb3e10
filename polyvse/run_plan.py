"""The run's plan as the rules and the report layer read it: what :func:`polyvse.plan.build_plan` decided from
the config. Data only, so that every layer above the config's may take it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    """The config checked, pruned and completed, and what was decided beyond it."""

    config: Mapping
    """The config the rules run: schema defaults filled, what the data cannot run left out, seed replicas added
    as ``variants`` of their own."""
    seeds: int
    """``findings.seeds``: how many seeds the findings and the any_to_any tables compare (0: no findings)."""
    left_out: list[str]
    """The rows, figure points and curves the data cannot run (no MT or dictionaries), said to the user."""
    findings_replicas: dict[str, list[str]]
    """Family → the seed replicas the findings compare (MLMME runs included)."""
    any_to_any_replicas: list[str]
    """The replicas the any_to_any reports compare that the findings did not add."""
    seed_groups: dict[str, list[str]]
    """Variant → it and its replicas, trained in one job (they differ in the seed alone)."""
    seed_suffixes: list[str]
    """``""``, ``"-s1"``, …: one a seed of a group."""

    def seed_members(self, variant: str) -> list[str]:
        """``variant`` and its seed replicas where a group trains them, else ``variant`` alone."""
        return self.seed_groups.get(variant, [variant])
