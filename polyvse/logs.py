"""Logging of one workflow job into its log file (and progress bars with it), and the record of each
invocation of the workflow (``logs/runs.tsv``)."""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from polyvse.errors import InputError
from polyvse.stopping import exit_on_sigterm


def cpu_seconds() -> float:
    """CPU seconds (user + system) this process has used since it started, its threads' and its
    waited-for children's (loader processes) included. A job's own measure: Snakemake's benchmark
    ``cpu_time`` is its last sample of the job's processes, taken every 30 s after the first 30, so
    a job loses what it used after that sample (up to 30 s; most of a 25 s job)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def peak_rss_mb() -> float:
    """The largest resident set (MB) this process has had: the kernel's high-water mark of its memory
    (``VmHWM`` in ``/proc/self/status``), where Snakemake's benchmark samples the job's processes every
    30 s. Not ``getrusage``'s ``ru_maxrss``: Linux carries it across ``exec``, so a job started by
    Snakemake (vfork, exec) reads at least what Snakemake itself held. Children's peaks are not in it:
    the benchmark summary takes the larger of this and Snakemake's samples of the job's process tree."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # no /proc: KiB on Linux, the best left


def startup_seconds() -> float:
    """Seconds since this process started.

    On Linux, the system's uptime less the process's start time since boot (``/proc``: both on the
    kernel's boot clock, to 10 ms). Not ``time.time() - psutil.Process().create_time()``: psutil
    adds the start time to the boot time of ``/proc/stat``, which is rounded down to the second,
    so every process looked up to a second older than it is, by the same amount on one boot
    (0.95 s on one machine: half of the start-up seconds a default run's logs summed)."""
    try:
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        with open(f"/proc/{os.getpid()}/stat", encoding="ascii") as f:
            # field 22, after the parenthesised command name (which may hold spaces)
            started_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        return max(0.0, uptime - started_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):  # no /proc (macOS): psutil's time, exact there
        import psutil  # a dependency of snakemake's, so of every job's environment

        return max(0.0, time.time() - psutil.Process().create_time())


@contextlib.contextmanager
def job_log(path: str | Path, name: str) -> Iterator[logging.Logger]:
    """Send logging and stderr (tqdm progress, warnings) to ``path`` for the
    duration of the block; log the job's start-up first, and last its wall time, the CPU
    time of its process (:func:`cpu_seconds`, start-up included) and its peak memory
    (:func:`peak_rss_mb`); re-raise any error after writing its message to the log.

    Bad input (:class:`~polyvse.errors.InputError`: it names the file and line or
    the key) ends the job with its one-line message on stderr and exit status 1,
    without a traceback: the traceback says where the check is, not what is wrong."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    exit_on_sigterm()  # a stopped workflow terminates its jobs: unwind, removing temporary files
    stream = open(path, "a", encoding="utf-8", buffering=1)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    old_stderr, sys.stderr = sys.stderr, stream
    # a log file is no terminal: progress bars update every 10 s, not every 0.1 s
    os.environ.setdefault("TQDM_MININTERVAL", "10")
    logger = logging.getLogger(f"polyvse.{name}")
    # what the job paid before its work: the interpreter, Snakemake's script preamble and the script's
    # imports (torch's alone is about a second); summed over a run's logs, the start-up share of its job time
    logger.info("start-up %.2f s", startup_seconds())
    t0 = time.perf_counter()
    try:
        yield logger
        wall = time.perf_counter() - t0
        logger.info("done in %.1f s, CPU %.1f s, peak memory %.0f MB", wall, cpu_seconds(), peak_rss_mb())
    except InputError as exc:
        logger.error("failed after %.1f s: %s", time.perf_counter() - t0, exc)
        print(f"polyvse: {exc}", file=old_stderr)
        raise SystemExit(1) from None
    except BaseException as exc:
        logger.error("failed after %.1f s: %s: %s", time.perf_counter() - t0, type(exc).__name__, exc)
        raise
    finally:
        sys.stderr = old_stderr
        root.removeHandler(handler)
        stream.close()


RUNS_HEADER: tuple[str, ...] = ("started", "finished", "wall_s", "commit", "host")


def record_invocation(path: str | Path, started: float, repo: str | Path, finished: bool = True) -> None:
    """Record one invocation of the workflow in ``path`` (a TSV of :data:`RUNS_HEADER`, its header written
    first): its UTC start and end, its wall seconds, the commit of ``repo`` (``-dirty`` with uncommitted
    changes, ``unknown`` outside git) and the machine. Called as the invocation starts (``finished=False``:
    a row with no end and no wall seconds) and again as it ends, which fills in that row; an invocation
    stopped before its end (a kill, a lost session) keeps its row without them, so that the record still
    counts it. A resumed run is several rows."""
    import platform
    import subprocess

    from polyvse.io import write_text

    def git(*args: str) -> str:
        out = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""

    commit = (git("rev-parse", "--short=12", "HEAD") or "unknown") + ("-dirty" if git("status", "--porcelain") else "")
    fmt = "%Y-%m-%d %H:%M:%S"
    start = time.strftime(fmt, time.gmtime(started))
    end = [time.strftime(fmt, time.gmtime()), str(round(time.time() - started))] if finished else ["", ""]
    row = "\t".join([start, *end, commit, f"{platform.machine()}, {os.cpu_count()} CPUs"])
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    lines = lines or ["\t".join(RUNS_HEADER)]
    open_row = [i for i, line in enumerate(lines) if line.split("\t")[:2] == [start, ""]]
    if finished and open_row:
        lines[open_row[-1]] = row
    else:
        lines.append(row)
    write_text("\n".join(lines) + "\n", path)
