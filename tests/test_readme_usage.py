"""Every `snakemake` command of the README's usage block works as written (as a dry run)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def usage_commands() -> list[str]:
    """The command lines of the first code block under '## Usage', comments removed."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Usage\n\n```\n(.*?)```", readme, re.S)
    assert block, "README has no code block under '## Usage'"
    lines = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line.startswith("snakemake")]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A working directory that sees the repository's config/ and profiles/ as a clone would."""
    d = tmp_path_factory.mktemp("usage")
    for name in ("config", "profiles"):
        (d / name).symlink_to(REPO / name)
    return d


def test_the_usage_block_is_found():
    commands = usage_commands()
    assert any("--config training=" in c for c in commands) and any("--profile profiles/slurm" in c for c in commands)


_PLANNED: dict[str, subprocess.CompletedProcess] = {}


def planned(command: str, workdir: Path) -> subprocess.CompletedProcess:
    """A README command line run as a dry run in ``workdir``, once a test session (several tests read one)."""
    if command not in _PLANNED:
        args = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), *shlex.split(command)[1:], "-n"]
        _PLANNED[command] = subprocess.run(
            args, cwd=workdir, capture_output=True, text=True, timeout=180, env={**os.environ, "OMP_NUM_THREADS": "1"}
        )
    return _PLANNED[command]


@pytest.mark.parametrize("command", usage_commands())
def test_usage_command_plans_as_written(command, workdir):
    if "--report" in shlex.split(command):
        pytest.skip("--report renders a finished run's results; it plans nothing")
    run = planned(command, workdir)
    out = run.stdout + run.stderr
    if "config/paper/multi30k.yaml" in command:
        # real data: until the user points it at a Multi30K checkout, one line names the key to edit
        assert run.returncode != 0
        assert "config/paper/multi30k.yaml:" in out and "datasets.m30k.multi30k.root" in out, out[-2000:]
        assert len(run.stderr.strip().splitlines()) <= 5, run.stderr
        return
    assert run.returncode == 0, out[-3000:]
    assert "This was a dry-run" in out
    if "epochs: 30" in command:
        assert "'30' is not of type" not in out


def test_nested_config_values_are_typed_as_in_a_config_file():
    from polyvse.config_files import typed_overrides

    # what snakemake's --config parser hands over for training='{epochs: 30, lr: 1e-3}' and two typed top keys
    given = {
        "training": {"epochs": "30", "lr": "1e-3", "amp": "true", "name": "x", "langs": ["en", "7"], "nothing": "null"},
        "seed": 3,
        "results_dir": "out",
    }
    assert typed_overrides(given) == {
        "training": {"epochs": 30, "lr": 0.001, "amp": True, "name": "x", "langs": ["en", 7], "nothing": None},
        "seed": 3,
        "results_dir": "out",
    }
    # amp: off, on the command line: the quotes a config file needs are gone, the text was meant
    assert typed_overrides({"speech": {"training": {"amp": "off", "flag": "False", "x": "yes"}}}) == {
        "speech": {"training": {"amp": "off", "flag": False, "x": "yes"}}
    }


def test_the_scale_config_plans_the_whole_dag(workdir):
    """config/scale/m30k.yaml (the README's command for it): the synthetic data at Multi30K's sizes with the
    papers' settings."""
    (command,) = [c for c in usage_commands() if "config/scale/m30k.yaml" in c and " data" not in c]
    run = planned(command, workdir)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    for rule in (
        "dataset",
        "dictionaries",
        "augment_captions",
        "fasttext",
        "pca",
        "pretrain",
        "train",
        "evaluate",
        "table",
        "figure",
        "mlmme_table",
        "translator_curve",
        "provenance",
    ):
        assert re.search(rf"^(local)?rule {rule}:", run.stdout, re.M), f"no {rule} job planned"


def test_the_data_target_plans_every_data_stage_of_the_scale_config_and_no_training(workdir):
    """`snakemake data`: what the trainings read (the scale run in the README measures it), nothing trained."""
    args = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "data", "--configfile", "config/scale/m30k.yaml", "-n"]
    run = subprocess.run(
        args, cwd=workdir, capture_output=True, text=True, timeout=180, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    planned = set(re.findall(r"^(?:local)?rule (\w+):", run.stdout, re.M))
    stages = {"dataset", "corpus", "augment_captions", "query_translations", "mt_quality", "vocab", "fasttext"}
    assert stages | {"pca", "pretrain", "image_features", "data_stats", "data"} <= planned
    assert not planned & {"train", "evaluate", "table", "mlmme_train", "translator_train", "speech_train"}
