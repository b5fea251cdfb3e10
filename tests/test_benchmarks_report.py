"""The gathered benchmark table (polyvse.report.benchmarks), computed by hand."""

from __future__ import annotations

import pytest

from polyvse.errors import InputError
from polyvse.report.benchmarks import benchmark_summary, gather_benchmarks, read_benchmark

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def write(path, s, rss, cpu):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{s}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t90\t{cpu}\n")


def test_gather_and_sum_per_rule(tmp_path):
    write(tmp_path / "train" / "m30k" / "a.tsv", 10.0, 300.5, 9.0)
    write(tmp_path / "train" / "m30k" / "b.tsv", 30.0, 200.0, 28.0)
    write(tmp_path / "evaluate" / "m30k" / "a.direct.tsv", 2.0, "-", 1.5)  # too short for a memory sample
    jobs = gather_benchmarks(tmp_path)
    assert jobs[["rule", "job"]].values.tolist() == [
        ["evaluate", "m30k/a.direct"],
        ["train", "m30k/a"],
        ["train", "m30k/b"],
    ]
    assert jobs["max_rss_mb"].tolist() == [0.0, 300.5, 200.0]
    summary = benchmark_summary(jobs).set_index("rule")
    assert list(summary.index) == ["train", "evaluate"]  # most time first
    assert summary.loc[
        "train", ["jobs", "seconds", "median_seconds", "max_seconds", "max_rss_mb", "cpu_seconds"]
    ].tolist() == [2, 40.0, 20.0, 30.0, 300.0, 37.0]
    assert summary.loc["train", "share"] == pytest.approx(95.2) and summary.loc["evaluate", "share"] == pytest.approx(
        4.8
    )


def test_a_file_that_is_not_a_benchmark_is_named(tmp_path):
    bad = tmp_path / "train" / "x.tsv"
    bad.parent.mkdir()
    bad.write_text("a\tb\n1\t2\n")
    with pytest.raises(InputError, match="x.tsv.*not a Snakemake benchmark"):
        read_benchmark(bad)
    bad.unlink()
    write(tmp_path / "y.tsv", 1, 1, 1)
    with pytest.raises(InputError, match="y.tsv.*folder named after its rule"):
        gather_benchmarks(tmp_path)


def test_no_benchmarks_give_an_empty_summary(tmp_path):
    assert benchmark_summary(gather_benchmarks(tmp_path)).empty
