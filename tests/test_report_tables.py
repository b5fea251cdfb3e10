import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from polyvse.report.tables import format_params, mule_mt_table, mule_table, smalr_table, to_markdown

LANGS = ["en", "de", "fr", "cs", "zh", "ja", "ar", "af", "ko", "ru"]


def ev(scores: dict[str, float], source: str = "human") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "lang": list(scores),
            "mR": list(scores.values()),
            "test_source": [source if l not in ("en", "de", "fr", "cs") else "human" for l in scores],
        }
    )


PARAMS = {
    "a": {"params_train": 1000, "params_test": 800},
    "b": {"params_train": 10, "params_test": 5},
    "all": {"params_train": 7_100_000, "params_test": 50},
}


def test_smalr_row_kinds_ha_and_a():
    evals = {
        ("a", "direct"): ev({"en": 70.04}),
        ("b", "direct"): ev({"de": 60.0}),
        ("all", "direct"): ev({l: 50.0 + i for i, l in enumerate(LANGS)}, source="mt"),
    }
    rows = [{"name": "per-lang", "per_language": {"en": "a", "de": "b"}}, {"name": "shared", "variant": "all"}]
    table, translated = smalr_table(rows, evals, PARAMS, human_langs=["en", "de", "fr", "cs"])
    per, shared = table.iloc[0], table.iloc[1]
    assert per["En"] == 70.0 and per["De"] == 60.0 and np.isnan(per["Fr"])
    assert np.isnan(per["HA"]) and np.isnan(per["A"])  # not every language evaluated
    assert per["params_train"] == 1010 and per["params_test"] == 805  # two models
    assert shared["HA"] == pytest.approx(np.mean([50, 51, 52, 53]))
    assert shared["A"] == pytest.approx(np.mean([50 + i for i in range(10)]))
    assert shared["Cn"] == 54.0  # zh is written Cn as in the papers
    assert translated == ["zh", "ja", "ar", "af", "ko", "ru"]
    md = to_markdown(table, "T", translated)
    assert "| Cn ¹ |" in md and "| En |" in md and "7.1M" in md and "–" in md


def test_mule_mt_columns_per_dataset():
    evals = {("a", "to_en"): ev({"en": 70.0, "de": 55.0}), ("b", "direct"): ev({"en": 80.0, "zh": 60.0})}
    rows = [
        {
            "name": "Trans",
            "training_data": "Human En",
            "single_model": "Y",
            "per_dataset": {"m30k": {"variant": "a", "protocol": "to_en"}, "coco": {"variant": "b"}},
        }
    ]
    t = mule_mt_table(rows, evals, PARAMS, {"m30k": ["en", "de"], "coco": ["en", "zh", "ja"]})
    r = t.iloc[0]
    assert (r["m30k:En"], r["m30k:De"], r["coco:En"], r["coco:Cn"]) == (70.0, 55.0, 80.0, 60.0)
    assert np.isnan(r["coco:Ja"])
    assert r["m30k:params_train"] == 1000 and r["coco:params_train"] == 10


def test_format_params():
    assert format_params(7_100_000) == "7.1M" and format_params(352) == "352" and format_params(48_000) == "48.0K"


def test_mule_layout_single_model_column_and_human_languages_only():
    evals = {
        ("a", "direct"): ev({"en": 70.0}),
        ("b", "direct"): ev({"de": 60.0}),
        ("all", "direct"): ev({"en": 71.0, "de": 61.0, "fr": 51.0, "cs": 41.0}),
    }
    rows = [
        {"section": "(a) FastText (Baseline)", "name": "EmbN", "per_language": {"en": "a", "de": "b"}},
        {"section": "(d) MULE (Ours)", "name": "EmbN+NC", "variant": "all"},
    ]
    t = mule_table(rows, evals, PARAMS, ["en", "de", "fr", "cs"])
    assert list(t.columns) == [
        "section",
        "model",
        "single_model",
        "En",
        "De",
        "Fr",
        "Cs",
        "params_train",
        "params_test",
    ]
    assert list(t["single_model"]) == ["N", "Y"]
    assert t.iloc[0]["En"] == 70.0 and np.isnan(t.iloc[0]["Fr"]) and t.iloc[1]["Cs"] == 41.0
    assert t.iloc[0]["params_train"] == 1010
    assert "| (d) MULE (Ours) | EmbN+NC | Y |" in to_markdown(t, "T", [])


def test_parameters_an_evaluation_protocol_adds_are_counted():
    clc = ev({"en": 80.0, "de": 70.0}).assign(added_params=352)
    evals = {("all", "clc_c"): clc, ("all", "direct"): ev({"en": 79.0, "de": 69.0}).assign(added_params=0)}
    rows = [{"name": "SMALR", "variant": "all"}, {"name": "SMALR-CLC-C", "variant": "all", "protocol": "clc_c"}]
    table, _ = smalr_table(rows, evals, PARAMS, human_langs=["en", "de"])
    assert table.iloc[0]["params_test"] == 50 and table.iloc[1]["params_test"] == 50 + 352
    assert table.iloc[1]["params_train"] == 7_100_000 + 352 and table.iloc[1]["HA"] == 75.0


def test_a_four_language_dataset_gets_four_columns_and_a_filled_average():
    """Real Multi30K has en, de, fr, cs only: no empty columns for the other six, and A is their mean."""
    rows = [{"name": "EmbN", "variant": "a"}]
    evals = {("a", "direct"): ev({"en": 60.0, "de": 50.0, "fr": 40.0, "cs": 30.0})}
    table, translated = smalr_table(
        rows, evals, PARAMS, human_langs=["en", "de", "fr", "cs"], langs=["en", "de", "fr", "cs"]
    )
    assert list(table.columns) == ["model", "En", "De", "Fr", "Cs", "HA", "A", "params_train", "params_test"]
    assert table.iloc[0]["A"] == 45.0 == table.iloc[0]["HA"] and translated == []
    # a two-language subset, given in another order, keeps SMALR's column order
    table, _ = smalr_table(
        rows, {("a", "direct"): ev({"en": 60.0, "de": 50.0})}, PARAMS, human_langs=["en", "de"], langs=["de", "en"]
    )
    assert list(table.columns)[:4] == ["model", "En", "De", "HA"] and table.iloc[0]["A"] == 55.0
    with pytest.raises(ValueError, match="no SMALR table column for language"):
        smalr_table(rows, evals, PARAMS, human_langs=["en"], langs=["en", "hi"])


def test_the_report_layer_loads_without_torch():
    """The table, figure and findings rules only read evaluations: importing torch would cost each of
    their jobs two seconds of start-up (seven speech and any-to-any tables in the default DAG)."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import polyvse.report\n"
        "for m in pkgutil.iter_modules(polyvse.report.__path__):\n"
        "    importlib.import_module(f'polyvse.report.{m.name}')\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))[:3])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
