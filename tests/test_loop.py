"""The shared epoch loop (polyvse.train.loop.run_epochs): best-epoch keeping, checkpoints, resumption."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from polyvse.io import _writer_tag, load_torch
from polyvse.train.loop import LAST_CHECKPOINT, run_epochs


def fit(
    tmp_path,
    epochs: int,
    scores: list[float],
    patience: int | None = None,
    patience_from: int = 0,
    ceiling_reason: str = "ceiling",
    checkpoint_seconds: float = 0.0,
):
    """A linear model on a fixed regression; the validation score of epoch e is scores[e - 1]."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    seen: list[int] = []

    def validate(m: torch.nn.Module) -> float:
        seen.append(1)
        return scores[len(seen) - 1]

    def batches(rng: np.random.Generator):
        for _ in range(3):
            yield int(rng.integers(8))

    def step(i: int) -> dict[str, torch.Tensor]:
        return {"loss": ((model(x[i : i + 1]) - y[i : i + 1]) ** 2).mean()}

    result = run_epochs(
        model,
        optimiser,
        batches,
        3,
        step,
        validate,
        epochs=epochs,
        seed=0,
        checkpoint_dir=tmp_path,
        run_id="r",
        device=torch.device("cpu"),
        progress=False,
        patience=patience,
        patience_from=patience_from,
        ceiling_reason=ceiling_reason,
        checkpoint_seconds=checkpoint_seconds,
    )
    return model, result


def test_the_best_state_is_the_best_epochs_and_a_current_best_is_stored_once(tmp_path):
    model, result = fit(tmp_path / "a", 3, [1.0, 3.0, 2.0])
    assert result.best_epoch == 2
    ckpt = load_torch(tmp_path / "a" / LAST_CHECKPOINT)
    assert ckpt["best"]["epoch"] == 2
    assert not torch.equal(ckpt["best"]["state"]["weight"], ckpt["model"]["weight"])  # epoch 3 moved on
    # an improving last epoch: the best state is the model's, written once in the file
    model, result = fit(tmp_path / "b", 3, [1.0, 2.0, 3.0])
    ckpt = load_torch(tmp_path / "b" / LAST_CHECKPOINT)
    assert ckpt["best"]["epoch"] == 3
    best, last = ckpt["best"]["state"]["weight"], ckpt["model"]["weight"]
    assert (
        torch.equal(best, model.weight.detach())
        and best.untyped_storage().data_ptr() == last.untyped_storage().data_ptr()
    )


def test_a_resumed_run_ends_where_an_uninterrupted_one_does(tmp_path):
    whole, _ = fit(tmp_path / "whole", 3, [1.0, 2.0, 3.0])
    fit(tmp_path / "cut", 2, [1.0, 2.0, 3.0])  # killed after epoch 2, in effect
    resumed, result = fit(tmp_path / "cut", 3, [3.0])  # validates epoch 3 only
    assert result.resumed_from == 2 and result.best_epoch == 3
    assert torch.equal(resumed.weight, whole.weight) and torch.equal(resumed.bias, whole.bias)


def test_checkpoints_at_an_interval_hold_the_first_and_last_epochs_and_resume_the_same(tmp_path):
    whole, _ = fit(tmp_path / "whole", 4, [1.0, 3.0, 2.0, 4.0])
    # an interval no epoch reaches: the first epoch and the loop's last are written, none between
    fit(tmp_path / "cut", 3, [1.0, 3.0, 2.0], checkpoint_seconds=1e9)  # its last is epoch 3
    assert load_torch(tmp_path / "cut" / LAST_CHECKPOINT)["epoch"] == 3
    killed = tmp_path / "killed"
    with pytest.raises(IndexError):  # validation fails in epoch 3, as a kill would stop it
        fit(killed, 4, [1.0, 3.0], checkpoint_seconds=1e9)
    ckpt = load_torch(killed / LAST_CHECKPOINT)
    assert ckpt["epoch"] == 1 and len(pd.read_csv(killed / "epochs.tsv", sep="\t")) == 1
    # resumed after epoch 1: epochs 2-4 again, the best (epoch 4) and the weights as uninterrupted
    resumed, result = fit(killed, 4, [3.0, 2.0, 4.0], checkpoint_seconds=1e9)
    assert result.resumed_from == 1 and result.best_epoch == 4
    assert torch.equal(resumed.weight, whole.weight) and torch.equal(resumed.bias, whole.bias)
    # out of patience: the epoch the loop stops after is written too
    fit(tmp_path / "patience", 10, [1.0, 3.0, 2.0, 2.5, 9.0], patience=2, checkpoint_seconds=1e9)
    assert load_torch(tmp_path / "patience" / LAST_CHECKPOINT)["epoch"] == 4
    with pytest.raises(ValueError, match="checkpoint_seconds"):
        fit(tmp_path / "bad", 2, [1.0, 2.0], checkpoint_seconds=-1)


