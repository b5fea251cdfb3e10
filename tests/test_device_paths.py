"""The accelerator's evaluations of the losses equal the CPU's.

On CUDA the training step avoids reading data-dependent sizes back to the host (each read is a
host-device synchronisation): the triplet mining runs on fixed shapes
(:func:`~polyvse.losses.triplet.dense_top_k_hinge`), MCLM's language pairs take one slot each
(:func:`~polyvse.losses.mclm.slotted_pair_means`), the GRU's final state is read without unpadding
(:func:`~polyvse.models.embn.final_state`), HEM's word positions come from one read of their
sizes (``torch.nonzero_static``). The CPU reads the sizes (the triplet mining gathers each anchor's
positives into as many slots as the most any anchor has), which is cheaper there. These tests
compare the forms on the CPU, and with POLYVSE_TEST_DEVICE=cuda (bench/cuda_session.sh) a
whole SMALR objective, its gradients and a clipped step on the GPU against the CPU.
"""

import os

import pytest
import torch
from torch import nn

from polyvse.losses.mclm import compact_pair_means, slotted_pair_means
from polyvse.losses.triplet import dense_top_k_hinge, gathered_top_k_hinge, top_k_hinge
from polyvse.models.embn import final_state
from polyvse.models.hem import SMALR, HEMConfig
from polyvse.optim import clip_gradient_norm, lazy_word_tables
from polyvse.train.objectives_smalr import SMALRObjective

DEVICE = os.environ.get("POLYVSE_TEST_DEVICE", "cpu")


