"""Cross-reference checks of a configuration (beyond its schema)."""

import copy
import re
from pathlib import Path

import pytest
import yaml

from polyvse.plan import check_references
from polyvse.config import (
    ConfigError,
    figure_sources,
    human_langs,
    needs_translations,
    pretrain_settings,
    protocol_langs,
    report_evaluations,
    variant_settings,
)

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())


@pytest.fixture(scope="module")
def validated_default() -> dict:
    """The default config with the schema's defaults filled, as at DAG build (read and validated once:
    half a second each, for the hundred tests that take a copy)."""
    from snakemake.utils import validate

    c = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(c, str(REPO / "config" / "schema.yaml"))
    return c


@pytest.fixture
def config(validated_default) -> dict:
    """A copy of the validated default config that a test may edit."""
    return copy.deepcopy(validated_default)


def test_default_config_passes(config):
    check_references(config, SCHEMA)


@pytest.mark.parametrize(
    "edit, key, reason",
    [
        (lambda c: c["variants"]["embn_en"].update(dataset="nope"), "variants.embn_en.dataset", "unknown dataset"),
        (lambda c: c["datasets"]["m30k"].update(langs=["en", "de"]), "variants.embn_fr", "'fr' is not in"),
        (
            lambda c: c["reports"]["table2"]["rows"][0].update(variant="embn_de"),
            "reports.table2.rows[0]",
            "protocol to_en needs a variant trained on English",
        ),
        (
            lambda c: c["reports"]["table2"]["rows"][2].update(variant="coco_embn_shared"),
            "reports.table2.rows[2]",
            "trained on another dataset",
        ),
        (
            lambda c: c["reports"]["mule_table4"]["rows"][1]["per_dataset"].update(coco={"variant": "embn_shared"}),
            "reports.mule_table4.rows[1]",
            "is not trained on dataset 'coco'",
        ),
        (
            lambda c: c["variants"]["embn_en"].update(model_options={"hiden": 3}),
            "variants.embn_en.model_options.hiden",
            "not a setting",
        ),
        (
            lambda c: c["variants"]["hem_10"].update(model_options={"pretrain": "nope"}),
            "variants.hem_10.model_options.pretrain",
            "unknown latent-vocabulary pretraining 'nope'",
        ),
        (lambda c: c["pretrain"]["latent"].update(dim=64), "pretrain.latent.dim", "universal_dim"),
        (lambda c: c["pretrain"]["latent"].update(langs=["en", "de"]), "pretrain.latent.langs", "does not cover"),
        (
            lambda c: c["variants"]["embn_en"].update(model_options={"word_dim": 16}),
            "variants.embn_en.model_options.word_dim",
            "word_vectors fasttext needs word_dim = fasttext.dim",
        ),
        (
            lambda c: c["variants"]["par_embn"].update(model_options={"word_vectors": "pca"}),
            "variants.par_embn.model_options.word_vectors",
            "takes random or fasttext",
        ),
        (
            lambda c: c["variants"]["dict_100"].update(train_langs=["de", "fr"]),
            "variants.dict_100.vocabulary.dictionary_threshold",
            "train on English too",
        ),
        (
            lambda c: c["reports"]["table2"]["rows"][12].update(variant="embn_de"),
            "reports.table2.rows[12]",
            "has one language",
        ),
        (
            lambda c: c["figures"]["figure3"]["points"][0]["per_dataset"].update(m30k="coco_thr_100"),
            "figures.figure3.points[0]",
            "is not trained on dataset 'm30k'",
        ),
        (
            lambda c: c["figures"]["figure1b"]["points"][0].update(variants=["nope"]),
            "figures.figure1b.points[0]",
            "unknown variant 'nope'",
        ),
        (lambda c: c["speech"]["tts"].update(accents={"de": ["de"]}), "speech.tts.accents.de", "no synthetic speech"),
        (lambda c: c["speech"]["tts"].update(pitch=[60, 20]), "speech.tts.pitch", "low is above high"),
    ],
)
def test_errors_name_the_key(config, edit, key, reason):
    bad = copy.deepcopy(config)
    edit(bad)
    with pytest.raises(ConfigError) as err:
        check_references(bad, SCHEMA)
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