def test_patience_stops_a_training_whose_score_stopped_rising(tmp_path):
    # best at epoch 2, then two epochs below it: patience 2 stops after epoch 4, keeping epoch 2
    _, result = fit(tmp_path / "a", 10, [1.0, 3.0, 2.0, 2.5, 9.0], patience=2)
    assert (result.best_epoch, result.epochs_run, result.stop_reason) == (2, 4, "patience")
    assert result.summary() == {"best_epoch": 2, "epochs_run": 4, "stop_reason": "patience", "resumed_from_epoch": 0}
    # still rising at the ceiling: it ran every epoch and says so
    _, result = fit(tmp_path / "b", 3, [1.0, 2.0, 3.0], patience=2)
    assert (result.best_epoch, result.epochs_run, result.stop_reason) == (3, 3, "ceiling")
    # out of patience on the ceiling's last epoch: it converged all the same
    _, result = fit(tmp_path / "c", 4, [1.0, 3.0, 2.0, 2.0], patience=2)
    assert (result.epochs_run, result.stop_reason) == (4, "patience")
    # no patience: every epoch of the ceiling
    _, result = fit(tmp_path / "d", 4, [1.0, 3.0, 2.0, 2.0])
    assert (result.epochs_run, result.stop_reason) == (4, "ceiling")


def test_a_run_killed_after_its_patience_ran_out_stops_at_once_when_resumed(tmp_path):
    fit(tmp_path, 4, [1.0, 3.0, 2.0, 2.0], patience=2)  # stopped by patience after epoch 4
    # killed between last.pt and its epochs.tsv: the log one epoch behind, a temporary beside it
    log = tmp_path / "epochs.tsv"
    pd.read_csv(log, sep="\t").head(3).to_csv(log, sep="\t", index=False)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    debris = tmp_path / f".epochs.tsv.{_writer_tag().rsplit('-', 1)[0]}-{int(dead.stdout)}.abc.tsv"
    debris.write_text("epoch\n")
    _, result = fit(tmp_path, 10, [], patience=2)  # a larger ceiling: no epoch is run, none validated
    assert (result.best_epoch, result.epochs_run, result.stop_reason, result.resumed_from) == (2, 4, "patience", 4)
    assert list(pd.read_csv(log, sep="\t")["epoch"]) == [1, 2, 3, 4] and not debris.exists()


def test_patience_counts_from_the_end_of_the_warm_up(tmp_path):
    """A liwe_s_10 seed's curve: the warm-up's last epoch (3) scores above the papers' objective's first
    epochs, which then keep rising. Counted from epoch 3, patience 4 stopped it at epoch 7 while it rose;
    counted after the warm-up it runs on, and keeps the best epoch of all."""
    curve = [13.7, 35.0, 49.5, 36.8, 42.0, 47.7, 47.7, 48.9, 50.1, 49.0, 49.5, 49.8, 49.9]
    _, early = fit(tmp_path / "a", 20, curve, patience=4)
    assert (early.best_epoch, early.epochs_run) == (3, 7)
    _, after = fit(tmp_path / "b", 20, curve, patience=4, patience_from=3)
    assert (after.best_epoch, after.epochs_run, after.stop_reason) == (9, 13, "patience")
    # the warm-up's epoch stays the kept one when nothing after it beats it; patience runs from its end
    _, kept = fit(tmp_path / "c", 20, [1.0, 5.0, 2.0, 3.0, 2.5, 2.0, 2.0], patience=3, patience_from=2)
    assert (kept.best_epoch, kept.epochs_run, kept.stop_reason) == (2, 7, "patience")
    # a warm-up as long as the ceiling: no patience stop inside it
    _, warm = fit(tmp_path / "d", 3, [3.0, 2.0, 1.0], patience=1, patience_from=3)
    assert (warm.epochs_run, warm.stop_reason) == (3, "ceiling")


def test_a_schedule_run_to_its_end_says_so_and_patience_still_stops_it_first(tmp_path):
    _, result = fit(tmp_path / "a", 3, [1.0, 2.0, 3.0], patience=2, ceiling_reason="schedule")
    assert (result.epochs_run, result.stop_reason) == (3, "schedule")
    _, result = fit(tmp_path / "b", 5, [3.0, 1.0, 1.0, 1.0, 1.0], patience=2, ceiling_reason="schedule")
    assert (result.epochs_run, result.stop_reason) == (3, "patience")
    with pytest.raises(ValueError, match="ceiling_reason"):
        fit(tmp_path / "c", 1, [1.0], ceiling_reason="tired")
