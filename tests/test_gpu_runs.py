"""The GPU table of docs/benchmarks.md is read from kept bench/cuda_session.sh logs (polyvse.report.gpu_runs)."""

from pathlib import Path

import pytest

from polyvse.report.gpu_runs import GpuRunError, gpu_runs_block, keep_run, step_results

DEVICE = "2026-01-02T03:04:05Z\nNVIDIA H100 80GB HBM3, 81559 MiB, 580.159.04, 345 MHz\ntorch 2.11.0+cu130 cuda 13.0 H100\n16\n"
EPOCH = (
    "smalr\tdevice=NVIDIA H100 80GB HBM3\tamp=off\toptimiser=lazy\tworkers=1\tsteps=1612\tepoch_seconds=69.1\t"
    "wall_with_checkpoint=69.8\tseconds_per_step=0.0429\tmean_loss=0.2822\tpeak_gpu_gib=1.29\n"
)


def session(out: Path, steps: dict[str, tuple[int, str]]) -> Path:
    """A session's $OUT as bench/cuda_session.sh leaves it: steps name -> (exit status, log)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "device.txt").write_text(DEVICE)
    text = DEVICE
    for name, (rc, log) in steps.items():
        (out / f"{name}.log").write_text(log)
        text += f"== {name} (03:05:00, limit 150s)\nrc={rc} {log.splitlines()[0] if log else ''}\n"
    (out / "session.txt").write_text(text + "== done 03:09:00\n")
    return out


def test_a_kept_run_gives_the_table_rows_and_says_when_a_step_ran_out_of_time(tmp_path):
    out = session(tmp_path / "out", {"smalr_epoch_bf16": (124, ""), "smalr_epoch_fp32": (0, EPOCH)})
    kept = keep_run(out, tmp_path / "runs", "2026-01-02", "abc1234")
    assert kept.name == "2026-01-02_abc1234"
    rows = step_results(kept)
    assert rows[0] == ("SMALR epoch at the scale sizes, bf16 autocast", "did not finish within the step's 150 s limit")
    assert rows[1][1] == "**69.1 s** (42.9 ms a step), peak 1.29 GiB on the GPU"
    assert "1,612 steps" in rows[1][0] and "1 loader process" in rows[1][0]
    block = gpu_runs_block(tmp_path / "runs")
    assert "| 2026-01-02 `abc1234` | NVIDIA H100 80GB HBM3, torch 2.11.0+cu130 |" in block
    assert block.count("\n") == 4


def test_a_step_without_its_result_fails_loudly(tmp_path):
    out = session(tmp_path / "out", {"smalr_epoch_fp32": (1, "Traceback ...\nRuntimeError: CUDA error\n")})
    with pytest.raises(GpuRunError, match=r"smalr_epoch_fp32.log: no result line \(exit status 1\)"):
        keep_run(out, tmp_path / "runs", "2026-01-02", "abc1234")
    (out / "smalr_epoch_fp32.log").unlink()
    with pytest.raises(GpuRunError, match="names step smalr_epoch_fp32 but smalr_epoch_fp32.log is not there"):
        step_results(out)


def test_no_kept_run_says_the_gpu_path_is_unmeasured(tmp_path):
    assert "unmeasured" in gpu_runs_block(tmp_path / "none")


def test_a_baseline_step_names_the_commit_whose_code_it_ran(tmp_path):
    steps = EPOCH.replace("steps=1612", "steps=400")
    out = session(tmp_path / "out", {"smalr_400_baseline": (0, "code ff2d429\n" + steps), "smalr_400_fp32": (0, steps)})
    rows = step_results(out)
    assert rows[0][0].endswith("1 loader process, the code of `ff2d429`")
    assert "the code of" not in rows[1][0]


def test_a_log_that_did_not_come_back_is_read_from_the_session_and_reruns_are_kept_apart(tmp_path):
    tests = "148 passed, 1 skipped, 36 warnings in 24.02s\n"
    out = session(tmp_path / "out", {"smalr_epoch_fp32": (0, EPOCH), "tests_cuda": (0, tests)})
    (out / "tests_cuda.log").unlink()  # the device machine returns 8 files
    first = keep_run(out, tmp_path / "runs", "2026-01-02", "abc1234")
    assert step_results(first)[1] == ("the families' training tests on CUDA", "148 passed, 0 failed")
    second = keep_run(out, tmp_path / "runs", "2026-01-02", "abc1234")
    assert second.name == "2026-01-02_abc1234_2" and (first / "session.txt").is_file()
    assert gpu_runs_block(tmp_path / "runs").count("| 2026-01-02 `abc1234` |") == 4


RULES_LOG = """Building DAG of jobs...
Command 'set -euo pipefail;  python3 .snakemake/scripts/tmp1.train.py' returned non-zero exit status 143.
[Fri Nov 27 02:05:12 2026]
Error in rule train_seeds:
    message: None
    jobid: 52
    output: results/m30k/models/mule_10/model.pt
    log: logs/m30k/train_seeds_mule_10.log (check log file(s) for error details)
data stages 127 s, trainings 181 s (wall, 16 cores)
rule\tjob=train m30k/embn_en\tseconds=28.8\tcpu_seconds=13.7\tdevice=cuda\tmR=57.28
rule\tjob=mlmme_train_seeds m30k/mlmme_b100\tseconds=37.6\tcpu_seconds=\tdevice=cuda\tmR=
"""


def test_the_rules_step_gives_a_row_a_training_job_and_says_which_did_not_finish(tmp_path):
    rows = step_results(session(tmp_path / "out", {"rules": (0, RULES_LOG)}))
    assert rows[0] == (
        "rule `train` m30k/embn_en through Snakemake (default config), 3 training jobs side by side on 16 cores, "
        "on cuda",
        "**28.8 s** (the default run on 2 cores, 1 thread a training: 13.7 s); test mR 57.28",
    )
    assert rows[1][1] == "**37.6 s**"  # a job the default run does not have, nor an evaluation
    assert rows[2] == (
        "rule `train_seeds` m30k/mule_10 through Snakemake (default config), 3 training jobs side by side on 16 cores",
        "did not finish: stopped by the trainings' time limit",
    )
    one_at_a_time = RULES_LOG.replace("16 cores)", "16 cores, trainings on 1)")
    rows = step_results(session(tmp_path / "out2", {"rules": (0, one_at_a_time)}))
    assert all("one training job at a time" in what for what, _ in rows)
