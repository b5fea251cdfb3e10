"""The speech-thesis losses (§2.2) against hand computations on a 3×3 similarity matrix."""

from __future__ import annotations

import math

import pytest
import torch

from polyvse.losses.hypersphere import HypersphereLoss, alignment, hypersphere_loss, uniformity, uniformity_wang
from polyvse.losses.imposter_triplet import ImposterTripletLoss, imposter_triplet_loss, random_imposter_indices
from polyvse.losses.margin_softmax import (
    AdaptiveMMSLoss,
    InfoNCELoss,
    MMSLoss,
    ScheduledMMSLoss,
    adaptive_mean_margin,
    adaptive_mms_loss,
    info_nce_loss,
    masked_margin_softmax,
    mms_loss,
    scheduled_margin,
)
from polyvse.losses.similarity import similarity_matrix
from polyvse.losses.speech_objectives import OBJECTIVES, make_objective, step_objective

# S[i, j] = S(X_i, Y_j)
S = torch.tensor([[2.0, 1.0, 0.0], [0.5, 1.0, 1.5], [0.0, 0.0, 3.0]], dtype=torch.float64)
E = math.exp


def _nll(pos: float, negs: list[float]) -> float:
    """-log(e^pos / (e^pos + Σ e^neg))."""
    return -math.log(E(pos) / (E(pos) + sum(E(n) for n in negs)))


# ----------------------------------------------------------------------------- triplet (eq. 2.7)


def test_triplet_hardest_imposters_by_hand():
    # X anchors (rows): hardest Y is the row's largest off-diagonal entry
    #   row 0: max(1, 0) = 1   -> max(0, 1 - 2 + 1)   = 0
    #   row 1: max(.5, 1.5)    -> max(0, 1.5 - 1 + 1) = 1.5
    #   row 2: max(0, 0)       -> max(0, 0 - 3 + 1)   = 0
    # Y anchors (columns): col 0: .5 -> 0; col 1: 1 -> max(0, 1 - 1 + 1) = 1; col 2: 1.5 -> 0
    got = imposter_triplet_loss(S, margin=1.0, use_random=False)
    assert got.item() == pytest.approx((1.5 + 1.0) / 3)


def test_triplet_random_imposters_by_hand():
    y_imp = torch.tensor([2, 0, 1])  # anchor X_i's imposter among Y
    x_imp = torch.tensor([2, 0, 1])  # anchor Y_i's imposter among X
    # X anchors: S02 = 0 vs S00 = 2 -> 0; S10 = .5 vs S11 = 1 -> .5; S21 = 0 vs S22 = 3 -> 0
    # Y anchors: S20 = 0 vs S00 = 2 -> 0; S01 = 1 vs S11 = 1 -> 1;  S12 = 1.5 vs S22 = 3 -> 0
    got = imposter_triplet_loss(S, 1.0, random_imposters=(y_imp, x_imp), use_hardest=False)
    assert got.item() == pytest.approx(1.5 / 3)
    both = imposter_triplet_loss(S, 1.0, random_imposters=(y_imp, x_imp))
    assert both.item() == pytest.approx((1.5 + 2.5) / 3)


def test_triplet_symmetric_and_margin_matters():
    hard = imposter_triplet_loss(S, use_random=False)
    assert imposter_triplet_loss(S.T, use_random=False).item() == pytest.approx(hard.item())
    # a larger margin makes every violation larger
    assert imposter_triplet_loss(S, margin=2.0, use_random=False).item() > hard.item()
    with pytest.raises(ValueError):
        imposter_triplet_loss(S, random_imposters=(torch.tensor([0, 2, 1]), torch.tensor([1, 2, 0])))


def test_random_imposters_never_the_anchor_and_cover_the_others():
    g = torch.Generator().manual_seed(0)
    draws = torch.stack([random_imposter_indices(4, g) for _ in range(400)])
    assert not (draws == torch.arange(4)).any()
    for i in range(4):
        assert set(draws[:, i].tolist()) == set(range(4)) - {i}


# ----------------------------------------------------------------------------- MMS family (eq. 2.8–2.9)


