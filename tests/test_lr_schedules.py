import math

import pytest
import torch

from polyvse.optim import adam
from polyvse.train.lr_schedules import WarmupCosine, lr_schedule


def test_warmup_cosine_rises_then_falls_to_zero() -> None:
    m = WarmupCosine(total_steps=10, warmup_steps=2)
    assert [m(0), m(1)] == [0.5, 1.0]
    assert m(2) == 1.0
    assert m(6) == pytest.approx(0.5 * (1 + math.cos(math.pi * 4 / 8)))
    assert m(10) == pytest.approx(0.0, abs=1e-12) and m(50) == pytest.approx(0.0, abs=1e-12)
    rates = [m(s) for s in range(2, 11)]
    assert all(a >= b for a, b in zip(rates, rates[1:]))


def test_warmup_cosine_refuses_a_warmup_as_long_as_the_training() -> None:
    with pytest.raises(ValueError, match="warmup_steps"):
        WarmupCosine(total_steps=4, warmup_steps=4)


def test_schedule_sets_the_rate_and_resumes_where_it_stopped() -> None:
    params = [torch.nn.Parameter(torch.zeros(3))]
    opt = adam(params, lr=0.1)
    sched = lr_schedule(opt, "cosine", epochs=3, batches_per_epoch=4, warmup_epochs=1)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.025)  # step 0 of a 4-step warm-up
    for _ in range(7):
        sched.step()
    at_seven = opt.param_groups[0]["lr"]
    state = sched.state_dict()
    again = lr_schedule(adam(params, lr=0.1), "cosine", epochs=3, batches_per_epoch=4, warmup_epochs=1)
    again.load_state_dict(state)
    assert again.optimizer.param_groups[0]["lr"] == pytest.approx(at_seven)
    assert lr_schedule(opt, "constant", 3, 4) is None
    with pytest.raises(ValueError, match="unknown schedule"):
        lr_schedule(opt, "linear", 3, 4)


def _scheduled_fit(directory, fail_at_epoch: int | None = None) -> torch.nn.Linear:
    """A linear model trained 3 epochs of 3 steps under the cosine schedule; validation raises at
    ``fail_at_epoch`` (a kill after the previous epoch's checkpoint)."""
    import numpy as np

    from polyvse.train.loop import run_epochs

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimiser = adam(list(model.parameters()), lr=0.1)
    scheduler = lr_schedule(optimiser, "cosine", epochs=3, batches_per_epoch=3, warmup_epochs=1)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    seen: list[int] = []

    def validate(m: torch.nn.Module) -> float:
        seen.append(1)
        if fail_at_epoch is not None and len(seen) == fail_at_epoch:
            raise KeyboardInterrupt
        return float(len(seen))

    def batches(rng: np.random.Generator):
        for _ in range(3):
            yield int(rng.integers(8))

    run_epochs(
        model,
        optimiser,
        batches,
        3,
        lambda i: {"loss": ((model(x[i : i + 1]) - y[i : i + 1]) ** 2).mean()},
        validate,
        epochs=3,
        seed=0,
        checkpoint_dir=directory,
        run_id="r",
        device=torch.device("cpu"),
        scheduler=scheduler,
        progress=False,
        ceiling_reason="schedule",
    )
    return model


def test_a_scheduled_training_killed_mid_schedule_resumes_to_the_same_model(tmp_path):
    whole = _scheduled_fit(tmp_path / "whole")
    with pytest.raises(KeyboardInterrupt):
        _scheduled_fit(tmp_path / "cut", fail_at_epoch=2)  # killed after epoch 1's checkpoint
    resumed = _scheduled_fit(tmp_path / "cut")
    assert torch.equal(resumed.weight, whole.weight) and torch.equal(resumed.bias, whole.bias)
