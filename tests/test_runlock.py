"""Run-lock owners: a stale lock is told from a live one (polyvse.runlock)."""

import subprocess
import sys

from polyvse.runlock import (
    RUNS_DIR,
    LockOwner,
    claim_directory,
    owner_alive,
    process_start,
    read_owner,
    release_directory,
    this_process,
    write_owner,
)


def test_this_process_is_alive_and_round_trips(tmp_path):
    me = this_process()
    assert me.started == process_start(me.pid) and me.started > 0
    write_owner(tmp_path / "owner", me)
    assert read_owner(tmp_path / "owner") == me
    assert owner_alive(me)


def test_an_ended_process_is_gone():
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(done.stdout)
    assert process_start(pid) is None
    assert not owner_alive(LockOwner(host=this_process().host, pid=pid, started=12345))


def test_a_reused_process_id_is_not_the_owner():
    me = this_process()
    assert not owner_alive(LockOwner(host=me.host, pid=me.pid, started=me.started + 1))


def test_an_owner_on_another_host_counts_as_alive_and_no_record_as_gone(tmp_path):
    assert owner_alive(LockOwner(host="elsewhere.example", pid=1, started=1), host="here")
    assert not owner_alive(None)
    assert read_owner(tmp_path / "missing") is None
    (tmp_path / "garbage").write_text("{not json")
    assert read_owner(tmp_path / "garbage") is None
    (tmp_path / "partial").write_text('{"pid": 3}')
    assert read_owner(tmp_path / "partial") is None


def _lock(snakemake_dir):
    (snakemake_dir / "locks").mkdir(parents=True, exist_ok=True)
    (snakemake_dir / "locks" / "0.output.lock").write_text("results/table2.tsv\n")


def test_a_lock_whose_runs_are_gone_is_cleared(tmp_path):
    sm = tmp_path / ".snakemake"
    _lock(sm)
    me = this_process()
    gone = LockOwner(host=me.host, pid=me.pid, started=me.started + 1)  # a killed run whose pid was reused
    write_owner(sm / RUNS_DIR / f"{gone.host}.{gone.pid}.json", gone)
    news = claim_directory(sm, LockOwner(host=me.host, pid=1, started=process_start(1) or 0))
    assert news is not None and "cleared the lock" in news
    assert not (sm / "locks").exists()
    assert [p.name for p in (sm / RUNS_DIR).iterdir()] == [f"{me.host}.1.json"]  # the dead record pruned


def test_a_lock_held_by_a_live_run_stays_and_is_named_in_one_line(tmp_path):
    sm = tmp_path / ".snakemake"
    _lock(sm)
    live = this_process()
    write_owner(sm / RUNS_DIR / f"{live.host}.{live.pid}.json", live)
    news = claim_directory(sm, LockOwner(host=live.host, pid=1, started=process_start(1) or 0))
    assert news is not None and f"pid {live.pid} on {live.host}" in news and "\n" not in news
    assert (sm / "locks" / "0.output.lock").exists()
    release_directory(sm, live)
    assert not (sm / RUNS_DIR / f"{live.host}.{live.pid}.json").exists()


def test_a_lock_held_from_another_host_is_left_to_snakemake(tmp_path):
    sm = tmp_path / ".snakemake"
    _lock(sm)
    remote = LockOwner(host="login2.cluster.example", pid=4242, started=1)
    write_owner(sm / RUNS_DIR / f"{remote.host}.{remote.pid}.json", remote)
    assert claim_directory(sm) is None
    assert (sm / "locks" / "0.output.lock").exists()
