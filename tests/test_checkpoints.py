"""A training resumes only from a checkpoint of the same input files (polyvse.train.checkpoints)."""

import os
from pathlib import Path

from polyvse.train.checkpoints import claim_for_inputs


def _inputs(tmp_path: Path) -> list[Path]:
    files = [tmp_path / "vectors.npy", tmp_path / "captions.parquet"]
    for f in files:
        f.write_bytes(b"data of " + f.name.encode())
    return files


def test_the_same_inputs_keep_the_checkpoint_and_a_remade_input_drops_it(tmp_path):
    inputs, ckpt = _inputs(tmp_path), tmp_path / "checkpoint"
    assert claim_for_inputs(ckpt, inputs) is False  # nothing there yet: the record is written
    (ckpt / "last.pt").write_bytes(b"epoch 1")
    assert claim_for_inputs(ckpt, inputs) is False  # a killed run started again: it resumes
    assert (ckpt / "last.pt").exists()
    # an input made again (the same size, a new file): the checkpoint was trained on the old one
    os.utime(inputs[0], ns=(inputs[0].stat().st_atime_ns, inputs[0].stat().st_mtime_ns + 10**9))
    assert claim_for_inputs(ckpt, inputs) is True
    assert not (ckpt / "last.pt").exists()
    (ckpt / "last.pt").write_bytes(b"epoch 1 on the new vectors")
    assert claim_for_inputs(ckpt, inputs) is False and (ckpt / "last.pt").exists()


def test_a_checkpoint_without_a_record_of_its_inputs_is_not_resumed(tmp_path):
    inputs, ckpt = _inputs(tmp_path), tmp_path / "checkpoint"
    ckpt.mkdir()
    (ckpt / "last.pt").write_bytes(b"from an earlier version")
    assert claim_for_inputs(ckpt, inputs) is True and not (ckpt / "last.pt").exists()
