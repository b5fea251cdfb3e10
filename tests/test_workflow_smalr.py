"""End to end: the MULE / SMALR families, CLC protocols, MULE table layout and
the two SMALR figures on a tiny config, run by snakemake as a user runs it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from polyvse.io import load_torch

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def run(smalr_run):
    return smalr_run  # tests/conftest.py: one uninterrupted run, shared with tests/test_faults.py


def test_smalr_table_rows_protocols_and_parameter_counts(run):
    table = pd.read_csv(run / "results" / "table2.tsv", sep="\t")
    assert list(table["model"]) == ["Trans. to En", "EmbN", "(5) S-LIWE", "(5) MULE", "SMALR", "SMALR-CLC-A",
                                    "SMALR-CLC-C"]
    rows = table.set_index("model")
    assert not pd.isna(rows.loc["SMALR", "Cn"]) and pd.isna(rows.loc["SMALR-CLC-A", "Cn"])  # CLC: human languages
    assert not pd.isna(rows.loc["SMALR-CLC-C", "HA"])
    # CLC-C adds its MLP (5 languages: 5*32 + 32) to SMALR's test-time count; CLC-A adds nothing
    assert rows.loc["SMALR-CLC-C", "params_test"] - rows.loc["SMALR", "params_test"] == 5 * 32 + 32
    assert rows.loc["SMALR-CLC-A", "params_test"] == rows.loc["SMALR", "params_test"]
    params = json.loads((run / "results/m30k/models/smalr_5/params.json").read_text())
    assert rows.loc["SMALR", "params_train"] == params["params_train"] > params["params_test"]
    clc = pd.read_csv(run / "results/m30k/eval/smalr_5.clc_c.tsv", sep="\t")
    assert list(clc["lang"]) == ["en", "de", "fr", "cs"] and set(clc["added_params"]) == {192}


def test_family_outputs_pretraining_and_mule_table(run):
    saved = load_torch(run / "results/m30k/pretrain/latent.pt")
    assert saved["embeddings"].shape[1] == 8 and saved["embeddings"].shape[0] <= 32
    assert len(saved["entries"]) == saved["word_to_token"].shape[0]
    assert (run / "results/m30k/models/mule_5/checkpoint/lp/last.pt").exists()  # the LP phase ran first
    mapped = json.loads((run / "results/m30k/models/dict_5/params.json").read_text())
    assert sum(mapped["dictionary_mapped_words"].values()) > 0
    liwe = load_torch(run / "results/m30k/models/liwe_5/model.pt")
    assert liwe["vocab"]["kind"] == "chars"
    mule = pd.read_csv(run / "results" / "mule_table2.tsv", sep="\t")
    assert list(mule.columns) == ["section", "model", "single_model", "En", "De", "Fr", "Cs", "params_train",
                                  "params_test"]
    assert list(mule["single_model"]) == ["N", "Y"]
    assert (run / "results/m30k/val_translations.parquet").exists()
    usage = pd.read_csv(run / "results/m30k/pretrain/latent_usage.tsv", sep="\t").set_index("scope")
    assert usage.loc["all", "words"] == (saved["word_to_token"] >= 0).sum() and usage.loc["all", "tokens_used"] >= 1


def test_every_job_s_time_and_memory_is_gathered(run):
    jobs = pd.read_csv(run / "results" / "benchmarks.tsv", sep="\t")
    rules = set(jobs["rule"])
    assert {"train", "evaluate", "pretrain", "fasttext", "dataset"} <= rules, rules
    assert (jobs["seconds"] > 0).all() and (jobs.loc[jobs["rule"] == "train", "max_rss_mb"] > 50).all()
    by_rule = pd.read_csv(run / "results" / "benchmarks_by_rule.tsv", sep="\t").set_index("rule")
    assert by_rule.loc["train", "jobs"] == (jobs["rule"] == "train").sum()


def test_figures_and_their_numbers(run):
    for name in ("figure1b", "figure3"):
        png = (run / "results" / f"{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
    f1 = pd.read_csv(run / "results" / "figure1b.tsv", sep="\t")
    assert list(f1["n_langs"]) == [5, 5, 5] and list(f1["series"]) == ["MULE", "S-LIWE", "SMALR"]
    f3 = pd.read_csv(run / "results" / "figure3.tsv", sep="\t", keep_default_na=False)
    assert list(f3["method"]) == ["Dictionary mapping", "MULE", "SMALR"] and set(f3["n_langs"]) == {5}
    table = pd.read_csv(run / "results" / "table2.tsv", sep="\t").set_index("model")
    smalr = f3.set_index("method").loc["SMALR"]
    assert smalr["params_train"] == table.loc["SMALR", "params_train"]
    assert smalr["A"] == pytest.approx(table.loc["SMALR", ["En", "De", "Fr", "Cs", "Cn"]].mean(), abs=0.06)


def test_findings_train_the_compared_rows_with_every_seed(run):
    """tests/configs/tiny_smalr.yaml has SMALR and its CLC rows: the CLC claim is tested over
    smalr_5 and its replica smalr_5-s1 (seed + 1; findings.seeds: 2 there)."""
    table = pd.read_csv(run / "results" / "findings.tsv", sep="\t")
    assert list(table["claim"].unique()) == ["smalr_clc"]
    assert list(table["row"]) == ["SMALR", "SMALR-CLC-A", "SMALR-CLC-C"] and set(table["seeds"]) == {2}
    assert table["verdict"].iloc[0] in ("agrees", "disagrees", "within noise")
    seeds = [json.loads((run / f"results/m30k/models/smalr_5{s}/params.json").read_text())
             for s in ("", "-s1")]
    assert len({p["params_train"] for p in seeds}) == 1  # the same model, trained twice
    assert not (run / "results/m30k/models/smalr_5-s2").exists()
    values = [float(x) for x in table["values"].iloc[0].split()]
    assert len(set(values)) > 1  # other seeds, other numbers
    assert "## SMALR: cross-lingual consistency" in (run / "results" / "findings.md").read_text()
