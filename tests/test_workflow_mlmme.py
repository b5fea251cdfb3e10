"""End to end: MLMME Table 1 and the Translator curve from a tiny config, run by
snakemake in a temporary directory as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))

pytestmark = pytest.mark.workflow

CONFIG = {
    "seed": 0,
    "datasets": {
        "m30k": {
            "adapter": "synthetic",
            "langs": ["en", "de", "fr"],
            "synthetic": {
                "profile": "m30k",
                "n_train": 48,
                "n_val": 12,
                "n_test": 12,
                "image_size": 64,
                "corpus_sentences": 1000,
            },
        }
    },
    "fasttext": {"dim": 16, "epochs": 5, "bucket": 10000},
    "variants": {
        "mlmme": {"model": "mlmme", "dataset": "m30k", "train_langs": ["en", "de"]},
        "translator": {"model": "translator", "dataset": "m30k", "train_langs": ["de", "fr"]},
    },
    "reports": {
        "mlmme_table1": {
            "layout": "mlmme",
            "caption": "MLMME vs VSE: image–sentence ranking (Calixto et al. 2017, Table 1 layout)",
            "rows": [{"name": "MLMME", "variant": "mlmme"}],
        },
        "translator_curve": {
            "layout": "translator_curve",
            "caption": "Translator: recall against the number of target-language training examples (poster Figure 3 layout)",
            "rows": [{"name": "Translator", "variant": "translator"}],
        },
    },
    "figures": {},
    "mlmme": {
        "betas": [1.0, 0.5],
        "model": {"word_dim": 8, "gru_hidden": 8, "joint_dim": 8, "dropout": 0.0},
        "n_contrastive": 3,
        "training": {"epochs": 2, "lr": 0.01, "batch_size": 16},
    },
    "translator": {
        "examples": [20, 10],
        "model": {"gru_hidden": 8, "joint_dim": 8},
        "source_training": {"epochs": 2, "lr": 0.01, "batch_size": 16},
        "target_training": {"epochs": 2, "lr": 0.01, "batch_size": 16, "min_batches_per_epoch": 2},
    },
    "resources": {"train": {"threads": 1}, "features": {"threads": 1}},
}


def snakemake(workdir: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--configfile", str(workdir / "config.yaml"), *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("wf_mlmme")
    (d / "config.yaml").write_text(yaml.safe_dump(CONFIG, allow_unicode=True))
    run = snakemake(d, "--cores", "2")
    assert run.returncode == 0, run.stderr[-4000:]
    return d


def test_mlmme_table_has_the_paper_layout(workdir):
    table = pd.read_csv(workdir / "results" / "mlmme_table1.tsv", sep="\t")
    assert list(table.columns) == ["section", "metric", "en VSE", "en β=1", "en β=.5", "de VSE", "de β=1", "de β=.5"]
    assert list(table["section"]) == (
        ["Sentence to image"] * 4 + ["Image to sentence"] * 4 + ["Sentence to sentence"] * 4
    )
    assert list(table["metric"]) == ["r@1", "r@5", "r@10", "mrank"] * 3
    recalls = table[table["metric"] != "mrank"]
    image = recalls[recalls["section"] != "Sentence to sentence"]
    assert ((image.iloc[:, 2:] >= 0) & (image.iloc[:, 2:] <= 100)).all().all()
    # 12 test images: every image is within rank 12, so r@10 < 100 is possible but mrank ≤ 12; an
    # image's first caption among the 60 (5 an image) is within rank 56
    ranks = table[table["metric"] == "mrank"].set_index("section").iloc[:, 1:]
    assert ((ranks.loc["Sentence to image"] >= 1) & (ranks.loc["Sentence to image"] <= 12)).all()
    assert ((ranks.loc["Image to sentence"] >= 1) & (ranks.loc["Image to sentence"] <= 56)).all()
    s2s = table[table["section"] == "Sentence to sentence"]
    assert s2s["en VSE"].isna().all() and s2s["de VSE"].isna().all() and s2s["en β=.5"].notna().all()
    md = (workdir / "results" / "mlmme_table1.md").read_text()
    assert "| | English VSE | English β=1 | English β=.5 | German VSE |" in md
    assert "*Sentence to image*" in md and "*Image to sentence*" in md and "en→de r@1" in md
    assert md.count("(+") + md.count("(-") >= 12  # every MLMME recall shows its gain over VSE
    params = json.loads((workdir / "results/m30k/mlmme/mlmme/b50/params.json").read_text())
    assert params["langs"] == ["en", "de"] and params["beta"] == 0.5
    vse = json.loads((workdir / "results/m30k/mlmme/mlmme/vse_de/params.json").read_text())
    assert vse["langs"] == ["de"] and vse["params_train"] < params["params_train"]


def test_translator_curve_has_every_protocol_and_size(workdir):
    curve = pd.read_csv(workdir / "results" / "translator_curve.tsv", sep="\t")
    assert list(curve.columns[:8]) == [
        "protocol",
        "n_examples",
        "r1_t2i",
        "r5_t2i",
        "r10_t2i",
        "r1_i2t",
        "r5_i2t",
        "r10_i2t",
    ]
    assert list(zip(curve["protocol"], curve["n_examples"])) == [(p, n) for p in ("FS", "T1", "T2") for n in (10, 20)]
    assert ((curve["r10_t2i"] >= curve["r1_t2i"]) & (curve["r10_i2t"] >= curve["r5_i2t"])).all()
    assert (
        curve.loc[curve["protocol"] == "T1", "params_train"]
        > curve.loc[curve["protocol"] == "FS", "params_train"].max()
    ).all()
    assert (workdir / "results" / "translator_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    align = json.loads((workdir / "results/m30k/translator/translator/align/align.json").read_text())
    assert align["dictionary"].startswith("fr-en ∘ en-de") and align["matrix_shape"] == [16, 16]
    assert 0 <= align["p1_csls_rcsls"] <= 100 and align["heldout_queries"] >= 1
    m = np.load(workdir / "results/m30k/translator/translator/align/translator.npy")
    assert np.linalg.norm(m, 2) <= 1 + 1e-5  # RCSLS's spectral constraint
    log = (workdir / "logs/m30k/translator_align_translator.log").read_text()
    assert "held-out precision@1" in log
    # every protocol started from the source model's image branch (translator.image_branch's default)
    curve_log = (workdir / "logs/report_translator_curve.log").read_text()
    assert "Image branch of every protocol (FS, T1, T2) at the start: the trained de source model's" in curve_log


def test_the_earlier_dialect_migrates_to_this_config():
    """The same tables in the earlier dialect (extra_reports switching them on, dataset and
    languages in the mlmme / translator blocks' defaults) migrate to CONFIG."""
    from polyvse.config_migration import migrate

    earlier = {k: v for k, v in CONFIG.items() if k not in ("variants", "reports")}
    earlier.update(variants={}, reports={}, extra_reports=["mlmme_table1", "translator_curve"])
    migrated = migrate(earlier)
    assert migrated == CONFIG


def test_nothing_left_to_do(workdir):
    again = snakemake(workdir, "--cores", "1", "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
