"""The warm-up of the hinge losses' negatives (polyvse.train.negatives)."""

import pytest
import torch

from polyvse.losses.triplet import dense_top_k_hinge, gathered_top_k_hinge, top_k_triplet
from polyvse.train.negatives import EVERY_NEGATIVE, NegativesWarmup
from polyvse.train.objectives import EmbNObjective


def test_the_warmup_keeps_every_negative_for_its_steps_then_the_papers_top_k():
    objective = EmbNObjective(top_k=10)
    warmup = NegativesWarmup(objective, steps=2)
    assert objective.top_k == EVERY_NEGATIVE
    warmup.step()
    assert objective.top_k == EVERY_NEGATIVE
    warmup.step()
    assert objective.top_k == 10 and not warmup.warming_up
    # a resumed training continues where the checkpoint left it
    again = EmbNObjective(top_k=10)
    resumed = NegativesWarmup(again, steps=3)
    resumed.load_state_dict({"steps": 1})
    assert again.top_k == EVERY_NEGATIVE
    resumed.load_state_dict({"steps": 3})
    assert again.top_k == 10
    # no warm-up: the paper's objective from the first step
    plain = EmbNObjective(top_k=10)
    NegativesWarmup(plain, steps=0)
    assert plain.top_k == 10
    with pytest.raises(ValueError, match="0 or more steps, got -1"):
        NegativesWarmup(plain, steps=-1)


def test_every_negative_is_the_mean_hinge_over_all_negatives_by_hand():
    torch.manual_seed(0)
    anchors = torch.nn.functional.normalize(torch.randn(3, 5), dim=1)
    candidates = torch.nn.functional.normalize(torch.randn(4, 5), dim=1)
    positive = torch.tensor([[True, False, False, False], [False, True, False, False], [False, False, True, True]])
    dist = 1.0 - anchors @ candidates.T
    terms = [
        max(0.0, 0.05 + float(dist[a, p]) - float(dist[a, c]))
        for a, p in positive.nonzero().tolist()
        for c in range(4)
        if not positive[a, c]
    ]
    got = top_k_triplet(anchors, candidates, positive, 0.05, EVERY_NEGATIVE)
    assert float(got) == pytest.approx(sum(terms) / len(terms), abs=1e-6)
    # the same as keeping the k = 3 most violated, which is every negative here, by a sort
    assert float(got) == pytest.approx(float(top_k_triplet(anchors, candidates, positive, 0.05, 3)), abs=1e-6)
    # the accelerators' fixed-shape form agrees
    dense = dense_top_k_hinge(dist, positive, ~positive, 0.05, EVERY_NEGATIVE)
    assert float(dense) == pytest.approx(float(gathered_top_k_hinge(dist, positive, ~positive, 0.05, EVERY_NEGATIVE)))
