"""A job's log (polyvse.logs.job_log): bad input ends a job in one line, other errors keep their traceback."""

import re
import subprocess
import sys
import time

SCRIPT = """
from polyvse.errors import InputError
from polyvse.logs import job_log
with job_log({log!r}, "demo"):
    raise {error}
"""


def run_job(tmp_path, error: str) -> subprocess.CompletedProcess:
    code = SCRIPT.format(log=str(tmp_path / "job.log"), error=error)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_bad_input_ends_the_job_in_one_line_without_a_traceback(tmp_path):
    done = run_job(tmp_path, "InputError('data/captions.tsv', 'empty caption text', line=12)")
    assert done.returncode == 1
    assert done.stderr == "polyvse: data/captions.tsv:12: empty caption text\n"
    log = (tmp_path / "job.log").read_text()
    assert "ERROR polyvse.demo: failed after" in log and "data/captions.tsv:12: empty caption text" in log


def test_a_bug_keeps_its_traceback(tmp_path):
    done = run_job(tmp_path, "KeyError('model')")
    assert done.returncode == 1 and "Traceback" in done.stderr and "KeyError" in done.stderr
    assert "failed after" in (tmp_path / "job.log").read_text()


def test_the_log_says_what_the_job_paid_before_its_work(tmp_path):
    code = "import time; time.sleep(0.3)\n" + SCRIPT.format(log=str(tmp_path / "job.log"), error="SystemExit(0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    startup = float(re.search(r"INFO polyvse.demo: start-up ([0-9.]+) s", (tmp_path / "job.log").read_text())[1])
    assert 0.3 <= startup < 30  # the sleep before the job's block counts as start-up


def test_the_start_up_is_measured_to_the_hundredth_not_to_the_second(tmp_path):
    """A process that logs at once reports well under the parent's wall time for it: a start-up
    computed from the boot time rounded to the second (psutil) read up to a second too much."""
    code = "from polyvse.logs import startup_seconds; print(startup_seconds())"
    for _ in range(3):
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        elapsed = time.perf_counter() - t0
        assert done.returncode == 0, done.stderr
        assert 0.0 < float(done.stdout) <= elapsed + 0.02
