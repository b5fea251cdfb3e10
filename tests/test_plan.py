"""The run's plan (polyvse.plan.build_plan): the config checked, pruned and completed once."""

from pathlib import Path

import pytest
import yaml

from polyvse.config_files import read_schema
from polyvse.config import ConfigError
from polyvse.plan import build_plan

REPO = Path(__file__).resolve().parents[1]


def default_config() -> dict:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))


def test_the_default_plan_adds_the_compared_rows_seeds_and_leaves_nothing_out():
    config = default_config()
    named = set(config["variants"])
    plan = build_plan(config, read_schema(REPO / "config" / "schema.yaml"))
    assert plan.left_out == [] and plan.seed_suffixes == ["", "-s1", "-s2"]
    added = set(config["variants"]) - named
    assert added == set(plan.findings_replicas["text"] + plan.findings_replicas["speech"] + plan.any_to_any_replicas)
    for variant, group in plan.seed_groups.items():
        assert group == [variant, f"{variant}-s1", f"{variant}-s2"]
        assert [config["variants"][v].get("seed", config["seed"]) for v in group[1:]] == [
            config["seed"] + 1,
            config["seed"] + 2,
        ]


def test_a_bad_key_fails_before_anything_is_added():
    config = default_config()
    config["training"]["patiencee"] = 3
    named = set(config["variants"])
    with pytest.raises(ConfigError, match="patiencee"):
        build_plan(config, read_schema(REPO / "config" / "schema.yaml"))
    assert set(config["variants"]) == named
