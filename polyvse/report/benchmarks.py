"""Where a run's time and memory went: the rules' Snakemake benchmark files, gathered.

Every rule that does work writes ``benchmarks/{rule}/{wildcards...}.tsv`` (Snakemake's
``benchmark:`` directive: wall seconds, peak RSS in MB, CPU seconds of the job's
processes). :func:`gather_benchmarks` reads them into one table, one row a job;
:func:`benchmark_summary` sums them per rule, the table docs/benchmarks.md shows. Timings are
measurements of one machine on one day, not results: the provenance record does not
hash them (:data:`polyvse.report.provenance.SKIPPED_FILES`).

A job's start-up (interpreter, Snakemake's script preamble, imports: what it pays before its
work) is in its log, written by :func:`polyvse.logs.job_log`; :func:`startup_by_rule` sums it
per rule, so the summary says how much of a rule's time is start-up. The log's last line holds the
job's CPU time and its main process's peak memory as the job measured them (:func:`cpu_by_rule`,
:func:`peak_rss_by_rule`): Snakemake's ``cpu_time`` and ``max_rss`` are samples of the job's
processes, taken every 30 s after the first 30, and miss what a job used after its last one. The
summary takes the jobs' CPU time, and the larger of the two peaks.

:func:`cpu_by_family` sums the same CPU time by what a job is for: each model family's trainings, the
latent pretrainings, the data and features, the evaluations and reports (:func:`job_family`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from polyvse.errors import InputError

JOB_COLUMNS = ["rule", "job", "seconds", "max_rss_mb", "cpu_seconds"]
SUMMARY_COLUMNS = [
    "rule",
    "jobs",
    "seconds",
    "share",
    "median_seconds",
    "max_seconds",
    "max_rss_mb",
    "cpu_seconds",
    "startup_seconds",
]
FAMILY_COLUMNS = ["family", "jobs", "cpu_seconds", "seconds", "cpu_share"]
# the rules that train a family: the word rules' family is their variant's (config variants.<name>.model)
TRAINING_RULES: dict[str, str | None] = {
    "train": None,
    "train_seeds": None,
    "speech_train": "speech",
    "speech_train_seeds": "speech",
    "joint_train": "joint",
    "joint_train_seeds": "joint",
    "mlmme_train": "mlmme",
    "mlmme_train_seeds": "mlmme",
    "translator_align": "translator",
    "translator_source": "translator",
    "translator_train": "translator",
    "pretrain": "latent pretraining",
}
DATA_RULES = frozenset(
    {
        "dataset",
        "dictionaries",
        "references",
        "data_stats",
        "image_features",
        "utterances",
        "logmel",
        "corpus",
        "vocab",
        "fasttext",
        "pca",
        "augment_captions",
        "query_translations",
        "mt_quality",
    }
)
# Snakemake's benchmark file columns we read (s: wall seconds; max_rss: MB; cpu_time: seconds)
_SNAKEMAKE = {"s": "seconds", "max_rss": "max_rss_mb", "cpu_time": "cpu_seconds"}


def read_benchmark(path: Path) -> dict[str, float]:
    """The wall seconds, peak RSS (MB) and CPU seconds of one benchmark file (its last repeat).

    Snakemake writes ``-`` for a memory figure it could not sample (a job shorter than its
    polling interval): read as 0."""
    try:
        table = pd.read_csv(path, sep="\t")
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise InputError(str(path), f"unreadable benchmark file: {err}") from None
    missing = [c for c in _SNAKEMAKE if c not in table.columns]
    if missing or table.empty:
        raise InputError(str(path), f"not a Snakemake benchmark file (lacks {missing or 'rows'})")
    last = table.iloc[-1]
    return {
        name: float(pd.to_numeric(last[col], errors="coerce") if last[col] != "-" else 0.0)
        for col, name in _SNAKEMAKE.items()
    }


def gather_benchmarks(root: Path) -> pd.DataFrame:
    """One row per ``root/{rule}/**/*.tsv``: :data:`JOB_COLUMNS`, ``job`` the path below the rule
    without ``.tsv`` (its wildcards), sorted by rule and job."""
    rows = []
    for path in sorted(Path(root).rglob("*.tsv")):
        rel = path.relative_to(root)
        if len(rel.parts) < 2:
            raise InputError(str(path), "a benchmark file must lie in a folder named after its rule")
        rows.append({"rule": rel.parts[0], "job": str(Path(*rel.parts[1:]).with_suffix("")), **read_benchmark(path)})
    return pd.DataFrame(rows, columns=JOB_COLUMNS)


# job_log's first line: "HH:MM:SS INFO polyvse.{name}: start-up 1.23 s"; {name} is the rule's name
_STARTUP = re.compile(r" INFO polyvse\.(\w+): start-up (\d+(?:\.\d+)?) s$")
# and its last: "HH:MM:SS INFO polyvse.{name}: done in 8.0 s, CPU 7.9 s, peak memory 512 MB" (older logs say
# "peak RSS": getrusage's, which Linux carries across exec; not read)
_CPU = re.compile(r" INFO polyvse\.(\w+): done in \d+(?:\.\d+)? s, CPU (\d+(?:\.\d+)?) s, peak (?:RSS|memory) \d+ MB$")
_RSS = re.compile(r" INFO polyvse\.(\w+): done in \d+(?:\.\d+)? s, CPU \d+(?:\.\d+)? s, peak memory (\d+) MB$")


def _last_match(log: Path, pattern: re.Pattern) -> re.Match | None:
    """The match of ``pattern`` in the last line of ``log`` that it matches: a job that was re-run
    appends to its log, and its last run counts."""
    last = None
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        match = pattern.search(line)
        if match:
            last = match
    return last


def _by_rule(
    log_root: Path, pattern: re.Pattern, name: str, combine: Callable[[list[float]], float] = sum
) -> pd.Series:
    """Per rule, the ``combine`` (sum, max) over the job logs under ``log_root`` of each log's last
    line that ``pattern`` matches (groups: rule, number): a job that was re-run appends to its log,
    and its last run counts. Logs without such a line (scripts that do not log through job_log)
    count nothing."""
    values: dict[str, list[float]] = {}
    for path in sorted(Path(log_root).rglob("*.log")):
        last = _last_match(path, pattern)
        if last is not None:
            values.setdefault(last.group(1), []).append(float(last.group(2)))
    return pd.Series({rule: combine(v) for rule, v in values.items()}, name=name, dtype=float)


def startup_by_rule(log_root: Path) -> pd.Series:
    """Seconds of start-up per rule, summed over the job logs under ``log_root``."""
    return _by_rule(log_root, _STARTUP, "startup_seconds")


def cpu_by_rule(log_root: Path) -> pd.Series:
    """CPU seconds per rule as the jobs measured them (:func:`polyvse.logs.cpu_seconds`), summed
    over the job logs under ``log_root``."""
    return _by_rule(log_root, _CPU, "cpu_seconds")


def peak_rss_by_rule(log_root: Path) -> pd.Series:
    """The largest peak RSS (MB) of any job of a rule, as the jobs measured it
    (:func:`polyvse.logs.peak_rss_mb`)."""
    return _by_rule(log_root, _RSS, "max_rss_mb", combine=max)


def benchmark_summary(
    jobs: pd.DataFrame,
    startup: pd.Series | None = None,
    cpu: pd.Series | None = None,
    peak_rss: pd.Series | None = None,
) -> pd.DataFrame:
    """Per rule, most time first: jobs, total wall seconds and its share of all jobs' (percent),
    median and longest job, peak RSS (MB) of any job, total CPU seconds, and the start-up seconds
    of its jobs (``startup``, from :func:`startup_by_rule`; 0 where a rule's logs have none).

    The CPU seconds are the jobs' own measure where their logs hold it (``cpu``, from
    :func:`cpu_by_rule`), else the sum of Snakemake's samples in ``jobs`` (which miss what a job used
    after its last sample). The peak RSS is the larger of Snakemake's samples (the sum over a job's
    processes, every 30 s) and the jobs' own high-water marks (``peak_rss``, from
    :func:`peak_rss_by_rule`: the main process's, between the samples)."""
    if jobs.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    g = jobs.groupby("rule")
    out = pd.DataFrame(
        {
            "jobs": g.size(),
            "seconds": g["seconds"].sum(),
            "median_seconds": g["seconds"].median(),
            "max_seconds": g["seconds"].max(),
            "max_rss_mb": g["max_rss_mb"].max(),
            "cpu_seconds": g["cpu_seconds"].sum(),
        }
    ).reset_index()
    out["share"] = 100.0 * out["seconds"] / max(float(out["seconds"].sum()), 1e-9)
    known = startup if startup is not None else pd.Series(dtype=float)
    out["startup_seconds"] = out["rule"].map(known).fillna(0.0)
    if cpu is not None:
        out["cpu_seconds"] = out["rule"].map(cpu).fillna(out["cpu_seconds"])
    if peak_rss is not None:  # a process's own peak, Snakemake's the sum over the job's processes
        out["max_rss_mb"] = np.maximum(out["max_rss_mb"], out["rule"].map(peak_rss).fillna(0.0))
    out = out.sort_values(["seconds", "rule"], ascending=[False, True]).reset_index(drop=True)
    return out[SUMMARY_COLUMNS].round(
        {
            "seconds": 1,
            "share": 1,
            "median_seconds": 1,
            "max_seconds": 1,
            "max_rss_mb": 0,
            "cpu_seconds": 1,
            "startup_seconds": 1,
        }
    )


