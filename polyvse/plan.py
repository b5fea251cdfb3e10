"""The run's plan: what the checked config asks the workflow to train, beyond the variants it names.

The report layer reads the config; only this module adds to it. Every row a finding compares
(:func:`polyvse.report.findings.replicated`) and every model an any_to_any report compares is trained
``findings.seeds`` times: the configured variant and replicas ``{variant}-s{k}`` whose seed is the config's
seed + k, identical in every other setting. ``rules/common.smk`` calls :func:`add_seed_replicas` once,
after the config is checked and pruned, and before any rule reads it.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from polyvse.report.findings import FAMILIES, Claim, replica, replicated


def add_replica(config: dict, variant: str, k: int) -> str:
    """Add ``variant``'s seed-``k`` replica to ``config["variants"]`` (a copy with seed = the
    config's seed + k) and return its name."""
    name = replica(variant, k)
    config["variants"][name] = {**copy.deepcopy(config["variants"][variant]), "seed": int(config.get("seed", 0)) + k}
    return name


def add_findings_replicas(config: dict, claims: Sequence[Claim] | None = None) -> dict[str, list[str]]:
    """Add the seed replicas of every text and speech variant a claim compares to ``config``
    (``variants``: a copy with ``seed`` = the config's seed + k), and
    return the replica MLMME runs (run → seed offset is in the name; rules/mlmme.smk trains
    them). Returns family → replica names."""
    seeds = int(config.get("findings", {}).get("seeds", 0))
    need = replicated(config, claims)
    added: dict[str, list[str]] = {f: [] for f in FAMILIES}
    for k in range(1, seeds):
        for family in ("text", "speech"):
            added[family] += [add_replica(config, v, k) for v in need[family]]
        added["mlmme"] += [replica(run, k) for run in need["mlmme"]]
    return added


def add_any_to_any_replicas(config: dict) -> list[str]:
    """Add to ``config`` the seed replicas of every model an any_to_any report compares
    (``findings.seeds`` seeds, as the findings' rows: ``{variant}-s{k}`` with seed + k, in
    ``variants``) and return the names added. A replica the findings
    already added is kept as it is."""
    seeds = int(config.get("findings", {}).get("seeds", 0))
    added = []
    for rep in config.get("reports", {}).values():
        if rep.get("layout") != "any_to_any":
            continue
        for row in rep["rows"]:
            for k in range(1, seeds):
                if replica(row["variant"], k) not in config["variants"]:
                    added.append(add_replica(config, row["variant"], k))
    return added


def add_seed_replicas(config: dict) -> tuple[dict[str, list[str]], list[str]]:
    """Add every seed replica the findings and the any_to_any reports compare to ``config["variants"]``:
    the findings' first (family → names, MLMME runs included: rules/mlmme.smk trains those), then the
    any_to_any reports' that the findings did not add."""
    findings = add_findings_replicas(config)
    return findings, add_any_to_any_replicas(config)
