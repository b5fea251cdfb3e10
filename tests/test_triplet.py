import math

import pytest
import torch

from polyvse.losses.triplet import multimodal_triplet, neighbourhood_triplet, top_k_triplet


def unit(*angles):
    return torch.tensor([[math.cos(a), math.sin(a)] for a in angles])


def test_top_k_triplet_by_hand():
    # anchor at 0 rad; positive at 0.5 rad; negatives at 0.55 and 2.0 rad
    a = unit(0.0)
    c = unit(0.5, 0.55, 2.0)
    pos = torch.tensor([[True, False, False]])
    d = lambda x: 1 - math.cos(x)
    m = 0.05
    v1 = max(0.0, m + d(0.5) - d(0.55))
    v2 = max(0.0, m + d(0.5) - d(2.0))
    assert v1 > 0 and v2 == 0
    assert float(top_k_triplet(a, c, pos, m, top_k=2)) == pytest.approx((v1 + v2) / 2, abs=1e-6)
    assert float(top_k_triplet(a, c, pos, m, top_k=1)) == pytest.approx(v1, abs=1e-6)


def test_multimodal_weights_the_sentence_anchored_term():
    torch.manual_seed(0)
    img = torch.nn.functional.normalize(torch.randn(4, 8), dim=1)
    txt = torch.nn.functional.normalize(torch.randn(8, 8), dim=1)
    owner = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    pos = owner.unsqueeze(0) == torch.arange(4).unsqueeze(1)
    i_term = top_k_triplet(img, txt, pos, 0.05, 10)
    s_term = top_k_triplet(txt, img, pos.T, 0.05, 10)
    assert float(i_term) > 0 and float(s_term) > 0
    got = multimodal_triplet(img, txt, owner, 0.05, 10, sentence_weight=1.5)
    assert float(got) == pytest.approx(float(i_term + 1.5 * s_term), rel=1e-6)


def test_neighbourhood_excludes_self_pairs_and_is_zero_when_separated():
    # two images, two sentences each, perfectly clustered far apart: no violation
    s = unit(0.0, 0.01, math.pi, math.pi + 0.01)
    owner = torch.tensor([0, 0, 1, 1])
    assert float(neighbourhood_triplet(s, owner, 0.05, 10)) == 0.0
    # swap the clusters' membership: every constraint violated
    assert float(neighbourhood_triplet(s, torch.tensor([0, 1, 0, 1]), 0.05, 10)) > 1.0


def test_no_positive_pair_gives_zero_with_gradient():
    x = torch.randn(3, 4, requires_grad=True)
    loss = top_k_triplet(x, x, torch.zeros(3, 3, dtype=torch.bool))
    loss.backward()
    assert float(loss.detach()) == 0.0 and x.grad is not None
