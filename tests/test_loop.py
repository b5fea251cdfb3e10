"""The shared epoch loop (polyvse.train.loop.run_epochs): best-epoch keeping, checkpoints, resumption."""

from __future__ import annotations

import numpy as np
import torch

from polyvse.io import load_torch
from polyvse.train.loop import LAST_CHECKPOINT, run_epochs


def fit(tmp_path, epochs: int, scores: list[float]):
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
