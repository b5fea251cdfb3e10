"""The gathered benchmark table (polyvse.report.benchmarks), computed by hand."""

from __future__ import annotations

import pytest

from polyvse.errors import InputError
from polyvse.report.benchmarks import (
    FORMER_VARIANTS,
    benchmark_summary,
    cpu_by_family,
    cpu_by_rule,
    gather_benchmarks,
    job_family,
    job_log_paths,
    peak_rss_by_rule,
    read_benchmark,
    startup_by_rule,
)

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


def test_start_up_is_summed_per_rule_from_the_job_logs(tmp_path):
    logs = tmp_path / "logs"
    (logs / "m30k").mkdir(parents=True)
    (logs / "m30k" / "train_a.log").write_text(
        "10:00:00 INFO polyvse.train: start-up 1.50 s\n10:00:09 INFO polyvse.train: done in 8.0 s\n"
        # a re-run appends to its log: its own start-up counts, not both
        "10:05:00 INFO polyvse.train: start-up 1.75 s\n10:05:03 INFO polyvse.train.loop: epoch 1: start-up 9 s\n"
    )
    (logs / "m30k" / "train_b.log").write_text("10:00:00 INFO polyvse.train: start-up 2.25 s\n")
    (logs / "m30k" / "evaluate_a.log").write_text("10:00:00 INFO polyvse.evaluate: start-up 0.50 s\n")
    (logs / "old.log").write_text("written by a script without job_log\n")
    startup = startup_by_rule(logs)
    assert startup.to_dict() == {"evaluate": 0.5, "train": 4.0}

    bench = tmp_path / "benchmarks"
    write(bench / "train" / "m30k" / "a.tsv", 10.0, 300.0, 9.0)
    write(bench / "train" / "m30k" / "b.tsv", 30.0, 200.0, 28.0)
    write(bench / "pca" / "m30k" / "en.tsv", 1.0, 100.0, 1.0)  # its logs recorded no start-up
    summary = benchmark_summary(gather_benchmarks(bench), startup).set_index("rule")
    assert summary["startup_seconds"].to_dict() == {"train": 4.0, "pca": 0.0}
    assert "startup_seconds" in benchmark_summary(gather_benchmarks(bench)).columns  # 0 without logs


def test_cpu_and_peak_memory_come_from_the_job_logs_where_they_hold_them(tmp_path):
    logs = tmp_path / "logs"
    (logs / "m30k").mkdir(parents=True)
    (logs / "m30k" / "train_a.log").write_text(
        "10:00:00 INFO polyvse.train: start-up 1.50 s\n10:00:09 INFO polyvse.train: done in 8.0 s, CPU 9.5 s, peak memory 700 MB\n"
        # a re-run appends to its log: its own figures count, not both
        "10:05:00 INFO polyvse.train: start-up 1.75 s\n10:05:09 INFO polyvse.train: done in 8.0 s, CPU 9.0 s, peak memory 650 MB\n"
    )
    (logs / "m30k" / "train_b.log").write_text(
        "10:00:09 INFO polyvse.train: done in 27.0 s, CPU 28.5 s, peak memory 40 MB\n"
    )
    # older logs: their CPU is read, their "peak RSS" (getrusage's, carried across exec) is not
    (logs / "m30k" / "evaluate_a.log").write_text(
        "10:00:09 INFO polyvse.evaluate: done in 2.0 s, CPU 2.5 s, peak RSS 900 MB\n"
    )
    (logs / "m30k" / "pca_en.log").write_text("10:00:00 INFO polyvse.pca: done in 1.0 s\n")  # an older log: no CPU
    assert cpu_by_rule(logs).to_dict() == {"evaluate": 2.5, "train": 37.5}
    assert peak_rss_by_rule(logs).to_dict() == {"train": 650.0}

    bench = tmp_path / "benchmarks"
    write(bench / "train" / "m30k" / "a.tsv", 10.0, 300.0, 9.0)  # Snakemake's samples: 1 s of b's CPU missed
    write(bench / "train" / "m30k" / "b.tsv", 30.0, 200.0, 15.0)
    write(bench / "pca" / "m30k" / "en.tsv", 1.0, 100.0, 1.0)
    summary = benchmark_summary(gather_benchmarks(bench), cpu=cpu_by_rule(logs), peak_rss=peak_rss_by_rule(logs))
    summary = summary.set_index("rule")
    assert summary["cpu_seconds"].to_dict() == {"train": 37.5, "pca": 1.0}  # pca: Snakemake's, its log has none
    # the larger of a job's own peak and Snakemake's sample of its process tree
    assert summary["max_rss_mb"].to_dict() == {"train": 650.0, "pca": 100.0}
    write(bench / "train" / "m30k" / "b.tsv", 30.0, 800.0, 15.0)
    summary = benchmark_summary(gather_benchmarks(bench), peak_rss=peak_rss_by_rule(logs)).set_index("rule")
    assert summary["max_rss_mb"].to_dict() == {"train": 800.0, "pca": 100.0}


