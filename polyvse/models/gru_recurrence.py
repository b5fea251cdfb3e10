"""A one-layer, one-direction GRU's final states on a CPU, from input gates the caller computes.

The same function as ``torch.nn.GRU`` (its equations, its parameters, a zero initial state):

    r = σ(W_ir x + b_ir + W_hr h + b_hr)    z = σ(W_iz x + b_iz + W_hz h + b_hz)
    n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))    h' = n + z ⊙ (h − n)

split where a CPU pays for it differently:

- **The input gates** ``W_i x + b_i`` are one matrix product that the caller runs over the rows it has:
  the batch's valid positions (:func:`input_gates`), or its distinct words, gathered after. ``nn.GRU``
  multiplies every padded position, half of a ten-language batch of the default data.
- **The recurrence** (:class:`GRURecurrence`) runs step by step. Its backward is written out: each
  step's gate gradients are computed within the step, where its operands are still in cache, and
  ``W_hh``'s gradient is one product over all steps after the loop. It costs about what ``nn.GRU``'s
  recurrence costs (a step's operations pay their dispatch more than their arithmetic), so what is
  saved is the projection of the padding.

A :class:`torch.nn.GRU` module keeps holding the parameters, so checkpoints and the accelerator's
cuDNN path are unchanged; ``tests/test_gru_recurrence.py`` holds values and gradients to ``nn.GRU``'s.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn


def plain_gru(gru: nn.GRU) -> bool:
    """Whether ``gru`` is what :class:`GRURecurrence` computes: one layer, one direction, biases."""
    return gru.num_layers == 1 and not gru.bidirectional and gru.bias and gru.proj_size == 0


def takes_recurrence(gru: nn.GRU, inputs: Tensor) -> bool:
    """Whether a training step runs ``gru`` over ``inputs`` by this module: on a CPU, while gradients
    are recorded, for a GRU it computes. Evaluation keeps ``nn.GRU``, and an accelerator cuDNN."""
    return torch.is_grad_enabled() and inputs.device.type == "cpu" and plain_gru(gru)


def input_gates(gru: nn.GRU, rows: Tensor) -> Tensor:
    """``W_ih x + b_ih`` of ``(N, D)`` rows → ``(N, 3H)``, gates in ``nn.GRU``'s order (r, z, n)."""
    return nn.functional.linear(rows, gru.weight_ih_l0, gru.bias_ih_l0)


def valid_positions(lengths: Tensor, steps: int) -> Tensor:
    """``(S, T)`` mask of each sequence's first ``lengths[s]`` of ``steps``."""
    return torch.arange(steps, device=lengths.device) < lengths.unsqueeze(1)


class GRURecurrence(torch.autograd.Function):
    """``(T, S, 3H)`` input gates (time-major; any values after a sequence's end), ``W_hh (3H, H)``,
    ``b_hh (3H,)``, ``(S,)`` last steps → ``(S, H)``: each sequence's state after its last step."""

    @staticmethod
    def forward(ctx: Any, gates: Tensor, w_hh: Tensor, b_hh: Tensor, last: Tensor) -> Tensor:
        steps, seqs, three_h = gates.shape
        h = three_h // 3
        states = gates.new_empty(steps + 1, seqs, h)
        states[0].zero_()
        rz = gates.new_empty(steps, seqs, 2 * h)
        hidden = gates.new_empty(steps, seqs, three_h)  # W_hh h + b_hh of every step
        new = gates.new_empty(steps, seqs, h)
        w_t = w_hh.t()
        for t in range(steps):
            torch.addmm(b_hh, states[t], w_t, out=hidden[t])
            torch.add(gates[t, :, : 2 * h], hidden[t, :, : 2 * h], out=rz[t]).sigmoid_()
            torch.addcmul(gates[t, :, 2 * h :], rz[t, :, :h], hidden[t, :, 2 * h :], out=new[t]).tanh_()
            torch.lerp(new[t], states[t], rz[t, :, h:], out=states[t + 1])
        rows = torch.arange(seqs, device=gates.device)
        ctx.save_for_backward(w_hh, states, rz, hidden, new, last)
        return states[last + 1, rows]

    @staticmethod
    def backward(ctx: Any, d_final: Tensor) -> tuple[Tensor | None, ...]:
        with torch.autocast(d_final.device.type, enabled=False):
            return GRURecurrence._backward(ctx, d_final.to(ctx.saved_tensors[0].dtype))

    @staticmethod
    def _backward(ctx: Any, d_final: Tensor) -> tuple[Tensor | None, ...]:
        w_hh, states, rz, hidden, new, last = ctx.saved_tensors
        steps, seqs, h = new.shape
        w_rz, w_n = w_hh[: 2 * h], w_hh[2 * h :]
        d_out = d_final.new_zeros(steps, seqs, h)
        d_out[last, torch.arange(seqs, device=d_final.device)] = d_final
        d_gates = d_final.new_empty(steps, seqs, 3 * h)  # d(W_ih x + b_ih): its r and z parts are W_hh h's too
        d_hidden_n = d_final.new_empty(steps, seqs, h)  # d(W_hn h + b_hn) = d(n's input) ⊙ r
        dh = d_final.new_zeros(seqs, h)
        # each factor is computed within its step: the step's operands stay in cache
        for t in range(steps - 1, -1, -1):
            dh = dh + d_out[t]
            r, z, n, previous = rz[t, :, :h], rz[t, :, h:], new[t], states[t]
            d_n = torch.mul(dh, 1.0 - z, out=d_gates[t, :, 2 * h :]).mul_(1.0 - n * n)
            torch.mul(d_n, r, out=d_hidden_n[t])
            torch.mul(d_n * hidden[t, :, 2 * h :], r - r * r, out=d_gates[t, :, :h])
            torch.mul(dh * (previous - n), z - z * z, out=d_gates[t, :, h : 2 * h])
            dh = torch.addmm(dh * z, d_gates[t, :, : 2 * h], w_rz).addmm_(d_hidden_n[t], w_n)
        d_w = d_b = None
        if ctx.needs_input_grad[1]:
            previous = states[:steps].reshape(-1, h)
            d_w = torch.cat(
                (d_gates[..., : 2 * h].reshape(-1, 2 * h).t() @ previous, d_hidden_n.reshape(-1, h).t() @ previous)
            )
        if ctx.needs_input_grad[2]:
            d_b = torch.cat((d_gates[..., : 2 * h].sum((0, 1)), d_hidden_n.sum((0, 1))))
        return d_gates if ctx.needs_input_grad[0] else None, d_w, d_b, None