def test_a_family_ceiling_of_epochs_sits_between_the_shared_one_and_the_variants(config):
    config["training"]["epochs"] = 30
    config["training"]["epochs_by_family"] = {"liwe": 50}
    assert variant_settings(config, "liwe_s_en")["training"]["epochs"] == 50
    assert variant_settings(config, "embn_en")["training"]["epochs"] == 30
    assert "epochs_by_family" not in variant_settings(config, "embn_en")["training"]
    config["variants"]["liwe_s_en"]["training_options"] = {"epochs": 9}
    assert variant_settings(config, "liwe_s_en")["training"]["epochs"] == 9


def test_a_family_s_own_training_settings_sit_between_the_shared_ones_and_the_variants(config):
    config["training"]["neighbour_share"] = 0.0
    config["training"]["by_family"] = {"embn": {"neighbour_share": 0.5, "lr": 0.002}}
    check_references(config, SCHEMA)
    embn = variant_settings(config, "embn_en")["training"]
    assert embn["neighbour_share"] == 0.5 and embn["lr"] == 0.002 and "by_family" not in embn
    assert variant_settings(config, "mule_10")["training"]["neighbour_share"] == 0.0
    config["variants"]["embn_en"]["training_options"] = {"neighbour_share": 0.25}
    assert variant_settings(config, "embn_en")["training"]["neighbour_share"] == 0.25
    config["training"]["by_family"] = {"embn": {"neighbour_share": 1.5}}
    with pytest.raises(ConfigError, match=r"training\.by_family\.embn\.neighbour_share.*1\.5"):
        check_references(config, SCHEMA)
    # batches of neighbours are every-language batches: a quota sampler is refused before any job runs
    config["training"]["by_family"] = {"embn": {"neighbour_share": 0.5, "image_captions": "quota"}}
    with pytest.raises(ConfigError, match=r"variants\.embn_\w+: .*needs training.image_captions: every_language"):
        check_references(config, SCHEMA)


def test_clc_protocols_cover_the_human_languages_of_a_ten_language_model(config):
    assert protocol_langs(config, "smalr_10", "clc_c") == ["en", "de", "fr", "cs"]
    assert protocol_langs(config, "coco_smalr_10", "clc_a") == ["en", "zh", "ja"]
    assert len(protocol_langs(config, "smalr_10", "direct")) == 10
    assert needs_translations(config, "smalr_10", "clc_a")


def test_family_settings_and_pretraining_defaults(config):
    s = variant_settings(config, "mule_embn")
    assert s["model"] == "mule" and not s["model_options"]["universal_nc"]
    assert s["model_options"]["word_vectors"] == "fasttext"  # schema default: the papers' FastText
    assert variant_settings(config, "thr_100")["vocabulary"] == {"min_count": 100, "dictionary_threshold": None}
    p = pretrain_settings(config, "latent", "m30k")
    assert p["langs"] == config["datasets"]["m30k"]["langs"] and p["explore_p"] == 0.2 and p["explore_m"] == 20
    assert ("mule_10", "direct") in figure_sources(config, "figure3")