FORMER_VARIANTS = "variants no longer in the config"
"""The family of a training job whose benchmark file outlived its variant (renamed or removed from the
config since it ran): its time was spent and is counted, under this name, not dropped and not fatal."""


def job_family(rule: str, job: str, variant_families: Mapping[str, str]) -> str:
    """What a job's time is for: its family's name where the job trains one (a word rule's job is
    ``{dataset}/{variant}``, its family ``variant_families[variant]``), :data:`FORMER_VARIANTS` where
    that variant is no longer in the config, ``latent pretraining``, ``data and features``
    (:data:`DATA_RULES`), else ``evaluation and reports``."""
    if rule in TRAINING_RULES:
        family = TRAINING_RULES[rule]
        if family is not None:
            return family
        return variant_families.get(job.rsplit("/", 1)[-1], FORMER_VARIANTS)
    return "data and features" if rule in DATA_RULES else "evaluation and reports"


def job_log_paths(log_root: Path, rule: str, job: str) -> tuple[Path, ...]:
    """Where the log of the job whose benchmark is ``benchmarks/{rule}/{job}.tsv`` lies, most likely
    first: the rules write ``logs/{dataset}/{rule}_{rest}.log`` for a job ``{dataset}/{rest}`` (its
    further folders joined by ``_``); a job of one part is its dataset (``logs/{dataset}/{rule}.log``)
    or a report (``logs/{rule}_{job}.log``)."""
    root = Path(log_root)
    first, _, rest = job.partition("/")
    if rest:
        return (root / first / f"{rule}_{rest.replace('/', '_')}.log",)
    return root / first / f"{rule}.log", root / f"{rule}_{job}.log", root / f"{job}.log"


