"""Cross-reference checks of a configuration (beyond its schema)."""

import copy
from pathlib import Path

import pytest
import yaml

from polyvse.config import ConfigError, check_config, human_langs, needs_translations, variant_settings

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def config():
    # the schema fills these defaults at DAG build; fill the few the checks read
    c = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for ds in c["datasets"].values():
        ds.setdefault("langs", ["en", "de", "fr", "cs", "zh", "ja", "ar", "af", "ko", "ru"])
    for v in c["variants"].values():
        v.setdefault("captions", "human")
    c.setdefault("models", {}).setdefault("embn", {})
    c.setdefault("training", {})
    return c


def test_default_config_passes(config):
    check_config(config)


@pytest.mark.parametrize("edit, key, reason", [
    (lambda c: c["variants"]["embn_en"].update(dataset="nope"), "variants.embn_en.dataset", "unknown dataset"),
    (lambda c: c["datasets"]["m30k"].update(langs=["en", "de"]), "variants.embn_fr", "'fr' is not in"),
    (lambda c: c["reports"]["table2"]["rows"][0].update(variant="embn_de"), "reports.table2.rows[0]",
     "protocol to_en needs a variant trained on English"),
    (lambda c: c["reports"]["table2"]["rows"][2].update(variant="coco_embn_shared"), "reports.table2.rows[2]",
     "trained on another dataset"),
    (lambda c: c["reports"]["mule_table4"]["rows"][1]["per_dataset"].update(coco={"variant": "embn_shared"}),
     "reports.mule_table4.rows[1]", "is not trained on dataset 'coco'"),
    (lambda c: c["variants"]["embn_en"].update(model_options={"hiden": 3}), "variants.embn_en.model_options.hiden",
     "not a setting"),
])
def test_errors_name_the_key(config, edit, key, reason):
    bad = copy.deepcopy(config)
    edit(bad)
    with pytest.raises(ConfigError) as err:
        check_config(bad)
    assert err.value.key == key and reason in str(err.value)


def test_human_languages_and_translation_needs(config):
    assert human_langs(config, "m30k") == ["en", "de", "fr", "cs"]
    assert human_langs(config, "coco") == ["en", "zh", "ja"]
    assert not needs_translations(config, "embn_en")
    assert needs_translations(config, "embn_en", "to_en")
    assert needs_translations(config, "embn_shared_mt")


def test_variant_overrides_merge_over_family_defaults(config):
    config["variants"]["embn_en"]["model_options"] = {"gru_hidden": 7}
    config["training"]["epochs"] = 3
    config["variants"]["embn_en"]["training_options"] = {"epochs": 9}
    s = variant_settings(config, "embn_en")
    assert s["model_options"]["gru_hidden"] == 7 and s["training"]["epochs"] == 9
    assert config["models"]["embn"].get("gru_hidden") != 7  # the family default is untouched
