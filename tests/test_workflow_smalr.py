"""End to end: the MULE / SMALR families, CLC protocols, MULE table layout and
the two SMALR figures on a tiny config, run by snakemake as a user runs it; and fault injection: the
workflow asked for SMALR's evaluations and SIGKILLed in each stage, then the same command again, writes them
byte-identical to the uninterrupted run's (tests/conftest.py ``smalr_run``; one module, so pytest-xdist runs both in
one worker)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from polyvse.io import load_torch

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TINY_SMALR = REPO / "tests" / "configs" / "tiny_smalr.yaml"

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def run(smalr_run):
    return smalr_run  # tests/conftest.py: one uninterrupted run, also the faults test's reference


def test_smalr_table_rows_protocols_and_parameter_counts(run):
    table = pd.read_csv(run / "results" / "table2.tsv", sep="\t")
    assert list(table["model"]) == [
        "Trans. to En",
        "EmbN",
        "(5) S-LIWE",
        "(5) MULE",
        "SMALR",
        "SMALR-CLC-A",
        "SMALR-CLC-C",
    ]
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
    assert list(mule.columns) == [
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
    by_family = pd.read_csv(run / "results" / "benchmarks_by_family.tsv", sep="\t").set_index("family")
    assert {"smalr", "latent pretraining", "data and features"} <= set(by_family.index), by_family
    assert by_family["jobs"].sum() == len(jobs) and (by_family["cpu_seconds"] > 0).all()


def test_the_data_statistics_show_how_far_apart_the_fasttext_tables_put_the_colour_words(run):
    words = pd.read_csv(run / "results" / "attribute_words.tsv", sep="\t")
    assert set(words["attribute"]) == {"colour", "shape"} and set(words["dataset"]) == {"m30k"}
    assert len(words) == 2 * words["lang"].nunique() and words["lang"].nunique() >= 4, words
    assert words["mean_cosine"].between(-1, 1).all() and (words["values"] >= 2).all(), words
    text = (run / "results" / "data_stats.md").read_text()
    assert "How far apart the FastText vectors put the world's words" in text and "| m30k | en |" in text


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
    seeds = [json.loads((run / f"results/m30k/models/smalr_5{s}/params.json").read_text()) for s in ("", "-s1")]
    assert len({p["params_train"] for p in seeds}) == 1  # the same model, trained twice
    jobs = pd.read_csv(run / "results" / "benchmarks.tsv", sep="\t")
    assert ("train_seeds", "m30k/smalr_5") in set(zip(jobs["rule"], jobs["job"]))  # both in one job
    assert not ((jobs["rule"] == "train") & jobs["job"].str.startswith("m30k/smalr_5")).any()
    assert not (run / "results/m30k/models/smalr_5-s2").exists()
    values = [float(x) for x in table["values"].iloc[0].split()]
    assert len(set(values)) > 1  # other seeds, other numbers
    assert "## SMALR: cross-lingual consistency" in (run / "results" / "findings.md").read_text()


# ----------------------------------------------------------------------------- fault injection

# stage -> the script its jobs run (snakemake runs a copy named .snakemake/scripts/tmpXXXX.<script>)
STAGES = {
    "dataset": ".make_dataset.py",
    "MT": ".augment_captions.py",
    "FastText": ".fasttext_vectors.py",
    "pretraining": ".pretrain.py",
    "training": ".train.py",
    "evaluation": ".evaluate.py",
}


def session_cmdlines(session: int) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getsid(int(entry.name)) == session:
                    found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except (OSError, ProcessLookupError):
                continue
    return found


# The faults run asks for SMALR's evaluations alone: their DAG has every stage of STAGES (a training job
# evaluates its models on the test captions; the CLC-A protocol is an evaluation job) and the seed replica
# smalr_5-s1, in 29 of the full run's 55 jobs.
FAULTS_TARGETS = [
    "results/m30k/eval/smalr_5.direct.tsv",
    "results/m30k/eval/smalr_5-s1.direct.tsv",
    "results/m30k/eval/smalr_5.clc_a.tsv",
]


def command() -> list[str]:
    return [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--configfile", "config.yaml", "--cores", "2", *FAULTS_TARGETS]


def kill_when(workdir: Path, ready, what: str) -> None:
    """Start the workflow, SIGKILL it with all its jobs once ``ready(session id)`` holds."""
    proc = subprocess.Popen(
        command(),
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    deadline = time.time() + 300
    try:
        while not ready(proc.pid):
            assert proc.poll() is None, f"the workflow ended before {what}"
            assert time.time() < deadline, f"not {what} within 300 s"
            time.sleep(0.02)
        time.sleep(0.3)  # inside the job's work, not at its first line
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)


def kill_during(workdir: Path, script: str) -> None:
    """Start the workflow, SIGKILL it with all its jobs once a job of ``script`` runs."""
    kill_when(workdir, lambda session: any(script in c for c in session_cmdlines(session)), f"a {script} job ran")


def test_sigkill_in_every_stage_then_the_same_command_gives_the_uninterrupted_evaluations(smalr_run, tmp_path):
    work = tmp_path / "faults"
    work.mkdir()
    (work / "config.yaml").write_text(TINY_SMALR.read_text())
    for stage, script in STAGES.items():
        kill_during(work, script)
        if stage == "training":
            # rule train_seeds between two seeds: smalr_5 written, smalr_5-s1 training
            first_seed = work / "results/m30k/models/smalr_5/model.pt"
            kill_when(work, lambda _: first_seed.exists(), "the first seed of smalr_5 was written")
    done = subprocess.run(
        command(), cwd=work, capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    assert done.returncode == 0, done.stderr[-4000:]
    for name in FAULTS_TARGETS:
        assert (work / name).read_bytes() == (smalr_run / name).read_bytes(), name
    leftovers = [p for p in (work / "results").rglob(".*") if p.is_file() and p.name != ".snakemake_timestamp"]
    assert not leftovers, f"temporary files left behind: {leftovers}"