def job_cpu_seconds(logs: tuple[Path, ...]) -> float | None:
    """The CPU seconds that the first of ``logs`` to exist records in its last line
    (:func:`polyvse.logs.job_log`; a job run again appends to its log), None without one."""
    for log in logs:
        if log.is_file():
            last = _last_match(log, _CPU)
            return float(last.group(2)) if last else None
    return None


def cpu_by_family(
    jobs: pd.DataFrame, variant_families: Mapping[str, str], log_root: Path | None = None
) -> pd.DataFrame:
    """Per family (:func:`job_family`), most CPU first: jobs, CPU seconds, wall seconds and the share
    of all jobs' CPU (percent). A job's CPU seconds are its log's own measure where ``log_root`` holds
    its log (:func:`job_log_paths`), else Snakemake's samples in ``jobs``."""
    if jobs.empty:
        return pd.DataFrame(columns=FAMILY_COLUMNS)
    table = jobs.copy()
    table["family"] = [job_family(r, j, variant_families) for r, j in zip(table["rule"], table["job"])]
    if log_root is not None:
        own = [job_cpu_seconds(job_log_paths(log_root, r, j)) for r, j in zip(table["rule"], table["job"])]
        table["cpu_seconds"] = [s if o is None else o for s, o in zip(table["cpu_seconds"], own)]
    g = table.groupby("family")
    out = pd.DataFrame(
        {"jobs": g.size(), "cpu_seconds": g["cpu_seconds"].sum(), "seconds": g["seconds"].sum()}
    ).reset_index()
    out["cpu_share"] = 100.0 * out["cpu_seconds"] / max(float(out["cpu_seconds"].sum()), 1e-9)
    out = out.sort_values(["cpu_seconds", "family"], ascending=[False, True]).reset_index(drop=True)
    return out[FAMILY_COLUMNS].round({"cpu_seconds": 1, "seconds": 1, "cpu_share": 1})
