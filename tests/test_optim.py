"""polyvse.optim: lazy word-table updates and the gradient clip over sparse gradients."""

import pytest
import torch
from torch import nn

import subprocess
import sys

from polyvse.optim import FusedAdam, LazyAdam, LazyTableAdam, adam, clip_gradient_norm, lazy_word_tables


class Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.words = nn.Embedding(50, 4, padding_idx=0)
        self.fc = nn.Linear(4, 1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.fc(self.words(tokens)).sum()


def step(model: Tiny, optimiser, tokens: torch.Tensor, clip: float = 0.0) -> None:
    optimiser.zero_grad(set_to_none=True)
    model(tokens).backward()
    if clip:
        clip_gradient_norm(model.parameters(), clip)
    optimiser.step()


def test_lazy_tables_update_only_the_rows_of_the_batch():
    torch.manual_seed(0)
    model = Tiny()
    tables = lazy_word_tables(model)
    assert [t is model.words.weight for t in tables] == [True] and model.words.sparse
    optimiser = adam(list(model.parameters()), lr=0.1, lazy=tables)
    assert isinstance(optimiser, LazyTableAdam)
    before = model.words.weight.detach().clone()
    fc_before = model.fc.weight.detach().clone()
    step(model, optimiser, torch.tensor([[3, 5, 5]]))
    step(model, optimiser, torch.tensor([[7, 3]]))
    changed = (model.words.weight.detach() != before).any(dim=1).nonzero().flatten().tolist()
    assert changed == [3, 5, 7]
    assert not torch.equal(model.fc.weight.detach(), fc_before)  # the dense parameters step too


def test_dense_adam_moves_rows_the_batch_did_not_use():
    """The behaviour lazy updates change (training.lazy_word_updates: false keeps it)."""
    torch.manual_seed(0)
    model = Tiny()
    optimiser = adam(list(model.parameters()), lr=0.1)
    assert isinstance(optimiser, FusedAdam)
    step(model, optimiser, torch.tensor([[3]]))
    before = model.words.weight.detach().clone()
    step(model, optimiser, torch.tensor([[7]]))
    assert not torch.equal(model.words.weight[3], before[3])  # row 3 rides its momentum


def test_clip_over_sparse_gradients_equals_torch_clip_of_the_dense_gradient():
    torch.manual_seed(0)
    tokens = torch.tensor([[3, 5, 5, 9], [9, 9, 2, 0]])
    dense, sparse = Tiny(), Tiny()
    sparse.load_state_dict(dense.state_dict())
    lazy_word_tables(sparse)
    dense(tokens).mul(50).backward()
    sparse(tokens).mul(50).backward()
    assert sparse.words.weight.grad.is_sparse
    norm_dense = nn.utils.clip_grad_norm_(dense.parameters(), 1.0)
    norm_sparse = clip_gradient_norm(sparse.parameters(), 1.0)
    assert float(norm_dense) > 1.0  # the clip acts
    torch.testing.assert_close(norm_sparse, norm_dense)
    torch.testing.assert_close(sparse.words.weight.grad.to_dense(), dense.words.weight.grad)
    torch.testing.assert_close(sparse.fc.weight.grad, dense.fc.weight.grad)


def test_state_dict_round_trip_resumes_the_same_run():
    torch.manual_seed(0)
    a = Tiny()
    b = Tiny()
    b.load_state_dict(a.state_dict())
    opt_a = adam(list(a.parameters()), lr=0.05, lazy=lazy_word_tables(a))
    opt_b = adam(list(b.parameters()), lr=0.05, lazy=lazy_word_tables(b))
    batches = [torch.tensor([[1, 2]]), torch.tensor([[2, 4]]), torch.tensor([[4, 1, 6]])]
    step(a, opt_a, batches[0], clip=0.5)
    step(b, opt_b, batches[0], clip=0.5)
    resumed = Tiny()
    resumed.load_state_dict(b.state_dict())
    opt_resumed = adam(list(resumed.parameters()), lr=0.05, lazy=lazy_word_tables(resumed))
    opt_resumed.load_state_dict(opt_b.state_dict())
    for tokens in batches[1:]:
        step(a, opt_a, tokens, clip=0.5)
        step(resumed, opt_resumed, tokens, clip=0.5)
    for (name, p), q in zip(a.named_parameters(), resumed.parameters()):
        assert torch.equal(p, q), name


def test_lazy_updates_refuse_weight_decay():
    model = Tiny()
    with pytest.raises(ValueError, match="weight decay"):
        adam(list(model.parameters()), lr=0.1, weight_decay=0.01, lazy=lazy_word_tables(model))


def twins(lazy: bool) -> tuple[Tiny, Tiny]:
    torch.manual_seed(0)
    a, b = Tiny(), Tiny()
    b.load_state_dict(a.state_dict())
    if lazy:
        lazy_word_tables(a)
        lazy_word_tables(b)
    return a, b


BATCHES = [torch.tensor([[3, 5, 5]]), torch.tensor([[7, 3, 1]]), torch.tensor([[9, 9]]), torch.tensor([[5, 2, 8, 3]])]


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_fused_adam_is_torch_fused_adam_bit_for_bit(weight_decay):
    ours, theirs = twins(lazy=False)
    opt_ours = FusedAdam(list(ours.parameters()), lr=0.05, weight_decay=weight_decay)
    opt_theirs = torch.optim.Adam(list(theirs.parameters()), lr=0.05, weight_decay=weight_decay, fused=True)
    for i, tokens in enumerate(BATCHES):
        if i == 2:  # a rate set between steps (a scheduler) is read by the next step
            for o in (opt_ours, opt_theirs):
                o.param_groups[0]["lr"] = 0.01
        step(ours, opt_ours, tokens, clip=0.5)
        step(theirs, opt_theirs, tokens, clip=0.5)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        assert torch.equal(p, q), name


def test_lazy_adam_is_torch_sparse_adam_bit_for_bit():
    ours, theirs = twins(lazy=True)
    opt_ours = LazyAdam([ours.words.weight], lr=0.05)
    opt_theirs = torch.optim.SparseAdam([theirs.words.weight], lr=0.05)
    for tokens in BATCHES:
        step(ours, opt_ours, tokens)
        step(theirs, opt_theirs, tokens)
    assert torch.equal(ours.words.weight, theirs.words.weight)
    assert not torch.equal(ours.words.weight, twins(lazy=True)[0].words.weight)  # it did step


def test_a_checkpoint_of_torch_adam_resumes_in_fused_adam():
    """The state-dict layout is torch's: a run checkpointed by torch.optim.Adam goes on here."""
    ours, theirs = twins(lazy=False)
    opt_theirs = torch.optim.Adam(list(theirs.parameters()), lr=0.05, fused=True)
    opt_ours = FusedAdam(list(ours.parameters()), lr=0.05)
    step(theirs, opt_theirs, BATCHES[0])
    ours.load_state_dict(theirs.state_dict())
    opt_ours.load_state_dict(opt_theirs.state_dict())
    for tokens in BATCHES[1:]:
        step(ours, opt_ours, tokens)
        step(theirs, opt_theirs, tokens)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        assert torch.equal(p, q), name


def test_optimisers_refuse_the_other_kind_of_gradient():
    model = Tiny()
    lazy_word_tables(model)
    model(torch.tensor([[1, 2]])).backward()
    with pytest.raises(ValueError, match="sparse word table"):
        FusedAdam([model.words.weight], lr=0.1).step()
    with pytest.raises(ValueError, match="sparse gradients"):
        LazyAdam([model.fc.weight], lr=0.1).step()
    with pytest.raises(ValueError, match="other parameter groups"):
        FusedAdam([model.fc.weight], lr=0.1).load_state_dict(FusedAdam(list(model.parameters()), lr=0.1).state_dict())


def test_training_steps_do_not_import_the_compiler():
    """torch.optim.Optimizer imports torch._dynamo on its first step (over a second of every
    training job); polyvse's optimisers and training loop do not."""
    code = (
        "import sys, torch\n"
        "from polyvse.optim import adam, lazy_word_tables, clip_gradient_norm\n"
        "from polyvse.train.speech_schedule import warmup_step_decay_scheduler\n"
        "m = torch.nn.Sequential(torch.nn.Embedding(9, 3), torch.nn.Linear(3, 1))\n"
        "o = adam(list(m.parameters()), lr=0.1, lazy=lazy_word_tables(m))\n"
        "s = warmup_step_decay_scheduler(adam(list(m[1].parameters()), lr=0.1), total_steps=4)\n"
        "o.zero_grad(); m(torch.tensor([1, 2])).sum().backward()\n"
        "clip_gradient_norm(m.parameters(), 1.0); o.step(); s.step()\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
