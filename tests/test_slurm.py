"""The SLURM profile on a real cluster: a local single-node SLURM (with
accounting) brought up by tests/slurm/local_cluster.sh, the tiny config
submitted through profiles/slurm, as a user submits it.

The cluster test needs root on a Debian-like machine and is opt-in, because it
installs packages and starts system daemons: it runs when POLYVSE_SLURM_TESTS=1
or CI is set (CI sets CI=true), and is skipped with the reason otherwise.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TINY = REPO / "tests" / "configs" / "tiny.yaml"
CLUSTER = REPO / "tests" / "slurm" / "local_cluster.sh"
PROFILE = REPO / "profiles" / "slurm"
TEST_PROFILE = REPO / "tests" / "slurm" / "profile"
FIXTURE = REPO / "tests" / "fixtures" / "multi30k"

# Seconds a whole snakemake run may take before it is SIGKILLed (the SLURM
# executor may ignore SIGTERM while it waits on a job that never ends).
RUN_LIMIT = 420


def load_profile(directory: Path) -> dict:
    return yaml.safe_load((directory / "config.yaml").read_text())


def test_test_profile_is_the_slurm_profile_without_the_gpu_request():
    """tests/slurm/profile is stacked on profiles/slurm (--workflow-profile);
    the dicts it restates must be profiles/slurm's, GPU request removed, so
    the cluster test runs the real profile and the two files cannot drift."""
    real, test = load_profile(PROFILE), load_profile(TEST_PROFILE)
    assert set(test) == {
        "set-resources",
        "default-resources",
        "latency-wait",
        "slurm-init-seconds-before-status-checks",
    }
    assert set(test) - {"set-resources", "default-resources"} <= set(real)  # only tightens real settings
    # set-resources: identical apart from gpu, which the real profile requests for training
    assert real["set-resources"]["train"]["gpu"] == 1
    without_gpu = {
        rule: {k: (0 if k == "gpu" else v) for k, v in res.items()} for rule, res in real["set-resources"].items()
    }
    assert test["set-resources"] == without_gpu
    # default-resources: the same resources, only shorter/smaller
    assert set(test["default-resources"]) == set(real["default-resources"])
    for key, value in test["default-resources"].items():
        assert value <= real["default-resources"][key], key
    # a real cluster user sets these; the profile must not hard-code them
    for res in [real["default-resources"], *real["set-resources"].values()]:
        assert not {"slurm_account", "slurm_partition", "cpus_per_task"} & set(res)
    assert real["executor"] == "slurm" and real["retries"] >= 1 and real["jobs"] > 1
    # The test profile takes the place of profiles/default (the workflow
    # profile a user's run picks up), so that must add nothing profiles/slurm lacks.
    default = load_profile(REPO / "profiles" / "default")
    assert {k: real.get(k) for k in default} == default


# --------------------------------------------------------------- the cluster


def cluster_env(**extra: str) -> dict[str, str]:
    """The environment of everything that talks to the local cluster: without the empty
    ``SLURM_CONF`` that tests/conftest.py gives every other test, so that SLURM's commands
    read the cluster's /etc/slurm/slurm.conf."""
    return {**{k: v for k, v in os.environ.items() if k != "SLURM_CONF"}, **extra}


def cluster(command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(CLUSTER), command], capture_output=True, text=True, timeout=600, env=cluster_env()
    )


@pytest.fixture(scope="module")
def slurm_cluster():
    """A local SLURM cluster, up once for the module, always torn down."""
    if os.environ.get("POLYVSE_SLURM_TESTS") != "1" and os.environ.get("CI", "") in ("", "0", "false"):
        pytest.skip("opt-in: set POLYVSE_SLURM_TESTS=1 (CI sets CI) to install and start a local SLURM cluster as root")
    try:
        up = cluster("up")
        if up.returncode == 2:
            reason = re.search(r"UNSUPPORTED: (.*)", up.stderr)
            pytest.skip(f"no local SLURM cluster here: {reason.group(1) if reason else up.stderr.strip()}")
        assert up.returncode == 0, f"local_cluster.sh up failed:\n{up.stderr[-3000:]}"
        yield
    finally:
        down = cluster("down")
        if down.returncode not in (0, 2):
            pytest.fail(f"local_cluster.sh down failed:\n{down.stderr[-3000:]}")


