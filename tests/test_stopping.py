"""Stopping a run stops its jobs (polyvse.stopping)."""

import subprocess


def test_descendants_are_found_and_terminated():
    import os
    import time

    from polyvse.stopping import descendants, terminate_descendants

    parent = subprocess.Popen(["bash", "-c", "sleep 60 & sleep 60 & wait"])
    try:
        deadline = time.time() + 10
        while len(descendants(parent.pid)) < 2 and time.time() < deadline:
            time.sleep(0.05)
        kids = descendants(parent.pid)
        assert len(kids) == 2
        assert set(kids) <= set(descendants(os.getpid()))
        signalled = terminate_descendants(parent.pid, grace=2.0)
        assert set(signalled) == set(kids)
        assert parent.wait(timeout=10) is not None
    finally:
        parent.kill()


def test_the_scheduler_timers_left_at_the_end_are_cancelled_and_others_kept():
    """Snakemake's scheduler re-evaluates after max-jobs-per-timespan's span with a non-daemon
    threading.Timer: left running, it holds the workflow's exit for that span (a minute)."""
    import threading

    from polyvse.stopping import cancel_scheduler_timers

    def reevaluate():  # stands for the scheduler's lambda
        pass

    reevaluate.__module__ = "snakemake.scheduling.job_scheduler"
    theirs, ours = threading.Timer(60, reevaluate), threading.Timer(60, print)
    theirs.start(), ours.start()
    try:
        assert cancel_scheduler_timers() == 1
        theirs.join(timeout=5)
        assert not theirs.is_alive() and ours.is_alive()
    finally:
        ours.cancel()