def recurrence_final_state(gru: nn.GRU, gates: Tensor, lengths: Tensor) -> Tensor:
    """``gru``'s state after each sequence's ``lengths[s]`` ≥ 1 steps, from its ``(T, S, 3H)``
    time-major input gates (:func:`input_gates`): ``(S, H)``, in the weights' precision (under
    autocast too: its operations write into buffers, which autocast does not cast)."""
    w_hh, b_hh = gru.weight_hh_l0, gru.bias_hh_l0
    with torch.autocast(gates.device.type, enabled=False):
        return GRURecurrence.apply(gates.to(w_hh.dtype), w_hh, b_hh, lengths.to(gates.device) - 1)


def time_major(rows: Tensor, valid: Tensor, reverse: bool = False) -> Tensor:
    """The ``(N, G)`` rows of a padded batch's valid positions, in ``(S, T)`` batch-major order of
    the ``valid`` mask (each sequence's first steps), laid out ``(T, S, G)`` time-major with zeros
    after each sequence's end; ``reverse``: each sequence read backwards within its length."""
    seqs, steps = valid.shape
    s, t = valid.nonzero(as_tuple=True)
    if reverse:
        t = valid.sum(1)[s] - 1 - t
    out = rows.new_zeros(steps, seqs, rows.shape[1])
    out[t, s] = rows
    return out


def gru_final_state(gru: nn.GRU, inputs: Tensor, lengths: Tensor) -> Tensor:
    """``gru`` over ``(S, T, D)`` batch-first inputs, its state after each sequence's ``lengths[s]`` ≥ 1
    steps: ``(S, H)``. The input gates of the valid positions alone are computed."""
    valid = valid_positions(lengths.to(inputs.device), inputs.shape[1])
    return recurrence_final_state(gru, time_major(input_gates(gru, inputs[valid]), valid), lengths)


def final_states_both_ways(
    forward: nn.GRU, backward: nn.GRU, rows: Tensor, valid: Tensor, where: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Two GRUs over the same sentences, ``forward`` reading each from its first word and
    ``backward`` from its last: the ``(N, D)`` rows of the valid positions of ``(S, T)`` mask
    ``valid`` (batch-major), or ``(U, D)`` distinct rows with the ``(N,)`` row ``where`` of each
    position → their two ``(S, H)`` final states. Both input gates in one product, once a row."""
    h3 = 3 * forward.hidden_size
    weight = torch.cat((forward.weight_ih_l0, backward.weight_ih_l0))
    bias = torch.cat((forward.bias_ih_l0, backward.bias_ih_l0))
    gates = nn.functional.linear(rows, weight, bias)
    if where is not None:
        gates = gates[where]
    lengths = valid.sum(1)
    return (
        recurrence_final_state(forward, time_major(gates[:, :h3], valid), lengths),
        recurrence_final_state(backward, time_major(gates[:, h3:], valid, reverse=True), lengths),
    )