def _mms_by_hand(s: list[list[float]], row_margin: list[float], col_margin: list[float]) -> float:
    rows = [_nll(s[i][i] - row_margin[i], [s[i][k] for k in range(3) if k != i]) for i in range(3)]
    cols = [_nll(s[i][i] - col_margin[i], [s[k][i] for k in range(3) if k != i]) for i in range(3)]
    return sum(rows) / 3 + sum(cols) / 3


def test_infonce_by_hand():
    s = S.tolist()
    # row 0: -log(e^2 / (e^2 + e^1 + e^0)), ...; then the same over columns
    want = _mms_by_hand(s, [0, 0, 0], [0, 0, 0])
    assert info_nce_loss(S).item() == pytest.approx(want)
    # one direction only: the rows
    rows = [
        -math.log(E(2) / (E(2) + E(1) + E(0))),
        -math.log(E(1) / (E(1) + E(0.5) + E(1.5))),
        -math.log(E(3) / (E(3) + E(0) + E(0))),
    ]
    assert masked_margin_softmax(S).item() == pytest.approx(sum(rows) / 3)


def test_mms_fixed_margin_by_hand():
    s = S.tolist()
    want = _mms_by_hand(s, [1, 1, 1], [1, 1, 1])
    assert mms_loss(S, 1.0).item() == pytest.approx(want)
    assert mms_loss(S, 1.0).item() > info_nce_loss(S).item()  # a margin makes the positives harder


def test_mms_mask_drops_negatives():
    mask = torch.zeros(3, 3, dtype=torch.bool)
    mask[1, 2] = True  # Y_2 is no negative of X_1 (and X_1 none of Y_2)
    rows = [_nll(2, [1, 0]), _nll(1, [0.5]), _nll(3, [0, 0])]
    cols = [_nll(2, [0.5, 0]), _nll(1, [1, 0]), _nll(3, [0])]
    assert mms_loss(S, 0.0, mask).item() == pytest.approx(sum(rows) / 3 + sum(cols) / 3)


def test_adaptive_mean_margin_by_hand():
    # rows: .5 (2 - (1 + 0)/2) = .75; .5 (1 - (.5 + 1.5)/2) = 0; .5 (3 - 0) = 1.5
    assert adaptive_mean_margin(S).tolist() == pytest.approx([0.75, 0.0, 1.5])
    # columns: .5 (2 - (.5 + 0)/2) = .875; .5 (1 - (1 + 0)/2) = .25; .5 (3 - (0 + 1.5)/2) = 1.125
    assert adaptive_mean_margin(S.T).tolist() == pytest.approx([0.875, 0.25, 1.125])
    want = _mms_by_hand(S.tolist(), [0.75, 0.0, 1.5], [0.875, 0.25, 1.125])
    assert adaptive_mms_loss(S).item() == pytest.approx(want)
    assert adaptive_mms_loss(S, detach_margin=True).item() == pytest.approx(want)


def test_adaptive_margin_gradient_depends_on_detach():
    s1 = S.clone().requires_grad_(True)
    adaptive_mms_loss(s1).backward()
    s2 = S.clone().requires_grad_(True)
    adaptive_mms_loss(s2, detach_margin=True).backward()
    assert not torch.allclose(s1.grad, s2.grad)


def test_scheduled_margin_follows_ilharco():
    assert scheduled_margin(0) == pytest.approx(0.001)
    assert scheduled_margin(999) == pytest.approx(0.001)
    assert scheduled_margin(1000) == pytest.approx(0.001002)
    assert scheduled_margin(2500) == pytest.approx(0.001 * 1.002**2)
    assert scheduled_margin(10**7, max_margin=0.1) == pytest.approx(0.1)


def test_scheduled_loss_steps_and_resumes():
    loss = ScheduledMMSLoss(every=2)
    x = torch.eye(3, dtype=torch.float64)
    y = S
    first = loss(x, y).item()
    assert first == pytest.approx(mms_loss(S, 0.001).item())
    for _ in range(4):
        step_objective(loss)
    assert loss.margin == pytest.approx(0.001 * 1.002**2)
    resumed = ScheduledMMSLoss(every=2)
    resumed.load_state_dict(loss.state_dict())
    assert resumed.margin == pytest.approx(loss.margin)


