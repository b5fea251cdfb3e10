"""Where a run's time and memory went: the rules' Snakemake benchmark files, gathered.

Every rule that does work writes ``benchmarks/{rule}/{wildcards...}.tsv`` (Snakemake's
``benchmark:`` directive: wall seconds, peak RSS in MB, CPU seconds of the job's
processes). :func:`gather_benchmarks` reads them into one table, one row a job;
:func:`benchmark_summary` sums them per rule, the table the README shows. Timings are
measurements of one machine on one day, not results: the provenance record does not
hash them (:data:`polyvse.report.provenance.SKIPPED_FILES`).

A job's start-up (interpreter, Snakemake's script preamble, imports: what it pays before its
work) is in its log, written by :func:`polyvse.logs.job_log`; :func:`startup_by_rule` sums it
per rule, so the summary says how much of a rule's time is start-up.
"""

from __future__ import annotations

import re
from pathlib import Path

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


def startup_by_rule(log_root: Path) -> pd.Series:
    """Seconds of start-up per rule, summed over the job logs under ``log_root``: each log's last
    start-up line (a job that was re-run appends to its log). Logs without one (rules whose script
    does not log through job_log) count nothing."""
    totals: dict[str, float] = {}
    for path in sorted(Path(log_root).rglob("*.log")):
        last = None
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            match = _STARTUP.search(line)
            if match:
                last = match
        if last is not None:
            totals[last.group(1)] = totals.get(last.group(1), 0.0) + float(last.group(2))
    return pd.Series(totals, name="startup_seconds", dtype=float)


def benchmark_summary(jobs: pd.DataFrame, startup: pd.Series | None = None) -> pd.DataFrame:
    """Per rule, most time first: jobs, total wall seconds and its share of all jobs' (percent),
    median and longest job, peak RSS (MB) of any job, total CPU seconds, and the start-up seconds
    of its jobs (``startup``, from :func:`startup_by_rule`; 0 where a rule's logs have none)."""
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
