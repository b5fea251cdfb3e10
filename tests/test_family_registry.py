"""The family registry (polyvse.families) against what it names: the schema's families, the checkpoint
loaders, the rule files and their scripts, the config's sections and report layouts."""

import copy
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from polyvse.config import LAYOUT_FAMILIES, ConfigError
from polyvse.families import FAMILIES, family_checks, family_of
from polyvse.plan import check_references

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())


@pytest.fixture(scope="module")
def default() -> dict:
    from snakemake.utils import validate

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(config, str(REPO / "config" / "schema.yaml"))
    return config


def test_the_registry_lists_the_schema_s_families_in_its_order():
    variant = SCHEMA["properties"]["variants"]["additionalProperties"]["properties"]["model"]
    assert list(FAMILIES) == variant["enum"]


def test_every_checkpoint_family_has_one_loader_and_every_loader_a_family():
    from polyvse.models.trained import LOADERS

    assert sorted({f.checkpoint for f in FAMILIES.values()}) == sorted(LOADERS)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_a_family_s_model_trainers_and_rules_exist(name):
    family = FAMILIES[name]
    importlib.import_module(family.model)
    rules = (REPO / family.rules).read_text()
    scripts = "".join((REPO / "rules" / s).read_text() for s in re.findall(r'script:\s*"([^"]+)"', rules))
    for i, trainer in enumerate(family.trainers):
        assert callable(family.trainer_function(i)), trainer
        module, _, function = trainer.partition(":")
        assert re.search(rf"from {re.escape(module)} import [^\n]*\b{function}\b", scripts), (
            f"no script of {family.rules} calls {trainer}"
        )


@pytest.mark.parametrize("name", list(FAMILIES))
def test_a_family_s_input_functions_are_defined_and_its_rules_read_them(name):
    family = FAMILIES[name]
    common = (REPO / "rules" / "common.smk").read_text()
    rules = (REPO / family.rules).read_text()
    assert len(family.inputs) == len(family.trainers)
    for function in family.inputs:
        assert re.search(rf"^def {function}\(wildcards\):", common, re.M), f"{function} is not in rules/common.smk"
        assert f"unpack({function})" in rules, f"no rule of {family.rules} reads {function}"


@pytest.mark.parametrize("name", list(FAMILIES))
def test_a_family_s_settings_sections_are_in_the_default_config(default, name):
    for dotted in FAMILIES[name].settings_keys:
        node = default
        for part in dotted.split("."):
            assert part in node, f"{dotted} of family {name} is not in the default config"
            node = node[part]


def test_every_default_variant_resolves_its_settings_through_its_family(default):
    for variant in default["variants"]:
        settings = family_of(default, variant).settings(default, variant)
        assert isinstance(settings, dict) and settings, variant


def test_the_layouts_a_family_names_are_those_that_read_it():
    named = {(layout, f.name) for f in FAMILIES.values() for layout in f.layouts}
    read = {(layout, family) for layout, families in LAYOUT_FAMILIES.items() for family in families}
    assert named == read


def test_each_family_check_runs_once_and_every_one_runs(default):
    checks = family_checks()
    assert len(checks) == len(set(checks)) == 5  # the word families share one
    bad = copy.deepcopy(default)
    bad["mlmme"]["betas"] = [0.5, 0.5]  # only the MLMME family's check knows its runs
    with pytest.raises(ConfigError, match="repeats a β"):
        check_references(bad, SCHEMA)


def test_the_registry_loads_without_torch():
    """The workflow reads it at DAG build, which must not pay for torch."""
    code = "import sys, polyvse.families; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "False"
