"""The learning overview (polyvse.report.learning): chance levels by hand, the learned flag, the
exceptions and stop reasons on small files, and the rule in the default DAG."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from math import comb
from pathlib import Path

import pandas as pd
import pytest
import yaml

from polyvse.plan import add_seed_replicas, completed_plan
from polyvse.report.learning import (
    EXCEPTIONS,
    curve_panels,
    i2t_chance,
    image_recall_chance,
    learning_figures,
    learning_inputs,
    learning_markdown,
    learning_plan,
    learning_table,
    mr_chance,
    pair_recall_chance,
    plot_curves,
    stop_reason,
    t2i_chance,
    validation_chance,
)

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def test_chance_levels_by_hand():
    # text → image: one image of N is the truth; R@10 of 200 images is 5 %
    assert t2i_chance(200, 10) == 0.05 and t2i_chance(200, 1) == 0.005 and t2i_chance(8, 10) == 1.0
    # image → text, one caption an image: the same as text → image
    assert i2t_chance(200, 200, 10) == pytest.approx(0.05)
    # five captions an image (1,000 sentences): a miss draws k of the 995 others, 1 − C(995, k) / C(1000, k)
    assert i2t_chance(200, 1000, 1) == pytest.approx(0.005)  # 1 − 995/1000
    assert i2t_chance(200, 1000, 5) == pytest.approx(1 - comb(995, 5) / comb(1000, 5))
    assert i2t_chance(200, 1000, 5) == pytest.approx(0.02480, abs=1e-5)  # ln: −Σ 5/(1000 − j) − Σ (5/(1000 − j))² / 2
    assert i2t_chance(200, 1000, 10) == pytest.approx(1 - comb(995, 10) / comb(1000, 10))
    assert i2t_chance(200, 1000, 10) == pytest.approx(0.04911, abs=1e-5)
    assert i2t_chance(2, 4, 5) == 1.0  # more candidates asked for than there are
    # mR: the mean of the six recalls, in percent; 200 images with one caption each: (0.5 + 2.5 + 5) / 3
    assert mr_chance(200, 200) == pytest.approx(8 / 3)
    assert mr_chance(200, 1000) == pytest.approx(100 * (0.005 + 0.025 + 0.05 + 0.005 + 0.02480 + 0.04911) / 6, abs=1e-3)
    # speech: R@10 of 128 spoken images, and the validation score's mean over K = 1, 5, 10 of 100
    assert image_recall_chance(128) == pytest.approx(7.8125) and image_recall_chance(1000) == 1.0
    assert pair_recall_chance(100) == pytest.approx(16 / 3)
    with pytest.raises(ValueError):
        i2t_chance(200, 100, 1)


def test_stop_reason_is_the_recorded_one_else_the_loop_s_rule():
    assert stop_reason("patience", 8, 8, None) == "patience"  # recorded: believed
    assert stop_reason(None, 3, 7, 4) == "patience"  # four epochs without a new best
    assert stop_reason(None, 4, 5, 4) == "ceiling"  # ran out of epochs first
    assert stop_reason(None, 2, 5, None) == "ceiling"  # no patience: every epoch of the ceiling


# --- a small run on disk ----------------------------------------------------------------------------


def _tsv(path: Path, rows: list[dict]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return str(path)


def _json(path: Path, data: dict) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return str(path)


def _epochs(path: Path, values: list[float], score: str = "val_mR") -> str:
    return _tsv(path, [{"epoch": e + 1, "loss": 1.0, score: v} for e, v in enumerate(values)])


def _data(root: Path) -> tuple[str, str]:
    """A captions table (val: 100 images, en and de five human captions each) and an utterances table
    (val: 96 images spoken in en, hi, ja, one of them without ja)."""
    caps = [
        {"image_id": f"v{i}", "split": "val", "lang": lang, "cap_idx": c, "text": "x", "origin": "human"}
        for i in range(100)
        for lang in ("en", "de")
        for c in range(5)
    ]
    caps += [{"image_id": "t0", "split": "train", "lang": "en", "cap_idx": 0, "text": "x", "origin": "human"}]
    captions = root / "captions.parquet"
    pd.DataFrame(caps).to_parquet(captions)
    utt = [
        {"image_id": f"v{i}", "split": "val", "lang": lang}
        for i in range(96)
        for lang in ("en", "hi", "ja")
        if not (i == 0 and lang == "ja")
    ]
    utterances = root / "utterances.parquet"
    pd.DataFrame(utt).to_parquet(utterances)
    return str(captions), str(utterances)


def _word_eval(path: Path, m_rs: list[float]) -> str:
    return _tsv(
        path,
        [
            {"lang": lang, "test_source": "human", "n_images": 200, "n_sentences": 1000, "mR": m}
            for lang, m in zip(("en", "de"), m_rs)
        ],
    )


def small_run(root: Path) -> dict:
    """A plan of six models with their files: two word models either side of 5× chance, an exception,
    a speech model, an MLMME run and two Translator models (source: validation only; a target
    without params.json)."""
    captions, utterances = _data(root)
    word_val = {"captions": captions, "langs": ["en", "de"]}

    def word(variant: str, m_rs: list[float], params: dict, tables: list[str], exception: str = "") -> dict:
        return {
            "key": variant,
            "family": "mule",
            "dataset": "m30k",
            "variant": variant,
            "run": "",
            "base": variant.split("-s")[0],
            "params": _json(root / variant / "params.json", params),
            "epochs": _epochs(root / variant / "epochs.tsv", [3.0, 9.0, 12.0, 11.0]),
            "eval": _word_eval(root / variant / "eval.tsv", m_rs),
            "score": "val_mR",
            "patience": 4,
            "validation": word_val,
            "tables": tables,
            "exception": exception,
        }

    speech_eval = [
        {"pair": p, "kind": "image", "r1": 5.0, "r5": 15.0, "r10": r10, "n": 128}
        for p, r10 in (("E&I", 30.0), ("H&I", 20.0), ("J&I", 25.0))
    ] + [{"pair": "H&E", "kind": "cross", "r1": 1.0, "r5": 2.0, "r10": 90.0, "n": 128}]
    mlmme_eval = []
    for lang in ("en", "de"):
        mlmme_eval += [
            {
                "task": "image_sentence",
                "query": lang,
                "target": "image",
                "r1": 2,
                "r5": 8,
                "r10": 14,
                "n_queries": 1000,
            },
            {"task": "image_sentence", "query": "image", "target": lang, "r1": 3, "r5": 9, "r10": 15, "n_queries": 200},
        ]
    mlmme_eval.append({"task": "sentence_sentence", "query": "en", "target": "de", "r1": 99, "r5": 99, "r10": 99})
    models = [
        word("mule_a", [13.6, 13.4], {"best_epoch": 3, "epochs_run": 7, "stop_reason": "patience"}, ["t2", "fig"]),
        word("mule_b", [12.0, 13.0], {"best_epoch": 8, "epochs_run": 8, "stop_reason": "ceiling"}, ["t2"]),
        # 5.1x chance in the mean, 3.8x in German
        word("mule_b-s1", [17.0, 10.0], {"best_epoch": 8, "epochs_run": 8, "stop_reason": "ceiling"}, ["t2"]),
        word(
            "thr_1000",
            [3.0, 3.0],
            {"best_epoch": 2, "epochs_run": 6, "stop_reason": "patience"},
            ["fig"],
            EXCEPTIONS["thr_1000"],
        ),
        {
            "key": "infonce",
            "family": "speech",
            "dataset": "spoken",
            "variant": "infonce",
            "run": "",
            "base": "infonce",
            "params": _json(root / "sp" / "params.json", {"best_epoch": 4, "epochs_run": 4, "stop_reason": "ceiling"}),
            "epochs": _epochs(root / "sp" / "epochs.tsv", [6.0, 8.0, 10.0, 12.0], "val_recall"),
            "eval": _tsv(root / "sp" / "eval.tsv", speech_eval),
            "score": "val_recall",
            "patience": 4,
            "validation": {"utterances": utterances, "speech_langs": ["en", "hi", "ja"]},
            "tables": ["speech"],
            "exception": "",
        },
        {
            "key": "b100",
            "family": "mlmme",
            "dataset": "m30k",
            "variant": "mlmme",
            "run": "b100",
            "base": "b100",
            "params": _json(root / "ml" / "params.json", {"best_epoch": 5, "epochs_run": 9, "stop_reason": "patience"}),
            "epochs": _epochs(root / "ml" / "epochs.tsv", [4.0] * 9),
            "eval": _tsv(root / "ml" / "eval.tsv", mlmme_eval),
            "score": "val_mR",
            "patience": 4,
            "validation": word_val,
            "tables": ["mlmme_table1"],
            "exception": "",
        },
        {
            "key": "source",
            "family": "translator",
            "dataset": "m30k",
            "variant": "translator",
            "run": "source",
            "base": "source",
            "params": _json(root / "src" / "params.json", {"best_epoch": 6, "val_mR": 20.0}),
            "epochs": _epochs(root / "src" / "epochs.tsv", [5.0, 10.0, 14.0, 17.0, 19.0, 20.0]),
            "eval": None,
            "score": "val_mR",
            "patience": 4,
            "validation": {"captions": captions, "langs": ["de"]},
            "tables": ["curve"],
            "exception": "",
        },
        {
            "key": "FS/n50",
            "family": "translator",
            "dataset": "m30k",
            "variant": "translator",
            "run": "FS/n50",
            "base": "FS/n50",
            "params": None,
            "epochs": _epochs(root / "fs" / "epochs.tsv", [3.0, 4.0, 3.5, 3.0, 3.2, 3.1, 3.0]),
            "eval": _tsv(
                root / "fs" / "eval.tsv",
                [{"protocol": "FS", "n_examples": 50, "n_images": 200, "n_sentences": 200, "mR": 4.0, "best_epoch": 2}],
            ),
            "score": "val_mR",
            "patience": 4,
            "validation": {"captions": captions, "langs": ["fr"]},  # no French val captions: no chance line
            "tables": ["curve"],
            "exception": "",
        },
    ]
    tables = {"t2": "Table 2", "fig": "Figure 3", "speech": "Table 3.2", "mlmme_table1": "MLMME", "curve": "Curve"}
    return {"tables": tables, "models": models}


def read(path: str):
    if path.endswith(".json"):
        return json.loads(Path(path).read_text())
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    return pd.read_csv(path, sep="\t", keep_default_na=False)


def test_each_model_s_score_against_chance_learned_flag_and_stop_reason(tmp_path):
    plan = small_run(tmp_path)
    table = learning_table(plan, read).set_index(["variant", "run"])
    word_chance = mr_chance(200, 1000)  # 2.65 on both languages
    a, b = table.loc[("mule_a", "")], table.loc[("mule_b", "")]
    # 13.5 mR is 5.1× chance: learned; 12.5 is 4.7×: not, at the word tables' 5×
    assert a["score"] == 13.5 and a["chance"] == round(word_chance, 2) and a["ratio"] == round(13.5 / word_chance, 2)
    assert a["learned"] == "yes" and b["learned"] == "no" and a["threshold"] == 5.0
    assert (a["worst_lang"], a["worst_score"], a["worst_ratio"]) == ("de", 13.4, round(13.4 / word_chance, 2))
    # a word model learned only if every language it reports did
    b1 = table.loc[("mule_b-s1", "")]
    assert b1["ratio"] >= 5.0 and (b1["worst_lang"], b1["worst_score"]) == ("de", 10.0) and b1["learned"] == "no"
    assert (a["best_epoch"], a["epochs_run"], a["stop_reason"]) == (3, 7, "patience")
    assert b["stop_reason"] == "ceiling" and a["val_score"] == 12.0
    assert a["val_chance"] == round(mr_chance(100, 500), 2) and a["tables"] == "t2 fig"
    thr = table.loc[("thr_1000", "")]
    assert thr["learned"] == "no" and thr["exception"].startswith("SMALR Fig. 3")
    # speech: mean image R@10 (30, 20, 25; not the cross-lingual pair) against 10/128; 3× is enough
    sp = table.loc[("infonce", "")]
    assert sp["score"] == 25.0 and sp["chance"] == 7.81 and sp["learned"] == "yes" and sp["threshold"] == 3.0
    assert sp["val_chance"] == round(pair_recall_chance(95), 2)  # one val image lacks its ja utterance
    # MLMME: per language the mean of both directions' r1/5/10 (8.5), chance of 200 images, 1000 sentences
    ml = table.loc[("mlmme", "b100")]
    assert ml["score"] == 8.5 and ml["chance"] == round(word_chance, 2) and ml["learned"] == "yes"
    # Translator: the source's best validation mR (no test evaluation); a target without params.json
    src, fs = table.loc[("translator", "source")], table.loc[("translator", "FS/n50")]
    assert src["split"] == "val" and src["score"] == 20.0 and src["chance"] == round(mr_chance(100, 500), 2)
    assert (src["epochs_run"], src["stop_reason"]) == (6, "ceiling")  # best at its last epoch
    assert (fs["best_epoch"], fs["epochs_run"], fs["stop_reason"]) == (2, 7, "patience")  # 5 epochs past its best
    assert fs["learned"] == "no" and fs["ratio"] == round(4.0 / (8 / 3), 2) and math.isnan(fs["val_chance"])


def test_the_report_counts_and_lists_what_did_not_learn(tmp_path):
    plan = small_run(tmp_path)
    table = learning_table(plan, read)
    text = learning_markdown(plan, table)
    summary = text.split("\n\n")[1]
    assert summary.startswith("8 trained models (4 word, 1 speech, 1 mlmme, 2 translator): 4 learned, 4 did not")
    assert "4 converged (stopped on patience), 4 hit their epochs ceiling." in summary
    # what did not learn, its seeds counted; the exception apart, with its reason below
    assert "Did not learn: mule_b (2 of 2 seeds), translator · FS/n50." in summary
    assert "Expected not to (shown degraded by a paper or an ablation, Exceptions below): thr_1000." in summary
    assert "## t2\n\nTable 2: 1 of 3 learned." in text and "## fig\n\nFigure 3: 1 of 2 learned." in text
    assert "| mule_b-s1 | mule | m30k | 13.50 | 2.65 | 5.1 | de 10.0 | **no** | 8/8 | **ceiling** |" in text
    assert (
        "| thr_1000 | mule | m30k | 3.00 | 2.65 | 1.1 | de 3.0 | no (expected) | 2/6 | patience (converged) |" in text
    )
    assert "| translator · source | translator | m30k | 20.00 (val) |" in text
    assert f"| thr_1000 | {EXCEPTIONS['thr_1000']} |" in text


def test_one_figure_a_table_panels_a_model_with_its_seeds(tmp_path):
    plan = small_run(tmp_path)
    table = learning_table(plan, read)
    curves = [read(m["epochs"]) for m in plan["models"]]
    panels = curve_panels(plan, table, curves, "t2")
    assert [p["title"] for p in panels] == ["mule_a", "mule_b"]
    seeds = panels[1]["lines"]
    assert [line["label"] for line in seeds] == ["mule_b", "mule_b-s1"] and all(line["ceiling"] for line in seeds)
    assert not panels[1]["learned"] and panels[0]["learned"] and panels[0]["lines"][0]["best_epoch"] == 3
    assert panels[0]["chance"] == round(mr_chance(100, 500), 2) and panels[0]["lines"][0]["value"][1] == 9.0
    path = tmp_path / "learning" / "t2.png"
    path.parent.mkdir()
    plot_curves(panels, "t2: Table 2", path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_validation_chance_is_nan_without_a_validation_set(tmp_path):
    captions, utterances = _data(tmp_path)
    assert math.isnan(validation_chance({"captions": captions, "langs": ["ko"]}, read))
    both = {"utterances": utterances, "captions": captions, "speech_langs": ["en", "hi"], "text_langs": ["en"]}
    assert validation_chance(both, read) == pytest.approx(pair_recall_chance(96))


# --- the default config ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def default_config():
    from snakemake.utils import validate

    c = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(c, str(REPO / "config" / "schema.yaml"))
    add_seed_replicas(c)
    return c


def test_the_default_plan_has_every_trained_model_of_a_table_once(default_config):
    plan = learning_plan(completed_plan(default_config), "results")
    models = {(m["variant"], m["run"]): m for m in plan["models"]}
    assert len(models) == len(plan["models"])
    # a word variant and its seed replicas, in every table and figure that reads it
    for v in ("mule_10", "mule_10-s1", "mule_10-s2"):
        assert models[(v, "")]["tables"] == ["table2", "figure1b", "figure3"]
    assert models[("embn_en", "")]["tables"] == ["table2", "mule_table2", "mule_table4"]
    assert models[("embn_fr-s2", "")]["base"] == "embn_fr"
    assert models[("thr_1000", "")]["exception"] == EXCEPTIONS["thr_1000"]
    assert models[("coco_thr_1000", "")]["exception"] and not models[("thr_100", "")]["exception"]
    # speech, joint (with its seeds, any_to_any), MLMME runs with the findings' replicas, the Translator
    assert models[("infonce-s2", "")]["family"] == "speech" and "any_to_any" in models[("infonce", "")]["tables"]
    assert models[("joint-s1", "")]["family"] == "joint" and models[("joint_text", "")]["score"] == "val_recall"
    runs = [m["run"] for m in plan["models"] if m["family"] == "mlmme"]
    assert runs[:4] == ["vse_en", "vse_de", "vse_de-s1", "vse_de-s2"] and "b25" in runs and "b25-s1" not in runs
    translator = [m["run"] for m in plan["models"] if m["family"] == "translator"]
    assert translator[0] == "source" and "T2/n1000" in translator and len(translator) == 1 + 3 * 5
    # a run of a sweep has its own exception, by "{variant} · {run}"
    assert models[("translator", "FS/n50")]["exception"] == EXCEPTIONS["translator · FS/n50"]
    assert models[("translator", "FS/n200")]["exception"] == EXCEPTIONS["translator · FS/n200"]
    assert not models[("translator", "FS/n500")]["exception"] and not models[("translator", "T1/n50")]["exception"]
    assert "unused" not in {m["variant"] for m in plan["models"]}
    assert set(plan["tables"]) == set(default_config["reports"]) | set(default_config["figures"])
    files = learning_inputs(plan)
    assert "results/m30k/captions.parquet" in files and "results/spoken/utterances.parquet" in files
    assert "results/m30k/translator/translator/FS/n50/eval.tsv" in files
    assert learning_figures(plan, "results")["table2"] == "results/learning/table2.png"


def test_a_variant_no_table_reads_is_not_a_row(default_config):
    config = {**default_config, "variants": {**default_config["variants"]}}
    config["variants"]["unused"] = {"model": "embn", "dataset": "m30k", "train_langs": ["en"]}
    assert "unused" not in {m["variant"] for m in learning_plan(completed_plan(config), "results")["models"]}


def test_the_default_dag_writes_the_learning_overview(tmp_path):
    """A dry run of the default config plans the rule learning, its table and one figure a table."""
    for name in ("config", "profiles"):
        (tmp_path / name).symlink_to(REPO / name)
    run = subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-n", "--cores", "2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert "rule learning:" in run.stdout
    for path in ("results/learning.tsv", "results/learning.md", "results/learning/table2.png"):
        assert path in run.stdout, path
