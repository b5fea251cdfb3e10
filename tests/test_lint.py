"""The code passes its linters and formatters, as CI runs them through this file: `ruff check` (pyproject.toml
[tool.ruff]: unused and undefined names, syntax errors), `ruff format --check` for the library, scripts, tests and
benchmarks, `snakefmt --check` for the Snakefile and rules (pyproject.toml [tool.snakefmt]), and `snakemake --lint`
(every rule in the conda env of envs/polyvse.yaml, whose pins are pyproject.toml's)."""

import os
import shutil
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PYTHON_DIRS = ["polyvse", "workflow_scripts", "tests", "bench"]


def _tool(name: str) -> str:
    """The tool beside this Python (the venv's), else on PATH; skip when neither has it."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (./setup.sh installs it with the dev extra)")
    return found


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), cwd=REPO, capture_output=True, text=True, timeout=120)


def test_ruff_check_is_clean():
    done = _run(_tool("ruff"), "check", *PYTHON_DIRS)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_python_is_in_ruff_format():
    done = _run(_tool("ruff"), "format", "--check", *PYTHON_DIRS)
    assert done.returncode == 0, "run `ruff format .`:\n" + done.stdout[-4000:] + done.stderr[-2000:]


def test_rules_are_in_snakefmt_format():
    done = _run(_tool("snakefmt"), "--check", "Snakefile", "rules")
    assert done.returncode == 0, "run `snakefmt Snakefile rules`:\n" + done.stdout[-4000:] + done.stderr[-2000:]


def test_snakemake_lint_is_clean():
    env = {**os.environ, "SLURM_CONF": "/dev/null"}  # no wait on a SLURM client's controller
    done = subprocess.run(
        [_tool("snakemake"), "--lint"], cwd=REPO, capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0 and "Congratulations" in done.stdout + done.stderr, (
        done.stdout[-4000:] + done.stderr[-2000:]
    )


def test_every_rule_runs_in_the_conda_env_pinned_as_pyproject():
    """`--use-conda` builds envs/polyvse.yaml for every rule; its pip pins are the package's dependencies."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((REPO / "envs" / "polyvse.yaml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip == project["dependencies"]
    assert "espeak-ng" in env["dependencies"]
    n_scripts = 0
    for smk in sorted((REPO / "rules").glob("*.smk")):
        text = smk.read_text()
        # rules inside an `if` block are indented further
        scripts = re.findall(r"^ +script:$", text, flags=re.M)
        envs = re.findall(r'^ +conda:\n +"\.\./envs/polyvse\.yaml"$', text, flags=re.M)
        assert len(scripts) == len(envs), smk.name
        n_scripts += len(scripts)
    assert n_scripts > 30