def test_every_default_report_row_and_figure_point_has_a_variant(config):
    used = {v for rep in config["reports"] for v, _ in report_evaluations(config, rep)} | {
        v for fig in config["figures"] for v, _ in figure_sources(config, fig)
    }
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
    check_references(c, SCHEMA)
    assert c["models"]["smalr"]["specific_words"] == 5000 and c["pretrain"]["latent"]["n_tokens"] == 40000
    for v in c["variants"].values():
        if v["model"] in ("la", "hem", "smalr"):
            assert v["training_options"]["lr"] == 0.001  # SMALR §4
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
    check_references(c, SCHEMA)
    speech = c["speech"]
    assert speech["model"]["widths"] == [128, 128, 256, 512, 1024] and speech["model"]["ff_dim"] == 2048
    assert (speech["training"]["epochs"], speech["training"]["batch_size"], speech["training"]["lr"]) == (75, 128, 1e-3)
    full = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    default = {n: r for n, r in full["reports"].items() if r.get("layout") == "speech"}
    # the same thesis tables; the default's ablation rows (marked †, e.g. the margin schedule compressed
    # into its short run) and their footnotes are the default's own: the paper run is the thesis' length
    ablations = {r["variant"] for rep in default.values() for r in rep["rows"] if "†" in r["name"]}
    assert ablations == {"mms_sched_span"}
    for name, rep in default.items():
        paper = c["reports"][name]
        assert paper["caption"] == rep["caption"], name
        rows = [{"name": r["name"], "variant": r["variant"]} for r in paper["rows"]]  # without the schema's defaults
        assert rows == [r for r in rep["rows"] if r["variant"] not in ablations], name
        assert paper["notes"] == [n for n in rep.get("notes", []) if not n.startswith("†")], name
    assert set(c["reports"]) == set(default)
    speech_variants = {n for n, v in full["variants"].items() if v["model"] == "speech"}
    assert set(c["variants"]) == speech_variants - ablations
    for name in c["variants"]:  # the same settings, but the default's own ceilings: the paper run's are the thesis' 75
        given = {k: c["variants"][name][k] for k in ("model", "dataset", "model_options", "training_options")}
        default = copy.deepcopy(full["variants"][name])
        default.get("training_options", {}).pop("epochs", None)
        assert {k: v for k, v in given.items() if v} == default, name


# -- names that become paths, results_dir ---------------------------------------------------------


def test_schema_name_patterns_are_the_checks_patterns():
    from polyvse.config import NAME_PATTERN, WILDCARD_NAME_PATTERN

    defs = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())["$defs"]
    assert defs["name"]["pattern"] == NAME_PATTERN
    assert defs["wildcard_name"]["pattern"] == WILDCARD_NAME_PATTERN


@pytest.mark.parametrize(
    "section, name",
    [
        ("reports", "../evil"),
        ("reports", "a/b"),
        ("figures", ".hidden"),
        ("datasets", "m30k/../x"),
        ("variants", "v.1"),
        ("pretrain", ".."),
    ],
)
def test_a_name_that_is_not_a_plain_file_name_fails_naming_its_key(config, section, name):
    from polyvse.config_files import schema_violation

    raw = yaml.safe_load((REPO / "config" / "config.yaml").read_text())  # before defaults, as snakemake reads it
    first = next(iter(raw[section]))
    raw[section][name] = raw[section].pop(first)
    err = schema_violation(raw, yaml.safe_load((REPO / "config" / "schema.yaml").read_text()))
    assert err is not None and err.key == f"{section}.{name}" and f"bad name {name!r}" in str(err)
    # the cross-checks refuse it too, whatever the schema says
    bad = copy.deepcopy(config)
    bad[section][name] = bad[section].pop(first)
    with pytest.raises(ConfigError) as caught:
        check_references(bad, SCHEMA)
    assert caught.value.key == f"{section}.{name}" and f"bad name {name!r}" in str(caught.value)


@pytest.mark.parametrize(
    "results_dir, reason",
    [
        ("../out", "climbs with '..'"),
        ("results/../..", "climbs"),
        (".", "working directory"),
        ("/", "filesystem root"),
        ("", "not a directory name"),
        ("res{x}", "braces"),
    ],
)
def test_results_dir_must_be_a_directory_of_its_own(config, results_dir, reason):
    bad = dict(config, results_dir=results_dir)
    with pytest.raises(ConfigError) as caught:
        check_references(bad, SCHEMA)
    assert caught.value.key == "results_dir" and reason in str(caught.value)


