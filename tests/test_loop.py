"""The shared epoch loop (polyvse.train.loop.run_epochs): best-epoch keeping, checkpoints, resumption."""

from __future__ import annotations

import numpy as np
import torch

from polyvse.io import load_torch
from polyvse.train.loop import LAST_CHECKPOINT, run_epochs


def fit(tmp_path, epochs: int, scores: list[float], patience: int | None = None):
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
    _, result = fit(tmp_path, 10, [], patience=2)  # a larger ceiling: no epoch is run, none validated
    assert (result.best_epoch, result.epochs_run, result.stop_reason, result.resumed_from) == (2, 4, "patience", 4)
