"""Fault injection: the workflow SIGKILLed in each stage, then the same command again, writes
every table byte-identical to an uninterrupted run's (tests/conftest.py ``smalr_run``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from polyvse.report.readme import TIMING_FILES

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TINY_SMALR = REPO / "tests" / "configs" / "tiny_smalr.yaml"

pytestmark = pytest.mark.workflow

# stage -> the script its jobs run (snakemake runs a copy named .snakemake/scripts/tmpXXXX.<script>)
STAGES = {"dataset": ".make_dataset.py", "MT": ".augment_captions.py", "FastText": ".fasttext_vectors.py",
          "pretraining": ".pretrain.py", "training": ".train.py", "evaluation": ".evaluate.py"}


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


def command() -> list[str]:
    return [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--configfile", "config.yaml", "--cores", "2"]


def kill_during(workdir: Path, script: str) -> None:
    """Start the workflow, SIGKILL it with all its jobs once a job of ``script`` runs."""
    proc = subprocess.Popen(command(), cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    deadline = time.time() + 300
    try:
        while not any(script in c for c in session_cmdlines(proc.pid)):
            assert proc.poll() is None, f"the workflow ended before a {script} job ran"
            assert time.time() < deadline, f"no {script} job within 300 s"
            time.sleep(0.02)
        time.sleep(0.3)  # inside the job's work, not at its first line
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)


def test_sigkill_in_every_stage_then_the_same_command_gives_the_uninterrupted_tables(smalr_run, tmp_path):
    work = tmp_path / "faults"
    work.mkdir()
    (work / "config.yaml").write_text(TINY_SMALR.read_text())
    for stage, script in STAGES.items():
        kill_during(work, script)
    done = subprocess.run(command(), cwd=work, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-4000:]
    tables = sorted(p.name for p in (smalr_run / "results").glob("*")  # timings differ between any two runs
                    if p.suffix in (".tsv", ".md") and p.name not in TIMING_FILES)
    assert tables, "the uninterrupted run wrote no table"
    for name in tables:
        assert (work / "results" / name).read_bytes() == (smalr_run / "results" / name).read_bytes(), name
    leftovers = [p for p in (work / "results").rglob(".*") if p.is_file() and p.name != ".snakemake_timestamp"]
    assert not leftovers, f"temporary files left behind: {leftovers}"
