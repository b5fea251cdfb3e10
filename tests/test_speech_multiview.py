"""Multiview frameworks (thesis §2.3, §4.1) and the §3.1.2 optimiser schedule."""

from __future__ import annotations

import pytest
import torch

from polyvse.losses.margin_softmax import InfoNCELoss
from polyvse.losses.multiview import (
    FRAMEWORKS,
    anchor,
    average_all_anchor,
    average_others_anchor,
    full_graph,
    multiview_loss,
)
from polyvse.train.speech_schedule import WarmupStepDecay, make_adam, speech_lr_scheduler, warmup_step_decay_scheduler

# four views whose rows are all the constant k: a squared-difference "loss" of
# views a and b is then (a - b)², easy to sum by hand
VIEWS = [torch.full((2, 3), float(k)) for k in range(4)]


def sq(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return ((a - b) ** 2).mean()


def test_full_graph_is_mean_over_distinct_pairs():
    # pairs (0,1) 1, (0,2) 4, (0,3) 9, (1,2) 1, (1,3) 4, (2,3) 1
    assert full_graph(VIEWS, sq).item() == pytest.approx(20 / 6)


def test_anchor_uses_only_pairs_with_the_anchor():
    assert anchor(VIEWS, sq).item() == pytest.approx((1 + 4 + 9) / 3)
    assert anchor(VIEWS, sq, anchor_index=3).item() == pytest.approx((9 + 4 + 1) / 3)
    with pytest.raises(ValueError):
        anchor(VIEWS, sq, anchor_index=4)


def test_average_all_anchor_contrasts_with_the_centroid():
    # centroid 1.5: (1.5² + .5² + .5² + 1.5²) / 4
    assert average_all_anchor(VIEWS, sq).item() == pytest.approx(5 / 4)


def test_average_others_anchor_leaves_the_view_out():
    # k=0 vs mean(1,2,3)=2: 4; k=1 vs 5/3: 4/9; k=2 vs 4/3: 4/9; k=3 vs 1: 4
    assert average_others_anchor(VIEWS, sq).item() == pytest.approx((8 + 8 / 9) / 4)


def test_dispatch_and_calls_per_framework():
    calls: list[tuple[float, float]] = []

    def recording(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        calls.append((a[0, 0].item(), b[0, 0].item()))
        return sq(a, b)

    assert set(FRAMEWORKS) == {"full_graph", "image_anchor", "average_all", "average_others"}
    multiview_loss("full_graph", VIEWS, recording)
    assert len(calls) == 6
    calls.clear()
    multiview_loss("image_anchor", VIEWS, recording)
    assert calls == [(0.0, 1.0), (0.0, 2.0), (0.0, 3.0)]
    with pytest.raises(ValueError, match="unknown multiview framework"):
        multiview_loss("star", VIEWS, recording)
    with pytest.raises(ValueError):
        full_graph([VIEWS[0], torch.zeros(3, 3)], sq)


def test_frameworks_backpropagate_into_every_view():
    g = torch.Generator().manual_seed(0)
    views = [torch.randn(4, 5, generator=g, requires_grad=True) for _ in range(4)]
    for name in FRAMEWORKS:
        for v in views:
            v.grad = None
        multiview_loss(name, views, InfoNCELoss()).backward()
        assert all(v.grad is not None and v.grad.abs().sum() > 0 for v in views), name


def test_warmup_then_step_decay():
    f = WarmupStepDecay(total_steps=1000)  # warm-up: 100 steps
    assert f.warmup_steps == 100
    assert f(0) == pytest.approx(0.01)
    assert f(49) == pytest.approx(0.5)
    assert f(99) == pytest.approx(1.0)
    assert f(149) == pytest.approx(1.0)
    assert f(150) == pytest.approx(0.99)
    assert f(250) == pytest.approx(0.99**3)


def test_scheduler_drives_adam_learning_rate():
    w = torch.nn.Parameter(torch.zeros(2))
    opt = make_adam([w])
    assert opt.defaults["betas"] == (0.9, 0.999) and opt.defaults["lr"] == 1e-3
    sched = warmup_step_decay_scheduler(opt, total_steps=20)  # warm-up 2 steps, then ×.99 every 50
    lrs = []
    for _ in range(4):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs == pytest.approx([5e-4, 1e-3, 1e-3, 1e-3])
    state = sched.state_dict()
    assert state["last_epoch"] == 4


def test_the_cosine_schedule_keeps_the_warm_up_and_ends_at_zero():
    w = torch.nn.Parameter(torch.zeros(2))
    opt = make_adam([w], lr=1e-2)
    sched = speech_lr_scheduler(opt, "cosine", total_steps=20, warmup_fraction=0.1)  # warm-up 2 steps
    lrs = []
    for _ in range(20):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[:3] == pytest.approx([5e-3, 1e-2, 1e-2])
    assert lrs[11] == pytest.approx(5e-3, rel=0.2) and all(a > b for a, b in zip(lrs[2:], lrs[3:]))
    assert opt.param_groups[0]["lr"] == pytest.approx(0.0, abs=1e-12)  # after the last step
    step_decay = speech_lr_scheduler(make_adam([w], lr=1e-2), "step_decay", total_steps=20, warmup_fraction=0.1)
    assert step_decay.multiplier == WarmupStepDecay(20, 0.1, 0.99, 50)
    with pytest.raises(ValueError, match="lr_schedule"):
        speech_lr_scheduler(opt, "linear", total_steps=20)
