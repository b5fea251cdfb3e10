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


def pytest_collection_modifyitems(config, items) -> None:
    """Run the SLURM cluster tests last. Once tests/slurm/local_cluster.sh has installed SLURM,
    every later `snakemake` start waits ~9 s: the SLURM executor plugin runs `scontrol show config`
    when it is imported, and with the cluster down that call hangs until its timeout. On a fresh
    CI machine, running those tests last keeps the ~25 other snakemake starts free of it."""
    items.sort(key=lambda item: Path(str(item.fspath)).name == "test_slurm.py")  # stable: order kept otherwise


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