def test_every_output_path_lies_under_results_dir(config):
    from polyvse.config import output_paths

    paths = output_paths(dict(config, results_dir="/scratch/me/results"))  # an absolute results_dir is fine
    assert paths["reports.table2"] == "/scratch/me/results/table2.tsv"
    assert paths["variants.embn_en"] == "/scratch/me/results/m30k/models/embn_en"
    assert all(p.startswith("/scratch/me/results/") for p in paths.values())
    check_references(dict(config, results_dir="/scratch/me/results"), SCHEMA)


def test_a_figure_named_like_a_speech_report_is_refused(config):
    bad = copy.deepcopy(config)
    speech_report = next(n for n, r in bad["reports"].items() if r["layout"] == "speech")
    bad["figures"][speech_report] = bad["figures"].pop("figure1b")
    with pytest.raises(ConfigError) as caught:
        check_references(bad, SCHEMA)
    assert caught.value.key == f"figures.{speech_report}" and "report of the same name" in str(caught.value)


# The training settings: the migration leaves them as they are, and the default has tuned them since.
TUNED_SETTINGS = (
    ("training",),
    ("pretrain",),
    ("speech", "training"),
    ("mlmme", "training"),
    ("translator", "source_training"),
    ("translator", "target_training"),
    ("translator", "model"),  # its word vectors train since (freeze_embeddings)
)


def test_the_default_config_is_its_earlier_dialect_migrated():
    """tests/fixtures/config_earlier_dialect.yaml is the default config before the one-dialect change
    (speech.variants / speech.reports, extra_reports with the mlmme and translator blocks); migrated, it
    is today's default in every key but one footnote that names the moved key, and the training settings
    (with the margin schedule's span, which follows the speech training's steps), which the migration keeps
    as they were and the default has tuned since."""
    from polyvse.config_migration import earlier_dialect_key, migrate

    earlier = yaml.safe_load((REPO / "tests" / "fixtures" / "config_earlier_dialect.yaml").read_text())
    assert earlier_dialect_key(earlier) == "extra_reports"
    migrated = migrate(earlier)
    now = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for path in TUNED_SETTINGS:
        *parents, key = path
        was, into, today = earlier, migrated, now
        for parent in parents:
            was, into, today = was[parent], into[parent], today[parent]
        assert into[key] == was[key], f"the migration changed {'.'.join(path)}"
        into[key] = today[key]
    assert earlier_dialect_key(migrated) is None and earlier_dialect_key(now) is None
    # the margin schedule's span follows the speech training's steps (its every: 22 of 40 epochs, 13 of 24)
    span = migrated["variants"]["mms_sched_span"]["training_options"]["loss_options"]
    assert span["every"] == 22
    span["every"] = now["variants"]["mms_sched_span"]["training_options"]["loss_options"]["every"]
    # the ceilings the default has given some variants since (the hypersphere's below λ_u 1: 40 of 24 epochs)
    for name, v in now["variants"].items():
        epochs = (v.get("training_options") or {}).get("epochs")
        if epochs is not None and "epochs" not in migrated["variants"][name]["training_options"]:
            migrated["variants"][name]["training_options"]["epochs"] = epochs
    t32 = migrated["reports"]["speech_table3_2"]["notes"]
    dagger = next(i for i, n in enumerate(t32) if n.startswith("† Not a thesis row"))
    t32[dagger] = next(n for n in now["reports"]["speech_table3_2"]["notes"] if n.startswith("† Not a thesis row"))
    note = migrated["reports"]["any_to_any"]["notes"][0]
    migrated["reports"]["any_to_any"]["notes"][0] = note.replace("speech.variants.infonce", "variants.infonce")
    assert migrated == now
    assert migrate(now) == now


