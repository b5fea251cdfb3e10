"""Batch-norm statistics recomputed with the current weights before a model is scored
(polyvse.train.batch_norm, precise BN)."""

from __future__ import annotations

import torch
from torch import nn

from polyvse.models.speech_encoders import MaskedBatchNorm1d
from polyvse.train.batch_norm import batch_norms, recalibrate_batch_norm


class Net(nn.Module):
    """Dropout before a batch norm: a recalibration that ran dropout would get other statistics."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 3)
        self.dropout = nn.Dropout(0.9)
        self.norm = nn.BatchNorm1d(3)
        self.masked = MaskedBatchNorm1d(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(self.dropout(self.linear(x)))
        return self.masked(h.unsqueeze(-1).expand(-1, -1, 5), torch.ones(x.shape[0], 5, dtype=torch.bool))


def test_recalibrated_statistics_are_those_of_the_current_weights():
    torch.manual_seed(0)
    net = Net()
    batches = [torch.randn(64, 4) * 3 + 1 for _ in range(3)]
    net.train()
    for b in batches:  # running averages of these weights...
        net(b)
    with torch.no_grad():
        net.linear.weight.mul_(5.0).add_(1.0)  # ...which then move, as a short training's do
    net.eval()
    stale = net.norm.running_mean.clone()
    assert recalibrate_batch_norm(net, batches, net) == 3
    h = torch.cat([net.linear(b) for b in batches]).detach()
    # the mean of the batches' means and (unbiased) variances, of the weights as they are
    assert torch.allclose(net.norm.running_mean, h.mean(0), atol=1e-4)
    assert torch.allclose(
        net.norm.running_var, torch.stack([net.linear(b).detach().var(0) for b in batches]).mean(0), atol=1e-3
    )
    assert not torch.allclose(stale, net.norm.running_mean, atol=1e-2)
    # no dropout ran, the modes and momenta are as they were
    assert not net.training and not any(m.training for m in net.modules())
    assert all(bn.momentum == 0.1 for bn in batch_norms(net))
    assert int(net.masked.num_batches_tracked) == 3


def test_recalibration_keeps_training_mode_and_needs_batches():
    torch.manual_seed(0)
    net = Net().train()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    assert recalibrate_batch_norm(net, [], net) == 0
    assert all(torch.equal(v, net.state_dict()[k]) for k, v in before.items())
    recalibrate_batch_norm(net, [torch.randn(8, 4)], net)
    assert all(m.training for m in net.modules())
    assert recalibrate_batch_norm(nn.Linear(2, 2), [torch.randn(3, 2)], nn.Linear(2, 2)) == 0  # no norm
