"""Cross-reference checks of a configuration (beyond its schema)."""

import copy
from pathlib import Path

import pytest
import yaml

from polyvse.config import (ConfigError, check_config, figure_sources, human_langs, needs_translations,
                            pretrain_settings, protocol_langs, report_evaluations, variant_settings)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def config():
    # the schema fills its defaults at DAG build, as here
    from snakemake.utils import validate

    c = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(c, str(REPO / "config" / "schema.yaml"))
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
    (lambda c: c["variants"]["hem_10"].update(model_options={"pretrain": "nope"}),
     "variants.hem_10.model_options.pretrain", "unknown latent-vocabulary pretraining 'nope'"),
    (lambda c: c["pretrain"]["latent"].update(dim=64), "pretrain.latent.dim", "universal_dim"),
    (lambda c: c["pretrain"]["latent"].update(langs=["en", "de"]), "pretrain.latent.langs", "does not cover"),
    (lambda c: c["variants"]["embn_en"].update(model_options={"word_dim": 16}),
     "variants.embn_en.model_options.word_dim", "word_vectors fasttext needs word_dim = fasttext.dim"),
    (lambda c: c["variants"]["par_embn"].update(model_options={"word_vectors": "pca"}),
     "variants.par_embn.model_options.word_vectors", "takes random or fasttext"),
    (lambda c: c["variants"]["dict_100"].update(train_langs=["de", "fr"]),
     "variants.dict_100.vocabulary.dictionary_threshold", "train on English too"),
    (lambda c: c["reports"]["table2"]["rows"][12].update(variant="embn_de"), "reports.table2.rows[12]",
     "has one language"),
    (lambda c: c["figures"]["figure3"]["points"][0]["per_dataset"].update(m30k="coco_thr_100"),
     "figures.figure3.points[0]", "is not trained on dataset 'm30k'"),
    (lambda c: c["figures"]["figure1b"]["points"][0].update(variants=["nope"]), "figures.figure1b.points[0]",
     "unknown variant 'nope'"),
    (lambda c: c["speech"]["tts"].update(accents={"de": ["de"]}), "speech.tts.accents.de", "no synthetic speech"),
    (lambda c: c["speech"]["tts"].update(pitch=[60, 20]), "speech.tts.pitch", "low is above high"),
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


def test_clc_protocols_cover_the_human_languages_of_a_ten_language_model(config):
    assert protocol_langs(config, "smalr_10", "clc_c") == ["en", "de", "fr", "cs"]
    assert protocol_langs(config, "coco_smalr_10", "clc_a") == ["en", "zh", "ja"]
    assert len(protocol_langs(config, "smalr_10", "direct")) == 10
    assert needs_translations(config, "smalr_10", "clc_a")


def test_family_settings_and_pretraining_defaults(config):
    s = variant_settings(config, "mule_embn")
    assert s["model"] == "mule" and not s["model_options"]["universal_nc"]
    assert s["model_options"]["word_vectors"] == "fasttext"        # schema default: the papers' FastText
    assert variant_settings(config, "thr_100")["vocabulary"] == {"min_count": 100, "dictionary_threshold": None}
    p = pretrain_settings(config, "latent", "m30k")
    assert p["langs"] == config["datasets"]["m30k"]["langs"] and p["explore_p"] == 0.2 and p["explore_m"] == 20
    assert ("mule_10", "direct") in figure_sources(config, "figure3")


def test_every_default_report_row_and_figure_point_has_a_variant(config):
    used = ({v for rep in config["reports"] for v, _ in report_evaluations(config, rep)}
            | {v for fig in config["figures"] for v, _ in figure_sources(config, fig)})
    assert used == set(config["variants"])  # nothing trained for nothing


@pytest.mark.parametrize("name", ["multi30k.yaml", "coco.yaml"])
def test_paper_configs_pass_schema_and_cross_checks(name, tmp_path):
    from snakemake.utils import validate

    c = yaml.safe_load((REPO / "config" / "paper" / name).read_text())
    validate(c, str(REPO / "config" / "schema.yaml"))
    # the EDIT paths of a user's machine: stand-ins that exist
    for ds in c["datasets"].values():
        if ds["adapter"] == "multi30k":
            ds["multi30k"]["root"] = str(tmp_path)
        if ds["adapter"] == "coco":
            for key in ("captions_json", "ja_json", "zh_captions"):
                ds["coco"][key] = str(REPO / "config" / "schema.yaml")
    if c["image_features"].get("weights_path"):
        c["image_features"]["weights_path"] = str(REPO / "config" / "schema.yaml")
    check_config(c)
    assert c["models"]["smalr"]["specific_words"] == 5000 and c["pretrain"]["latent"]["n_tokens"] == 40000
    for v in c["variants"].values():
        if v["model"] in ("la", "hem", "smalr"):
            assert v["training_options"]["lr"] == 0.001      # SMALR §4
    langs_of = {v: len(c["variants"][v]["train_langs"]) for v in c["variants"]}
    assert max(langs_of.values()) == 10


def test_paper_speech_config_has_the_thesis_sizes_and_the_default_tables(tmp_path):
    from snakemake.utils import validate

    c = yaml.safe_load((REPO / "config" / "paper" / "speech.yaml").read_text())
    validate(c, str(REPO / "config" / "schema.yaml"))  # fills the schema's defaults: the thesis' settings
    listed = tmp_path / "utterances.tsv"
    listed.write_text("image_id\tsplit\tlang\twav\n")
    c["datasets"]["spoken"]["places_speech"]["utterances"] = str(listed)
    c["image_features"]["weights_path"] = str(REPO / "config" / "schema.yaml")
    check_config(c, yaml.safe_load((REPO / "config" / "schema.yaml").read_text()))
    speech = c["speech"]
    assert speech["model"]["widths"] == [128, 128, 256, 512, 1024] and speech["model"]["ff_dim"] == 2048
    assert (speech["training"]["epochs"], speech["training"]["batch_size"], speech["training"]["lr"]) == (75, 128, 1e-3)
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["speech"]
    # the same thesis tables; the default's ablation rows (marked †, e.g. the margin schedule compressed
    # into its short run) and their footnotes are the default's own: the paper run is the thesis' length
    ablations = {r["variant"] for rep in default["reports"].values() for r in rep["rows"] if "†" in r["name"]}
    assert ablations == {"mms_sched_span"}
    for name, rep in default["reports"].items():
        paper = speech["reports"][name]
        assert paper["caption"] == rep["caption"], name
        assert paper["rows"] == [r for r in rep["rows"] if r["variant"] not in ablations], name
        assert paper["notes"] == [n for n in rep.get("notes", []) if not n.startswith("†")], name
    assert set(speech["reports"]) == set(default["reports"])
    assert set(speech["variants"]) == set(default["variants"]) - ablations