def test_cpu_by_family_groups_each_training_with_its_variants_family(tmp_path):
    bench, logs = tmp_path / "benchmarks", tmp_path / "logs"
    write(bench / "train" / "m30k" / "mule_10.tsv", 100.0, 300.0, 80.0)
    write(bench / "train_seeds" / "m30k" / "embn_fr.tsv", 60.0, 300.0, 50.0)
    write(bench / "train" / "coco" / "coco_mule_full.tsv", 40.0, 300.0, 30.0)
    write(bench / "speech_train_seeds" / "spoken" / "infonce.tsv", 200.0, 300.0, 190.0)
    write(bench / "mlmme_train" / "m30k" / "mlmme_b25.tsv", 20.0, 300.0, 15.0)
    write(bench / "pretrain" / "m30k" / "latent.tsv", 30.0, 300.0, 29.0)
    write(bench / "fasttext" / "m30k" / "human" / "en.tsv", 10.0, 300.0, 9.0)
    write(bench / "dataset" / "m30k.tsv", 5.0, 100.0, 4.0)
    write(bench / "gallery" / "table2.tsv", 3.0, 100.0, 2.0)
    (logs / "m30k").mkdir(parents=True)
    # the job's own measure, its log's last line, where it has one (Snakemake's samples miss a job's end)
    (logs / "m30k" / "train_seeds_embn_fr.log").write_text(
        "10:00:09 INFO polyvse.train_seeds: done in 60.0 s, CPU 58.5 s, peak memory 400 MB\n"
    )
    (logs / "m30k" / "fasttext_human_en.log").write_text(
        "10:00:09 INFO polyvse.fasttext: done in 10.0 s, CPU 9.5 s, peak memory 400 MB\n"
    )
    (logs / "gallery_table2.log").write_text(
        "10:00:09 INFO polyvse.gallery: done in 3.0 s, CPU 2.5 s, peak memory 1 MB\n"
    )
    families = {"mule_10": "mule", "embn_fr": "embn", "coco_mule_full": "mule"}
    table = cpu_by_family(gather_benchmarks(bench), families, logs).set_index("family")
    assert table["cpu_seconds"].to_dict() == {
        "speech": 190.0,
        "mule": 110.0,
        "embn": 58.5,
        "latent pretraining": 29.0,
        "mlmme": 15.0,
        "data and features": 13.5,
        "evaluation and reports": 2.5,
    }
    assert table.loc["mule", "jobs"] == 2 and table.loc["mule", "seconds"] == 140.0
    assert table["cpu_share"].sum() == pytest.approx(100.0, abs=0.1)
    # without the logs, Snakemake's samples
    assert cpu_by_family(gather_benchmarks(bench), families).set_index("family").loc["embn", "cpu_seconds"] == 50.0


def test_a_training_of_a_variant_no_longer_in_the_config_is_counted_apart():
    assert job_family("train", "m30k/gone", {"mule_10": "mule"}) == FORMER_VARIANTS
    assert job_family("train", "m30k/mule_10", {"mule_10": "mule"}) == "mule"
    assert job_family("translator_train", "m30k/translator_FS_n50", {}) == "translator"


def test_a_jobs_log_is_where_its_rule_writes_it(tmp_path):
    assert job_log_paths(tmp_path, "fasttext", "m30k/human/en") == (tmp_path / "m30k" / "fasttext_human_en.log",)
    assert job_log_paths(tmp_path, "evaluate", "m30k/mule_10.direct")[0].name == "evaluate_mule_10.direct.log"
    assert job_log_paths(tmp_path, "dataset", "m30k")[0] == tmp_path / "m30k" / "dataset.log"
    assert tmp_path / "gallery_table2.log" in job_log_paths(tmp_path, "gallery", "table2")
