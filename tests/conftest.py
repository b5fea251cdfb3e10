"""Fixtures shared by test modules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TINY_SMALR = REPO / "tests" / "configs" / "tiny_smalr.yaml"


@pytest.fixture(scope="session")
def smalr_run(tmp_path_factory) -> Path:
    """One uninterrupted run of the workflow on tests/configs/tiny_smalr.yaml (every text stage:
    dataset, MT, FastText, PCA, pretraining, training, evaluation, tables, figures)."""
    d = tmp_path_factory.mktemp("wf_smalr")
    (d / "config.yaml").write_text(TINY_SMALR.read_text())
    cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--configfile", str(d / "config.yaml"), "--cores", "2"]
    done = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-4000:]
    return d
