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


def test_the_last_line_says_the_jobs_cpu_time_and_peak_memory_as_it_measured_them(tmp_path):
    """A job that spins the CPU for 0.6 s and holds 200 MB says so, its start-up's CPU included; a
    job that sleeps uses next to no CPU (Snakemake's 30-second samples miss a short job's CPU), and
    its peak is its own, not the parent's it was started from (this test's process: pytest's, with
    every module of the suite loaded, and getrusage's maxrss would carry it across exec)."""
    work = (
        "import time; t = time.process_time()\n"
        "while time.process_time() - t < {spin}: pass\n"
        "held = bytearray({mb} * 2**20); held[::4096] = b'x' * len(held[::4096]); time.sleep({sleep})"
    )
    for name, spin, mb, sleep in (("busy", 0.6, 200, 0.0), ("idle", 0.0, 0, 0.6)):
        log = tmp_path / f"{name}.log"
        code = SCRIPT.format(log=str(log), error="SystemExit(0)").replace(
            "    raise SystemExit(0)",
            "\n".join("    " + line for line in work.format(spin=spin, mb=mb, sleep=sleep).split("\n")),
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        m = re.search(
            r"INFO polyvse.demo: done in ([0-9.]+) s, CPU ([0-9.]+) s, peak memory (\d+) MB$", log.read_text(), re.M
        )
        assert m, log.read_text()
        wall, cpu, rss = float(m[1]), float(m[2]), int(m[3])
        if name == "busy":
            assert cpu >= 0.6 and rss >= 200
        else:
            assert wall >= 0.6 and cpu < 0.5 and rss < 200


def test_the_run_record_gets_a_header_then_one_row_an_invocation(tmp_path):
    from polyvse.logs import RUNS_HEADER, record_invocation

    runs = tmp_path / "logs" / "runs.tsv"
    record_invocation(runs, time.time() - 65, tmp_path)  # not a git repository: its commit is unknown
    record_invocation(runs, time.time() - 5, tmp_path)
    header, first, second = runs.read_text(encoding="utf-8").splitlines()
    assert header.split("\t") == list(RUNS_HEADER)
    assert first.split("\t")[2] == "65" and first.split("\t")[3] == "unknown"
    assert second.split("\t")[2] == "5" and "CPUs" in second.split("\t")[4]


def test_an_invocation_is_recorded_as_it_starts_and_a_stopped_one_keeps_its_row(tmp_path):
    from polyvse.logs import record_invocation

    runs = tmp_path / "runs.tsv"
    killed, resumed = time.time() - 7200, time.time() - 30
    record_invocation(runs, killed, tmp_path, finished=False)  # then killed: never finished
    record_invocation(runs, resumed, tmp_path, finished=False)
    rows = [line.split("\t") for line in runs.read_text(encoding="utf-8").splitlines()[1:]]
    assert [r[1:3] for r in rows] == [["", ""], ["", ""]]
    record_invocation(runs, resumed, tmp_path)  # the resumed one ends: its own row is filled in
    first, second = (line.split("\t") for line in runs.read_text(encoding="utf-8").splitlines()[1:])
    assert first[1:3] == ["", ""] and first[0] == time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(killed))
    assert second[1] != "" and second[2] == "30"
