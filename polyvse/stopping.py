"""Stopping a run: SIGTERM or SIGINT to the workflow stops its running jobs too.

Snakemake answers SIGTERM by waiting for its running jobs to finish, so a
training job runs on for minutes after the user asked the workflow to stop, and
``kill <pid>`` of snakemake alone (SIGINT included) leaves the jobs running.
:func:`stop_jobs_on_signals` makes the workflow process terminate every process
it started (its descendants: the jobs' shells and scripts) and then stop like
after Ctrl-C. A job that receives SIGTERM leaves by :func:`exit_on_sigterm`:
its temporary files are removed as it unwinds (``polyvse.io.atomic_path``), and
the epoch checkpoints it wrote let the next run resume. When the workflow ends,
:func:`cancel_scheduler_timers` lets its process exit at once.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path


def descendants(pid: int) -> list[int]:
    """Every living process below ``pid`` (children first), read from /proc."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the command name (field 2) may hold spaces and parentheses: fields after its closing one
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children[ppid].append(int(entry.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def terminate_descendants(pid: int | None = None, grace: float = 5.0) -> list[int]:
    """SIGTERM every descendant of ``pid`` (default: this process), SIGKILL those alive after ``grace`` s.

    Returns the process ids that were signalled."""
    pid = os.getpid() if pid is None else pid
    targets = descendants(pid)
    for p in targets:
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    alive = list(targets)
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if _alive(p)]
    for p in alive:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return targets


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


def stop_jobs_on_signals(
    signals: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGINT), grace: float = 5.0
) -> None:
    """In the workflow's process: on any of ``signals``, terminate the running jobs, then raise
    KeyboardInterrupt so that the scheduler stops as after Ctrl-C (exit status non-zero, running
    jobs' outputs marked incomplete and re-run next time)."""

    def handler(signum: int, frame: object) -> None:
        print(f"polyvse: {signal.Signals(signum).name} received: stopping the running jobs", file=sys.stderr)
        terminate_descendants(grace=grace)
        raise KeyboardInterrupt

    for s in signals:
        signal.signal(s, handler)


def exit_on_sigterm() -> None:
    """In a job's process: leave on SIGTERM as on an error (exit status 143), running every
    ``finally`` on the way out, so no temporary file of a half-written output stays behind."""

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def cancel_scheduler_timers() -> int:
    """Cancel the timers Snakemake's scheduler leaves pending; return how many.

    While jobs wait, the scheduler re-evaluates after the ``max-jobs-per-timespan`` span
    (``JobScheduler._schedule_reevalutation``) with a ``threading.Timer``, which is not a daemon
    thread: the interpreter waits for it before exiting. With the profiles' 1000/1m a finished or
    failed run sat idle up to a minute before returning (every test that runs the workflow paid
    it). At the workflow's end (``onsuccess`` / ``onerror``) nothing is left to schedule.
    """
    cancelled = 0
    for thread in threading.enumerate():
        function = getattr(thread, "function", None)
        if isinstance(thread, threading.Timer) and getattr(function, "__module__", "").startswith(
            "snakemake.scheduling"
        ):
            thread.cancel()
            cancelled += 1
    return cancelled