def test_mms_modules_symmetric_on_embeddings():
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(5, 4, generator=g), torch.randn(5, 4, generator=g)
    for loss in (
        InfoNCELoss(),
        MMSLoss(1.0),
        AdaptiveMMSLoss(),
        ScheduledMMSLoss(),
        ImposterTripletLoss(use_random=False),
        HypersphereLoss(lambda_u=0.75),
    ):
        assert loss(x, y).item() == pytest.approx(loss(y, x).item(), rel=1e-5), type(loss).__name__
    assert InfoNCELoss()(x, y).item() == pytest.approx(info_nce_loss(x @ y.T).item())


# ----------------------------------------------------------------------------- hypersphere (eq. 2.10)

X3 = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]], dtype=torch.float64)
Y3 = torch.tensor([[1.0, 0.0], [0.0, -1.0], [0.0, 1.0]], dtype=torch.float64)


def test_alignment_by_hand():
    # ||x0 - y0||² = 0, ||x1 - y1||² = 4, ||x2 - y2||² = 2
    assert alignment(X3, Y3, alpha=2.0).item() == pytest.approx(2.0)
    assert alignment(X3, Y3, alpha=1.0).item() == pytest.approx((0 + 2 + math.sqrt(2)) / 3)


def test_uniformity_by_hand():
    # d²_ij = 2 - 2 x_i·y_j; K = exp(-2 d²):
    #   [[1, e^-4, e^-4], [e^-4, e^-8, 1], [e^-8, e^-4, e^-4]]
    # thesis U(X,Y) (j ≥ i): (2 + 3e^-4 + e^-8)/6; U(Y,X): (1 + 3e^-4 + 2e^-8)/6; mean of both:
    want = (3 + 6 * E(-4) + 3 * E(-8)) / 12
    assert uniformity(X3, Y3, t=2.0).item() == pytest.approx(want)
    # Wang & Isola: within-view pairs of X have d² = 2, 4, 2, and of Y 2, 2, 4
    assert uniformity_wang(X3, Y3, t=2.0).item() == pytest.approx(math.log((2 * E(-4) + E(-8)) / 3))


def test_hypersphere_loss_by_hand_and_normalised():
    want = 1.0 * 2.0 + 0.75 * (3 + 6 * E(-4) + 3 * E(-8)) / 12
    assert hypersphere_loss(X3, Y3, lambda_a=1.0, lambda_u=0.75).item() == pytest.approx(want)
    # inputs are put on the unit sphere first: scaling changes nothing
    assert hypersphere_loss(3 * X3, 0.5 * Y3, lambda_u=0.75).item() == pytest.approx(want)
    assert hypersphere_loss(Y3, X3, lambda_u=0.75).item() == pytest.approx(want)
    assert make_objective("hypersphere", lambda_u=0.75)(X3, Y3).item() == pytest.approx(want)


def test_hypersphere_gradient_finite_when_pairs_coincide():
    x = X3.clone().requires_grad_(True)
    hypersphere_loss(x, X3.clone()).backward()
    assert torch.isfinite(x.grad).all()


# ----------------------------------------------------------------------------- factory


def test_objective_factory_names():
    assert set(OBJECTIVES) == {"hypersphere", "triplet", "infonce", "mms", "mms_sched", "mms_adapt"}
    assert make_objective("mms").margin == 1.0
    assert make_objective("infonce").margin == 0.0
    with pytest.raises(ValueError, match="unknown objective"):
        make_objective("contrastive")


def test_cosine_similarity_option():
    x = torch.tensor([[3.0, 0.0], [0.0, 2.0]])
    assert similarity_matrix(x, x, "cosine").tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert similarity_matrix(x, x, "dot").tolist() == [[9.0, 0.0], [0.0, 4.0]]
    with pytest.raises(ValueError):
        similarity_matrix(x, x, "l2")
