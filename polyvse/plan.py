"""The run's plan, built once from the config by :func:`build_plan` (``rules/common.smk`` calls it before any
rule reads the config): the config checked against the schema and its cross-references, pruned to what the
data can run, and completed with the seed replicas the findings compare.

The report layer reads the config; only this module adds to it. Every row a finding compares
(:func:`polyvse.report.findings.replicated`) and every model an any_to_any report compares is trained
``findings.seeds`` times: the configured variant and replicas ``{variant}-s{k}`` whose seed is the config's
seed + k, identical in every other setting. ``rules/common.smk`` calls :func:`build_plan` once.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

from polyvse.config import check_config
from polyvse.config_files import schema_violation, with_schema_defaults
from polyvse.families import family_checks
from polyvse.needs import prune_to_available
from polyvse.report.findings import CLAIM_FAMILIES, Claim, replica, replicated, seed_groups
from polyvse.run_plan import Plan


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
    added: dict[str, list[str]] = {f: [] for f in CLAIM_FAMILIES}
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


def check(config: dict, schema: Mapping) -> None:
    """Check ``config`` against ``schema`` (filling its defaults), then every cross-reference: those every
    family shares (:func:`polyvse.config.check_config`), then each family's own (:mod:`polyvse.families`).
    Raises :class:`polyvse.errors.ConfigError` naming the key."""
    violation = schema_violation(config, schema)
    if violation is not None:
        raise violation
    with_schema_defaults(config, schema)
    check_references(config, schema)


def check_references(config: Mapping, schema: Mapping) -> None:
    """The cross-reference checks of a config the schema passed, with its defaults filled: those every family
    shares (:func:`polyvse.config.check_config`), then each family's own (:mod:`polyvse.families`)."""
    check_config(config)
    for check_family in family_checks():
        check_family(config, schema)


def build_plan(config: dict, schema: Mapping) -> Plan:
    """Check ``config`` (:func:`check`), leave out what the data cannot run (without MT or dictionaries,
    every row that needs them: :func:`polyvse.needs.prune_to_available`), add the seed replicas
    (:func:`add_seed_replicas`), all in place, and return what was decided."""
    check(config, schema)
    available, left_out = prune_to_available(config)
    if left_out:
        config.clear()
        config.update(available)
    findings, any_to_any = add_seed_replicas(config)
    return completed_plan(config, left_out, findings, any_to_any)


def completed_plan(
    config: Mapping,
    left_out: list[str] | None = None,
    findings_replicas: dict[str, list[str]] | None = None,
    any_to_any_replicas: list[str] | None = None,
) -> Plan:
    """The :class:`~polyvse.run_plan.Plan` of a config whose seed replicas are in it already (by
    :func:`build_plan`, or a test's :func:`add_findings_replicas`)."""
    seeds = int(config.get("findings", {}).get("seeds", 0))
    return Plan(
        config=config,
        seeds=seeds,
        left_out=list(left_out or []),
        findings_replicas=dict(findings_replicas or {f: [] for f in CLAIM_FAMILIES}),
        any_to_any_replicas=list(any_to_any_replicas or []),
        seed_groups=seed_groups(config),
        seed_suffixes=[replica("", k) for k in range(max(1, seeds))],
    )
