"""The code passes `ruff check` (pyproject.toml [tool.ruff]: unused and undefined names, syntax errors)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_ruff_check_is_clean():
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        found = shutil.which("ruff")
        if found is None:
            pytest.skip("ruff is not installed (./setup.sh installs it with the dev extra)")
        ruff = Path(found)
    done = subprocess.run([str(ruff), "check", "polyvse", "workflow_scripts", "tests", "bench"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