def test_a_config_of_the_earlier_dialect_names_the_key_and_the_way_out():
    from polyvse.config_files import schema_violation

    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())
    for earlier, key in (
        ({"extra_reports": ["mlmme_table1"]}, "extra_reports"),
        ({"speech": {"variants": {"x": {}}}}, "speech.variants"),
        ({"translator": {"source": "de"}}, "translator.source"),
    ):
        err = schema_violation(earlier, schema)
        assert err is not None and err.key == key and "polyvse migrate-config" in str(err)


# -- schema errors in one line -----------------------------------------------------------------


@pytest.mark.parametrize(
    "edit, key, reason",
    [
        (lambda c: c.update(sed=1), "sed", "unknown key; did you mean 'seed'?"),
        (lambda c: c["translate"].update(backnd="x"), "translate.backnd", "did you mean 'backend'?"),
        (
            lambda c: c["variants"]["embn_en"].update(train_lang=["en"]),
            "variants.embn_en.train_lang",
            "did you mean 'train_langs'?",
        ),
        (lambda c: c.update(zzzz=1), "zzzz", "valid keys: seed, gallery, described_queries, findings"),
        (lambda c: c["training"].update(epochs="ten"), "training.epochs", "'ten' is not of type 'integer'"),
        (lambda c: c["reports"]["table2"].update(rows={"a" * 500: 1}), "reports.table2.rows", "fails type"),
    ],
)
def test_schema_errors_are_one_line_naming_the_key(edit, key, reason):
    from polyvse.config_files import schema_violation

    raw = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    edit(raw)
    err = schema_violation(raw, yaml.safe_load((REPO / "config" / "schema.yaml").read_text()))
    assert err.key == key and reason in str(err), str(err)
    assert "\n" not in str(err) and len(str(err)) < 400


# -- config files: strict YAML, errors located ----------------------------------------------------


def test_a_duplicated_key_names_file_line_and_key(tmp_path):
    from polyvse.config_files import load_config_file
    from polyvse.errors import ConfigFileError

    f = tmp_path / "c.yaml"
    f.write_text("seed: 0\ntranslate:\n  backend: googletrans\nother: 1\ntranslate:\n  backend: dictionary\n")
    with pytest.raises(ConfigFileError) as caught:
        load_config_file(f)
    assert (caught.value.line, caught.value.where) == (5, str(f))
    assert "duplicate key 'translate' (first at line 2)" in str(caught.value)
    f.write_text("a:\n  b: 1\n  c: 2\n  b: 3\n")
    with pytest.raises(ConfigFileError, match=r"c.yaml:4: duplicate key 'b' \(first at line 2\)"):
        load_config_file(f)
    f.write_text("a: {b: 1, b: 2}\n")
    with pytest.raises(ConfigFileError, match=r"c.yaml:1: duplicate key 'b' \(first at line 1\)"):
        load_config_file(f)
    # a key that overrides one merged in with << is YAML's override, not a duplicate
    f.write_text("base: &b {x: 1, y: 2}\nmore: {<<: *b, y: 3}\n")
    assert load_config_file(f)["more"] == {"x": 1, "y": 3}


def test_a_yaml_syntax_error_names_file_and_line(tmp_path):
    from polyvse.config_files import load_config_file
    from polyvse.errors import ConfigFileError

    f = tmp_path / "c.yaml"
    f.write_text("seed: 0\nresults_dir: [a, b\nfoo: 1\n")
    with pytest.raises(ConfigFileError) as caught:
        load_config_file(f)
    assert caught.value.where == str(f) and caught.value.line in (2, 3) and "YAML syntax error" in str(caught.value)
    with pytest.raises(ConfigFileError, match="config file not found"):
        load_config_file(tmp_path / "missing.yaml")


CONFIG_YAMLS = sorted(
    [*REPO.glob("config/**/*.yaml"), *REPO.glob("tests/configs/*.yaml"), *REPO.glob("profiles/*/config.yaml")]
)