def snakemake(workdir: Path, label: str, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    """One snakemake run in ``workdir`` under ``timeout -s KILL``; returns the
    process (stdout and stderr together) and its wall time in seconds. The
    output is kept as ``workdir/snakemake-<label>.log`` for a post-mortem."""
    cmd = [
        "timeout",
        "-s",
        "KILL",
        str(RUN_LIMIT),
        SNAKEMAKE,
        "-s",
        str(REPO / "Snakefile"),
        "--configfile",
        str(workdir / "config.yaml"),
        *args,
    ]
    start = time.monotonic()
    run = subprocess.run(
        cmd,
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=cluster_env(OMP_NUM_THREADS="1"),
        timeout=RUN_LIMIT + 30,
    )
    (workdir / f"snakemake-{label}.log").write_text(run.stdout)
    return run, time.monotonic() - start


def slurm_run(workdir: Path, label: str, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    return snakemake(workdir, label, "--profile", str(PROFILE), "--workflow-profile", str(TEST_PROFILE), *args)


def slurm_jobs(output: str) -> list[tuple[str, str]]:
    """(rule, State) of every SLURM job of the run whose output is ``output``,
    from the accounting database (sacct); the executor names each job after
    the run's UUID and comments it ``rule_<rule>[_wildcards_...]``."""
    found = re.search(r"SLURM run ID: ([0-9a-f-]{36})", output)
    assert found, "no 'SLURM run ID' in the snakemake output: the run did not use the SLURM executor"
    sacct = subprocess.run(
        ["sacct", "-X", "-n", "-P", "--starttime", "now-1days", "--name", found.group(1), "-o", "JobID,Comment,State"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=cluster_env(),
    )
    jobs = []
    for line in sacct.stdout.splitlines():
        _, comment, state = line.split("|")
        rule = re.fullmatch(r"rule_(.+?)(?:_wildcards_.*)?", comment)
        assert rule, f"unexpected SLURM job comment {comment!r}"
        jobs.append((rule.group(1), state))
    return jobs


def announced(output: str) -> tuple[Counter, Counter]:
    """Jobs snakemake announced in ``output``: (cluster jobs, local jobs) per rule."""
    remote = Counter(re.findall(r"^rule (\w+):$", output, flags=re.M))
    local = Counter(re.findall(r"^localrule (\w+):$", output, flags=re.M))
    return remote, local


def fail_then_fix(workdir: Path) -> tuple[subprocess.CompletedProcess, float, subprocess.CompletedProcess]:
    """Submits a dataset job whose raw data is broken (an empty caption line in
    a copy of the Multi30K fixture), then repairs the file and submits again.
    Returns (failed run, its seconds, re-run)."""
    raw = workdir / "multi30k"
    shutil.copytree(FIXTURE, raw)
    (workdir / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "datasets": {
                    "m30k": {
                        "adapter": "multi30k",
                        "langs": ["en", "de", "fr", "cs"],
                        "multi30k": {"root": "multi30k", "images_dir": "multi30k/images"},
                    }
                }
            }
        )
    )
    broken = raw / "data" / "task1" / "raw" / "val.fr.gz"
    lines = gzip.decompress(broken.read_bytes()).decode().splitlines()
    lines[1] = ""
    broken.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    target = "results/m30k/captions.parquet"
    failed, seconds = slurm_run(workdir, "failing", target)
    shutil.copy(FIXTURE / broken.relative_to(raw), broken)
    fixed, _ = slurm_run(workdir, "fixed", target)
    return failed, seconds, fixed


def two_model_config() -> dict:
    """tests/configs/tiny.yaml cut to its two one-language models and the row they fill: every
    kind of job the text tables need (data, features, vocabulary, two trainings side by side,
    evaluation, table) in 13 SLURM submissions instead of 36, as each waits for the executor's
    status checks; the MT stages are covered locally by tests/test_workflow.py."""
    config = yaml.safe_load(TINY.read_text())
    config["variants"] = {name: config["variants"][name] for name in ("embn_en", "embn_de")}
    config["reports"]["table2"]["rows"] = [{"name": "EmbN", "per_language": {"en": "embn_en", "de": "embn_de"}}]
    return config


@pytest.mark.slurm
def test_tiny_workflow_on_slurm_matches_local_run_and_failures_are_reported(slurm_cluster, tmp_path):
    config = two_model_config()
    on_slurm, local, failing = tmp_path / "slurm", tmp_path / "local", tmp_path / "failing"
    for d in (on_slurm, local, failing):
        d.mkdir()
    for d in (on_slurm, local):
        (d / "config.yaml").write_text(yaml.safe_dump(config))

    # Side by side, as the SLURM runs mostly wait between status checks: the
    # tiny config on SLURM; the same locally; a failing job and its fix.
    with ThreadPoolExecutor(2) as pool:
        local_future = pool.submit(snakemake, local, "local", "--cores", "1")
        failure_future = pool.submit(fail_then_fix, failing)
        run, _ = slurm_run(on_slurm, "slurm")
        local_run, _ = local_future.result()
        failed, seconds, fixed = failure_future.result()

    assert run.returncode == 0, run.stdout[-4000:]
    assert local_run.returncode == 0, local_run.stdout[-4000:]
    # every job that was not a localrule went through SLURM, once, and COMPLETED
    remote, local_jobs = announced(run.stdout)
    jobs = slurm_jobs(run.stdout)
    assert Counter(rule for rule, _ in jobs) == remote
    assert all(state == "COMPLETED" for _, state in jobs), jobs
    assert remote["train"] == len(config["variants"])  # each writes its direct evaluation too
    assert "table" in local_jobs and "table" not in remote  # trivial rules stay local
    # same seed, CPU, one thread: training is deterministic, the tables identical
    assert (on_slurm / "results" / "table2.tsv").read_text() == (local / "results" / "table2.tsv").read_text()

    # The failing job is reported with its reason, after the profile's one
    # retry (`retries: 1`): both attempts FAILED in SLURM.
    assert failed.returncode != 0, failed.stdout[-4000:]
    assert "Error in rule dataset" in failed.stdout and "SLURM-job" in failed.stdout, failed.stdout[-4000:]
    assert "val.fr.gz:2: empty caption" in failed.stdout, failed.stdout[-4000:]
    assert Counter(slurm_jobs(failed.stdout)) == Counter({("dataset", "FAILED"): 2})
    # bounded: each attempt is seen at the executor's next sacct check (2, 14,
    # 36, 68 s after submission), and the exit waits out the current interval
    assert seconds < 180, f"the failure took {seconds:.0f} s to be reported"
    # repaired, the re-run completes
    assert fixed.returncode == 0, fixed.stdout[-4000:]
    assert Counter(slurm_jobs(fixed.stdout)) == Counter({("dataset", "COMPLETED"): 1})
    assert (failing / "results" / "m30k" / "captions.parquet").exists()
