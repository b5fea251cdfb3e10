"""Who holds a working directory's run lock, and whether they still live.

Snakemake locks its working directory (``.snakemake/locks/``) while it runs; a
run killed with SIGKILL cannot remove its lock, and the next run refuses to
start until someone runs ``snakemake --unlock`` by hand. Every run of this
workflow records itself (host, process id and the process's start time, so that
a reused id is not mistaken for it) in ``.snakemake/polyvse-runs/`` before
snakemake takes the lock (:func:`claim_directory`). The next run then tells a
stale lock from a held one: when no recorded run is alive the lock is cleared;
when a run on this host is alive the new run is refused with one line naming
it; a run recorded on another host (a shared file system) cannot be checked
and is left to snakemake's own lock message.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class LockOwner:
    """The process that holds a lock: ``host``, ``pid`` and its start time in clock ticks since boot."""

    host: str
    pid: int
    started: int

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}"


def process_start(pid: int) -> int | None:
    """Start time of process ``pid`` (clock ticks since boot, /proc/PID/stat field 22); None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # the command name (field 2) is in parentheses and may hold spaces: split after its closing one
    return int(stat.rsplit(")", 1)[1].split()[19])


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (any OS; a reused id counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def this_process() -> LockOwner:
    """The running process as a :class:`LockOwner`."""
    pid = os.getpid()
    return LockOwner(host=socket.gethostname(), pid=pid, started=process_start(pid) or 0)


def read_owner(path: Path) -> LockOwner | None:
    """The owner recorded in ``path``; None when there is none or the record is unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return LockOwner(host=str(data["host"]), pid=int(data["pid"]), started=int(data["started"]))
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return None


def write_owner(path: Path, owner: LockOwner) -> None:
    """Record ``owner`` in ``path`` (atomically: a reader sees the old record or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(asdict(owner)), encoding="utf-8")
    os.replace(tmp, path)


def owner_alive(owner: LockOwner | None, host: str | None = None) -> bool:
    """Whether ``owner`` may still hold its lock.

    No record (a lock from before owners were recorded, or one whose record was
    lost) counts as gone. On another host nothing can be checked: alive.
    """
    if owner is None:
        return False
    if owner.host != (host or socket.gethostname()):
        return True
    return process_start(owner.pid) == owner.started


RUNS_DIR = "polyvse-runs"
"""Directory of run records inside snakemake's ``.snakemake`` directory."""


def _record_path(snakemake_dir: Path, owner: LockOwner) -> Path:
    return snakemake_dir / RUNS_DIR / f"{owner.host}.{owner.pid}.json"


def live_runs(snakemake_dir: Path, host: str | None = None) -> list[LockOwner]:
    """The recorded runs that may still live; records of ended runs on this host are removed."""
    alive = []
    for path in sorted((Path(snakemake_dir) / RUNS_DIR).glob("*.json")):
        owner = read_owner(path)
        if owner_alive(owner, host):
            alive.append(owner)
        else:
            path.unlink(missing_ok=True)
    return alive


def claim_directory(snakemake_dir: Path, me: LockOwner | None = None) -> str | None:
    """Record ``me`` as a run of the directory whose snakemake state is ``snakemake_dir``.

    Before that, a lock left by runs that are all gone is removed. Returns one
    line for the user when something happened: the stale lock was cleared, or
    another run on this host is alive and holds the lock (snakemake then refuses
    a real run; a dry run goes on). A lock held from another host is left to
    snakemake's own message; None when there was no lock.
    """
    snakemake_dir = Path(snakemake_dir)
    me = me or this_process()
    others = [o for o in live_runs(snakemake_dir, me.host) if o != me]
    write_owner(_record_path(snakemake_dir, me), me)
    locks = snakemake_dir / "locks"
    if not any(locks.glob("*.lock")):
        return None
    local = [o for o in others if o.host == me.host]
    if local:
        return (
            f"polyvse: another run of this workflow ({local[0].describe()}) is working in "
            f"{snakemake_dir.resolve().parent}; wait for it to end or stop it"
        )
    if others:
        return None
    shutil.rmtree(locks, ignore_errors=True)
    return "polyvse: cleared the lock of an earlier run that is gone (killed); resuming"


def release_directory(snakemake_dir: Path, me: LockOwner | None = None) -> None:
    """Remove ``me``'s run record (at the end of a run; a killed run's record is pruned later)."""
    _record_path(Path(snakemake_dir), me or this_process()).unlink(missing_ok=True)
