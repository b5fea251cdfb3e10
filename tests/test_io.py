"""Atomic writes keep the umask's permissions without touching the umask and leave
no debris after a killed writer; checkpoints hold plain data and load with
weights_only=True."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from polyvse import io
from polyvse.errors import InputError


@pytest.fixture
def umask():
    """Set the process umask for one test, then restore it."""
    saved = os.umask(0o022)
    os.umask(saved)
    yield lambda mask: os.umask(mask)
    os.umask(saved)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_outputs_get_the_permissions_the_umask_allows(tmp_path, umask, mask, mode):
    umask(mask)
    assert io.current_umask() == mask  # read from /proc/self/status: a later os.umask is seen
    io.write_text("x", tmp_path / "a.txt")
    io.write_npy(np.zeros(2), tmp_path / "b.npy")
    for name in ("a.txt", "b.npy"):
        assert (tmp_path / name).stat().st_mode & 0o777 == mode, name


def test_writing_never_changes_the_umask(tmp_path, monkeypatch, umask):
    umask(0o027)
    calls = []
    real = os.umask
    monkeypatch.setattr(os, "umask", lambda m: calls.append(m) or real(m))
    threads = [threading.Thread(target=io.write_text, args=("x", tmp_path / f"{i}.txt")) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [] and all((tmp_path / f"{i}.txt").stat().st_mode & 0o777 == 0o640 for i in range(8))


def test_without_proc_the_umask_at_import_is_used(monkeypatch):
    monkeypatch.setattr(io, "_proc_umask", lambda: None)
    assert io.current_umask() == io._IMPORT_UMASK


@dataclass
class Sizes:
    dim: int = 3


@pytest.mark.parametrize(
    "value, where",
    [
        ({"config": Sizes()}, "model.pt.config is a test_io.Sizes"),
        ({"log": [{"epoch": 1, "score": np.float64(0.5)}]}, "model.pt.log[0].score is a numpy.float64"),
        ({"vectors": np.zeros(3)}, "model.pt.vectors is a numpy.ndarray"),
        ({"root": Path("/tmp")}, "model.pt.root is a pathlib."),
        ({("a", 1): 2}, "key ('a', 1) is a tuple"),
    ],
)
def test_a_checkpoint_of_other_objects_is_refused_naming_the_key(tmp_path, value, where):
    with pytest.raises(TypeError) as caught:
        io.save_torch(value, tmp_path / "model.pt")
    assert where in str(caught.value) and not (tmp_path / "model.pt").exists()


def test_plain_data_round_trips_with_weights_only(tmp_path):
    state = torch.nn.Linear(3, 2).state_dict()
    saved = {
        "family": "embn",
        "config": {"dim": 3, "langs": ["en", "de"], "dropout": 0.1, "tied": True, "x": None},
        "state_dict": state,
        "log": [{"epoch": 1, "val_mR": 12.5}],
        "shape": (3, 2),
    }
    io.save_torch(saved, tmp_path / "model.pt")
    back = io.load_torch(tmp_path / "model.pt")
    assert back["config"] == saved["config"] and back["log"] == saved["log"] and back["shape"] == (3, 2)
    assert all(torch.equal(back["state_dict"][k], v) for k, v in state.items())


def test_the_same_object_saved_twice_gives_the_same_bytes(tmp_path):
    saved = {"family": "embn", "state_dict": torch.nn.Linear(3, 2).state_dict(), "best_epoch": 4}
    io.save_torch(saved, tmp_path / "a" / "model.pt")
    io.save_torch(saved, tmp_path / "b" / "model.pt")
    assert (tmp_path / "a" / "model.pt").read_bytes() == (tmp_path / "b" / "model.pt").read_bytes()


def test_a_pickle_of_arbitrary_objects_is_not_loaded(tmp_path):
    path = tmp_path / "old.pt"
    torch.save({"config": Sizes(), "weights": torch.zeros(2)}, path)  # a checkpoint written before plain data
    with pytest.raises(InputError) as caught:
        io.load_torch(path)
    assert caught.value.where == str(path) and "weights_only=True" in str(caught.value)
    assert isinstance(caught.value.__cause__, pickle.UnpicklingError)


def _dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_a_write_removes_what_a_killed_writer_of_the_same_path_left(tmp_path):
    out = tmp_path / "references.parquet"
    tag = io._writer_tag().rsplit("-", 1)[0]
    killed = tmp_path / f".references.parquet.{tag}-{_dead_pid()}.abc123.parquet"
    killed.write_bytes(b"half a parquet")
    live = tmp_path / f".references.parquet.{tag}-{os.getpid()}.def456.parquet"
    live.write_bytes(b"another writer, still at work")
    other_host = tmp_path / f".references.parquet.elsewhere-{_dead_pid()}.ghi789.parquet"
    other_host.write_bytes(b"a writer on another node of a shared filesystem")
    io.write_parquet(pd.DataFrame({"a": [1]}), out)
    assert not killed.exists()
    assert live.exists() and other_host.exists()
    assert pd.read_parquet(out)["a"].tolist() == [1]


def test_a_writer_killed_mid_write_leaves_nothing_after_the_next_write(tmp_path):
    out = tmp_path / "table.tsv"
    code = (
        "import os, signal, sys\n"
        "from polyvse.io import atomic_path\n"
        "with atomic_path(sys.argv[1]) as tmp:\n"
        "    tmp.write_text('partial')\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run([sys.executable, "-c", code, str(out)])
    assert killed.returncode == -signal.SIGKILL
    assert not out.exists() and len(list(tmp_path.glob(".table.tsv.*"))) == 1
    io.write_text("whole\n", out)
    assert out.read_text() == "whole\n"
    assert list(tmp_path.iterdir()) == [out]


def test_release_freed_memory_runs_after_frames_are_dropped():
    from polyvse.io import release_freed_memory

    frame = pd.DataFrame({"text": pd.array(["a caption"] * 1000, dtype="string[pyarrow]")})
    del frame
    release_freed_memory()  # no error, whatever the pools held


def test_a_write_that_fails_on_a_full_disk_says_so_and_leaves_nothing(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    from polyvse import io

    usage = namedtuple("usage", "total used free")
    target = tmp_path / "model.pt"
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(10**12, 10**12 - 14 * 2**20, 14 * 2**20))
    with pytest.raises(OSError, match=r"model.pt: not written, its disk is full \(14 MB free\): .*unexpected pos"):
        with io.atomic_path(target) as tmp:
            tmp.write_bytes(b"partial")
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 14895808 vs 14895696")
    assert list(tmp_path.iterdir()) == []
    # with room on the disk, the writer's own error is the one raised
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(10**12, 0, 10**12))
    with pytest.raises(RuntimeError, match="unexpected pos"):
        with io.atomic_path(target):
            raise RuntimeError("unexpected pos")
