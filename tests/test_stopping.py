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