@pytest.mark.parametrize("path", CONFIG_YAMLS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_shipped_yaml_has_no_duplicated_key(path):
    from polyvse.config_files import load_config_file

    assert load_config_file(path) is not None


def test_coco_paper_config_translates_with_googletrans_and_maps_with_muse_dictionaries():
    from polyvse.config_files import load_config_file

    c = load_config_file(REPO / "config" / "paper" / "coco.yaml")
    assert c["translate"] == {
        "backend": "googletrans",
        "cache": "cache/translations.sqlite",
        "dictionaries": "/data/muse/dictionaries",
    }


def test_errors_are_located_in_the_file_that_sets_the_key(tmp_path):
    from polyvse.config_files import located

    base, over = tmp_path / "base.yaml", tmp_path / "over.yaml"
    base.write_text(
        "seed: 0\nreports:\n  t:\n    rows:\n      - {name: a, variant: x}\n      - {name: b, variant: y}\n"
    )
    over.write_text("seed: 1\n")
    err = located(ConfigError("reports.t.rows[1]", "unknown variant 'y'"), [base, over])
    assert (err.where, err.line) == (str(base), 6) and str(err).endswith(
        "config key reports.t.rows[1]: unknown variant 'y'"
    )
    assert located(ConfigError("seed", "x"), [base, over]).where == str(over)  # the later file wins
    assert located(ConfigError("reports.t.caption", "x"), [base, over]).line == 3  # a default: its parent
    assert located(ConfigError("seed", "x"), [base], {"seed": 2}).where == "--config"


def test_a_json_config_file_is_read_strictly_too(tmp_path):
    from polyvse.config_files import load_config_file
    from polyvse.errors import ConfigFileError

    f = tmp_path / "c.json"
    f.write_text('{"seed": 0,\n "seed": 1}\n')
    with pytest.raises(ConfigFileError, match="duplicate key 'seed'"):
        load_config_file(f)
    f.write_text('{"seed": 0,\n "x": }\n')
    with pytest.raises(ConfigFileError, match=r"c.json:2: JSON syntax error"):
        load_config_file(f)
    f.write_text('{"seed": 0}')
    assert load_config_file(f) == {"seed": 0}


@pytest.mark.parametrize(
    "edit, key, reason",
    [
        # a word table reads word models only, and names the layout that reads the other families
        (
            lambda c: c["reports"]["table2"]["rows"].append({"name": "x", "variant": "mlmme"}),
            "reports.table2.rows[17]",
            "a report of layout mlmme reads it",
        ),
        (
            lambda c: c["reports"]["table2"]["rows"].append({"name": "x", "variant": "infonce"}),
            "reports.table2.rows[17]",
            "layout any_to_any or speech",
        ),
        # a family's table: one row for mlmme and translator_curve, each naming a variant of its family
        (
            lambda c: c["reports"]["mlmme_table1"]["rows"].append({"name": "again", "variant": "mlmme"}),
            "reports.mlmme_table1.rows",
            "give one row",
        ),
        (
            lambda c: c["reports"]["translator_curve"]["rows"].__setitem__(0, {"name": "x", "variant": "mlmme"}),
            "reports.translator_curve.rows[0]",
            "reads translator",
        ),
        (
            lambda c: c["reports"]["speech_table3_1"]["rows"][0].update(protocol="to_en"),
            "reports.speech_table3_1.rows[0].protocol",
            "takes no protocol",
        ),
        (
            lambda c: c["variants"]["embn_en"].update(train_langs=None),
            "variants.embn_en.train_langs",
            "needs its training languages",
        ),
        (
            lambda c: c["variants"]["translator"].update(train_langs=["de"]),
            "variants.translator.train_langs",
            "[source, target]",
        ),
    ],
)
def test_a_report_reads_the_families_its_layout_shows(config, edit, key, reason):
    edit(config)
    with pytest.raises(ConfigError, match=re.escape(reason)) as caught:
        check_references(config, SCHEMA)
    assert caught.value.key == key


@pytest.mark.parametrize(
    "edit, reason",
    [
        (lambda c: c["described_queries"].update(variant="nope"), "unknown variant 'nope'"),
        (lambda c: c["described_queries"].update(variant="liwe_s_en"), "need a word model (not liwe)"),
        (lambda c: c["described_queries"].update(variant="embn_de"), "does not train on English"),
    ],
)
def test_the_described_queries_need_an_english_word_model(config, edit, reason):
    edit(config)
    with pytest.raises(ConfigError, match=re.escape(reason)) as caught:
        check_references(config, SCHEMA)
    assert caught.value.key == "described_queries.variant"


@pytest.mark.parametrize(
    "path",
    sorted(
        str(p.relative_to(REPO))
        for p in [*(REPO / "config").rglob("*.yaml"), *(REPO / "tests" / "configs").glob("*.yaml")]
        if p.name != "schema.yaml"
    ),
)
def test_the_schema_s_defaults_are_filled_as_snakemake_s_validate_fills_them(path):
    """rules/common.smk fills the defaults itself (snakemake's validate parses the schema again, slowly):
    the same config for every config this repository ships, and the schema untouched by later edits."""
    import copy

    from snakemake.utils import validate

    from polyvse.config_files import read_schema, with_schema_defaults

    schema = read_schema(REPO / "config" / "schema.yaml")
    assert schema == yaml.safe_load((REPO / "config" / "schema.yaml").read_text())
    raw = yaml.safe_load((REPO / path).read_text())
    expected = copy.deepcopy(raw)
    validate(expected, str(REPO / "config" / "schema.yaml"))
    filled = with_schema_defaults(copy.deepcopy(raw), schema)
    assert filled == expected
    filled["gallery"]["langs"] = -1  # an edit of a default reaches the config only
    assert schema == yaml.safe_load((REPO / "config" / "schema.yaml").read_text())


def test_on_real_data_the_described_queries_are_left_out(config):
    from polyvse.config import described_queries_variant

    assert described_queries_variant(config) == "embn_en"
    config["datasets"]["m30k"].update(adapter="multi30k", multi30k={"root": str(REPO)})
    check_references(config, SCHEMA)  # not refused: a real dataset keeps every table, without the queries
    assert described_queries_variant(config) == ""
    config["described_queries"]["variant"] = ""
    assert described_queries_variant(config) == ""


def test_every_report_writes_the_files_of_its_layout(config):
    from polyvse.config import report_extensions

    files = {name: report_extensions(rep["layout"]) for name, rep in config["reports"].items()}
    assert files["translator_curve"] == ("tsv", "png") and files["mlmme_table1"] == ("tsv", "md")
    assert {files[n] for n in ("table2", "speech_table3_1", "any_to_any")} == {("tsv", "md")}


def test_polyvse_migrate_config_rewrites_a_file(tmp_path, capsys):
    from polyvse.cli import main

    earlier = tmp_path / "old.yaml"
    earlier.write_text(
        "speech:\n  variants:\n    infonce: {training: {loss: infonce}}\n  reports:\n"
        "    t: {rows: [{name: InfoNCE, variant: infonce}]}\n"
    )
    assert main(["migrate-config", str(earlier), "-o", str(tmp_path / "new.yaml")]) == 0
    new = yaml.safe_load((tmp_path / "new.yaml").read_text())
    assert new["variants"] == {
        "infonce": {"model": "speech", "dataset": "spoken", "training_options": {"loss": "infonce"}}
    }
    assert new["reports"] == {"t": {"layout": "speech", "rows": [{"name": "InfoNCE", "variant": "infonce"}]}}
    (tmp_path / "bad.yaml").write_text("- a list\n")
    assert main(["migrate-config", str(tmp_path / "bad.yaml")]) == 2
    assert "not a mapping" in capsys.readouterr().err
