"""The CPU's GRU recurrence (polyvse.models.gru_recurrence) is nn.GRU's function: values and gradients
of every parameter and input, for the final states of padded batches, read forwards and backwards,
from valid positions or from distinct rows; and the word families train through it."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from polyvse.models import gru_recurrence
from polyvse.models.embn import final_state, reversed_within_lengths
from polyvse.models.gru_recurrence import (
    GRURecurrence,
    final_states_both_ways,
    gru_final_state,
    plain_gru,
    time_major,
    valid_positions,
)
from polyvse.models.liwe import LIWE, LIWEConfig


def padded_reference(gru: nn.GRU, inputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """nn.GRU's own run over the padded batch, read at each sequence's last valid step."""
    out, _ = gru(inputs)
    return out[torch.arange(inputs.shape[0]), lengths - 1]


def grads(value: torch.Tensor, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    return list(torch.autograd.grad(value, tensors))


@pytest.fixture
def batch() -> tuple[nn.GRU, torch.Tensor, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    gru = nn.GRU(5, 4, batch_first=True).double()
    inputs = torch.randn(7, 9, 5, dtype=torch.float64, requires_grad=True)
    lengths = torch.tensor([9, 1, 4, 9, 2, 6, 3])
    weights = torch.randn(7, 4, dtype=torch.float64)  # a loss that weighs every state differently
    return gru, inputs, lengths, weights


def test_final_state_and_its_gradients_are_nn_grus(batch) -> None:
    gru, inputs, lengths, weights = batch
    tensors = [inputs, *gru.parameters()]
    expected = padded_reference(gru, inputs, lengths)
    got = gru_final_state(gru, inputs, lengths)
    assert torch.allclose(got, expected, atol=1e-12)
    for g, e in zip(grads((got * weights).sum(), tensors), grads((expected * weights).sum(), tensors)):
        assert torch.allclose(g, e, atol=1e-12)


def test_padding_after_a_sequence_gets_no_gradient_and_changes_nothing(batch) -> None:
    gru, inputs, lengths, weights = batch
    valid = valid_positions(lengths, inputs.shape[1])
    noisy = torch.where(valid.unsqueeze(-1), inputs, torch.full_like(inputs, 1e3))
    assert torch.allclose(gru_final_state(gru, noisy, lengths), gru_final_state(gru, inputs, lengths), atol=1e-12)
    (d_inputs,) = grads((gru_final_state(gru, inputs, lengths) * weights).sum(), [inputs])
    assert bool((d_inputs[~valid] == 0).all()) and bool((d_inputs[valid] != 0).any())


def test_both_ways_from_distinct_rows_are_the_two_grus_over_the_sentence_and_its_reverse(batch) -> None:
    _, _, lengths, weights = batch
    torch.manual_seed(1)
    forward, backward = nn.GRU(5, 4, batch_first=True).double(), nn.GRU(5, 4, batch_first=True).double()
    distinct = torch.randn(6, 5, dtype=torch.float64, requires_grad=True)
    valid = valid_positions(lengths, 9)
    where = torch.randint(0, 6, (int(valid.sum()),))
    padded = distinct.new_zeros(7, 9, 5).index_put((valid,), distinct[where])
    tensors = [distinct, *forward.parameters(), *backward.parameters()]
    f, b = final_states_both_ways(forward, backward, distinct, valid, where)
    ef = padded_reference(forward, padded, lengths)
    eb = padded_reference(backward, reversed_within_lengths(padded, lengths), lengths)
    assert torch.allclose(f, ef, atol=1e-12) and torch.allclose(b, eb, atol=1e-12)
    got = grads((f * weights).sum() + (b * weights.flip(0)).sum(), tensors)
    expected = grads((ef * weights).sum() + (eb * weights.flip(0)).sum(), tensors)
    for g, e in zip(got, expected):
        assert torch.allclose(g, e, atol=1e-12)


def test_time_major_lays_rows_out_by_step_and_reverses_within_lengths() -> None:
    valid = valid_positions(torch.tensor([3, 1]), 3)  # (S, T)
    rows = torch.tensor([[1.0], [2.0], [3.0], [4.0]])  # sequence 0's three steps, then sequence 1's one
    assert time_major(rows, valid)[:, :, 0].tolist() == [[1.0, 4.0], [2.0, 0.0], [3.0, 0.0]]
    assert time_major(rows, valid, reverse=True)[:, :, 0].tolist() == [[3.0, 4.0], [2.0, 0.0], [1.0, 0.0]]


def test_recurrence_passes_gradcheck() -> None:
    torch.manual_seed(2)
    gates = torch.randn(4, 3, 6, dtype=torch.float64, requires_grad=True)
    w_hh = torch.randn(6, 2, dtype=torch.float64, requires_grad=True)
    b_hh = torch.randn(6, dtype=torch.float64, requires_grad=True)
    last = torch.tensor([3, 0, 2])
    assert torch.autograd.gradcheck(lambda g, w, b: GRURecurrence.apply(g, w, b, last), (gates, w_hh, b_hh))


def test_only_a_one_layer_one_way_gru_with_biases_takes_the_recurrence() -> None:
    assert plain_gru(nn.GRU(3, 2))
    assert not plain_gru(nn.GRU(3, 2, num_layers=2))
    assert not plain_gru(nn.GRU(3, 2, bidirectional=True))
    assert not plain_gru(nn.GRU(3, 2, bias=False))


def test_final_state_takes_the_recurrence_only_where_gradients_are_needed(batch, monkeypatch) -> None:
    gru, inputs, lengths, _ = batch
    calls: list[int] = []
    apply = GRURecurrence.apply
    monkeypatch.setattr(GRURecurrence, "apply", lambda *a: calls.append(1) or apply(*a))
    with torch.no_grad():  # evaluation: nn.GRU's own run
        final_state(gru, inputs, lengths)
    assert calls == []
    final_state(gru, inputs, lengths)
    assert calls == [1]


def test_liwe_trains_through_the_recurrence_as_through_nn_gru(monkeypatch) -> None:
    torch.manual_seed(3)
    model = LIWE(LIWEConfig(vocab_size=40, image_dim=6, gru_hidden=5, joint_dim=3, image_hidden=7)).double()
    model.dropout.p = 0.0
    c = model.config.word_chars
    n_words = torch.tensor([6, 1, 3, 6, 2])
    tokens = torch.randint(1, 40, (5, 6 * c))
    tokens[:, :c] = tokens[0, :c]  # a word repeated across sentences: distinct rows count it once
    weights = torch.randn(5, 3, dtype=torch.float64)

    def run() -> tuple[torch.Tensor, list[torch.Tensor]]:
        model.zero_grad()
        out = model.embed_sentences(tokens, n_words * c)
        (out * weights).sum().backward()
        return out.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    got, got_grads = run()
    assert len(got_grads) > 10  # the text branch's every parameter
    monkeypatch.setattr(gru_recurrence, "takes_recurrence", lambda gru, inputs: False)  # nn.GRU, padded
    expected, expected_grads = run()
    assert torch.allclose(got, expected, atol=1e-12)
    for g, e in zip(got_grads, expected_grads):
        assert torch.allclose(g, e, atol=1e-12)