@pytest.mark.parametrize("seed", range(40))
def test_cpu_and_dense_mining_equal_the_gathered_rows_with_gradients(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    a, c = torch.randint(0, 9, (2,), generator=g).tolist()
    dist = torch.rand(a, c, generator=g, dtype=torch.float64, requires_grad=True)
    positive = torch.rand(a, c, generator=g) < 0.3
    negative = ~(positive | (torch.rand(a, c, generator=g) < 0.2))
    top_k = int(torch.randint(1, 6, (), generator=g))
    gathered = gathered_top_k_hinge(dist, positive, negative, 0.2, top_k)
    (g_gathered,) = torch.autograd.grad(gathered, dist, materialize_grads=True)
    for form in (top_k_hinge, dense_top_k_hinge):  # the CPU's positive slots, the accelerator's shapes
        value = form(dist, positive, negative, 0.2, top_k)
        assert value.item() == pytest.approx(gathered.item(), abs=1e-12)
        (grad,) = torch.autograd.grad(value, dist, materialize_grads=True)
        torch.testing.assert_close(grad, g_gathered)


def test_dense_mining_without_positives_or_negatives_is_zero() -> None:
    dist = torch.rand(3, 4)
    nothing = torch.zeros(3, 4, dtype=torch.bool)
    assert dense_top_k_hinge(dist, nothing, ~nothing).item() == 0.0
    assert dense_top_k_hinge(dist, ~nothing, nothing).item() == 0.0
    # the gathered rows and the CPU's slots agree on both
    for form in (gathered_top_k_hinge, top_k_hinge):
        assert form(dist, nothing, ~nothing).item() == 0.0
        assert form(dist, ~nothing, nothing).item() == 0.0


def test_slotted_language_pairs_equal_the_compact_groups() -> None:
    g = torch.Generator().manual_seed(0)
    first = torch.randint(0, 4, (30,), generator=g)
    second = first + torch.randint(1, 3, (30,), generator=g)  # first < second, languages 0..5
    per_pair = torch.rand(30, generator=g, dtype=torch.float64)
    slotted = slotted_pair_means(per_pair, first, second, n_langs=6)
    assert slotted.item() == pytest.approx(compact_pair_means(per_pair, first, second).item(), abs=1e-12)


def test_final_state_is_the_output_at_the_last_valid_step() -> None:
    torch.manual_seed(0)
    gru = nn.GRU(4, 6, batch_first=True)
    words = torch.randn(9, 7, 4)
    lengths = torch.tensor([7, 1, 3, 7, 2, 5, 5, 6, 4])
    packed = nn.utils.rnn.pack_padded_sequence(words, lengths, batch_first=True, enforce_sorted=False)
    out, _ = nn.utils.rnn.pad_packed_sequence(gru(packed)[0], batch_first=True)
    expected = out[torch.arange(9), lengths - 1]
    # the CPU's padded run reads the same state, up to the order of its float sums
    assert torch.allclose(final_state(gru, words, lengths), expected, atol=1e-6)


def _smalr_batch(device: torch.device) -> tuple[SMALR, dict[str, torch.Tensor]]:
    torch.manual_seed(0)
    n_langs, vocab, per_lang = 3, 61, 20
    latent_of_word = torch.randint(0, 7, (vocab,))
    latent_of_word[0] = -1
    specific_of_word = torch.full((vocab,), -1)
    for lang in range(n_langs):  # the first 4 words of each language are specific
        specific_of_word[1 + lang * per_lang : 5 + lang * per_lang] = torch.arange(4) + 4 * lang
    config = HEMConfig(
        vocab_size=vocab, image_dim=5, n_langs=n_langs, n_latent=7, n_specific=12,
        specific_dim=3, universal_dim=8, gru_hidden=6, joint_dim=4, image_hidden=7, dropout=0.0,
    )  # fmt: skip
    model = SMALR(config, latent_of_word, specific_of_word).to(device)
    lazy_word_tables(model)
    images = 6
    lang = torch.arange(2 * images) % n_langs
    lengths = torch.randint(1, 8, (2 * images,))
    tokens = 1 + torch.randint(0, per_lang - 1, (2 * images, int(lengths.max()))) + lang[:, None] * per_lang
    tokens[torch.arange(tokens.shape[1]) >= lengths[:, None]] = 0
    batch = {
        "images": torch.randn(images, 5).to(device),
        "tokens": tokens.to(device),
        "lengths": lengths,
        "lang": lang.to(device),
        "image_of_sentence": torch.arange(images).repeat_interleave(2).to(device),
    }
    return model, batch


def _step(where: str) -> tuple[float, float, dict[str, torch.Tensor]]:
    """One SMALR objective (MCLM masks from one CPU generator, so both devices mask the same
    words), its backward pass and the clip: loss, norm before clipping, clipped gradients."""
    model, batch = _smalr_batch(torch.device(where))
    terms = SMALRObjective(generator=torch.Generator().manual_seed(1))(model, batch)
    terms["loss"].backward()
    norm = clip_gradient_norm(model.parameters(), 0.01)
    grads = {n: (p.grad.to_dense() if p.grad.is_sparse else p.grad).cpu() for n, p in model.named_parameters()}
    return float(terms["loss"].detach()), float(norm), grads


def test_a_smalr_step_runs_the_same_twice() -> None:
    first, second = _step("cpu"), _step("cpu")
    assert first[:2] == second[:2]
    assert all(torch.equal(first[2][n], second[2][n]) for n in first[2])


@pytest.mark.skipif(DEVICE == "cpu", reason="compares a GPU step with the CPU's: POLYVSE_TEST_DEVICE=cuda")
def test_a_smalr_step_on_the_device_equals_the_cpu_step() -> None:
    torch.backends.cudnn.allow_tf32 = False  # float32 everywhere, as on the CPU
    loss_cpu, norm_cpu, grads_cpu = _step("cpu")
    loss_dev, norm_dev, grads_dev = _step(DEVICE)
    assert loss_dev == pytest.approx(loss_cpu, rel=1e-4)
    assert norm_dev == pytest.approx(norm_cpu, rel=1e-4)
    assert set(grads_dev) == set(grads_cpu)
    for name in grads_cpu:
        torch.testing.assert_close(grads_dev[name], grads_cpu[name], rtol=1e-3, atol=1e-6, msg=name)
