"""Masked Cross-Language Modeling, MCLM (Burns et al. ECCV 2020, SMALR §3.2, eq. 2).

For every unique pair of languages (i, j) with sentences S_i, S_j of the same
image in the batch, some words of each are replaced by a MASK feature, giving
masked representations S_i^m, S_j^m; these are concatenated and one FC layer,
shared by all language pairs, predicts the missing information (S'_i, S'_j).
The loss compares the reconstruction with the unmasked sentence:

    L_mask = ||ℓ2(S_i^m + S'_i) − ℓ2(S_i)|| + ||ℓ2(S_j^m + S'_j) − ℓ2(S_j)||      (2)

with ℓ2 the projection to unit norm and ||·|| the Euclidean norm. SMALR applies
it to the HEM output (the universal sentence vector) and to the final language
representation (the multimodal sentence embedding), each with its own FC.

Choices where the paper is silent, stated here once:

- Masking rate (20 %): a sentence of L words has ``floor(0.2 L)`` or
  ``ceil(0.2 L)`` words masked (stochastic rounding, so the expected rate is
  exactly 20 % for every length), at positions drawn uniformly without
  replacement. A short sentence may have no word masked in a given draw; no
  minimum of one is forced because that would mask 1/L ≫ 20 % of short
  sentences.
- Each sentence is masked once per batch; the same masked version serves
  every pair it is in, and the multimodal loss on masked sentences (§3.3).
- Pairs: every two sentences of the same image in two different languages.
  Within a language pair the loss is averaged over its sentence pairs; the
  language pairs' losses are summed ("we compute the masking loss in Eq. (2)
  for all unique pairs of languages").
- The unmasked target is not detached: eq. (2) is a loss on both sides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from polyvse.text.encoded import valid_mask


def mask_words(lengths: Tensor, width: int, rate: float = 0.2, generator: torch.Generator | None = None) -> Tensor:
    """Which words to mask: ``(S,)`` lengths → ``(S, width)`` bool (never a padding step).

    A sentence of L words gets ``floor(rate·L)`` masked words plus one more with
    probability ``frac(rate·L)``, at uniformly drawn positions.
    """
    device = lengths.device
    draw_on = generator.device if generator is not None else device  # a CPU generator may serve a GPU batch
    expected = rate * lengths.to(torch.float)
    n_masked = (
        expected.floor()
        + (
            torch.rand(lengths.shape, device=draw_on, generator=generator).to(device) < expected - expected.floor()
        ).float()
    )
    valid = valid_mask(lengths, width)
    keys = torch.rand(lengths.shape[0], width, device=draw_on, generator=generator).to(device)
    keys = keys.masked_fill(~valid, 2.0)
    rank = keys.argsort(dim=1).argsort(dim=1)  # rank of each step's random key; padding ranks last
    return rank < n_masked.long().unsqueeze(1)


def cross_language_pairs(image_of_sentence: Tensor, lang: Tensor) -> tuple[Tensor, Tensor]:
    """Every pair (a, b) of sentences of the same image with ``lang[a] < lang[b]``.

    ``(S,), (S,) -> (P,), (P,)`` sentence rows, ordered by (a, b).
    """
    same = image_of_sentence.unsqueeze(0) == image_of_sentence.unsqueeze(1)
    ordered = lang.unsqueeze(1) < lang.unsqueeze(0)
    first, second = (same & ordered).nonzero(as_tuple=True)
    return first, second


class MCLMHead(nn.Module):
    """The FC shared across language pairs: ``[S_i^m ; S_j^m] (P, 2D) → [S'_i ; S'_j]``."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.fc = nn.Linear(2 * dim, 2 * dim)

    def forward(self, masked_first: Tensor, masked_second: Tensor) -> tuple[Tensor, Tensor]:
        pred = self.fc(torch.cat([masked_first, masked_second], dim=1))
        return pred[:, : self.dim], pred[:, self.dim :]


def mclm_loss(
    full: Tensor,
    masked: Tensor,
    head: MCLMHead,
    first: Tensor,
    second: Tensor,
    lang: Tensor,
    n_langs: int | None = None,
) -> Tensor:
    """Eq. (2) summed over language pairs, averaged over the sentence pairs of each.

    full, masked: ``(S, D)`` unmasked and masked sentence representations;
    first, second: ``(P,)`` pairs from :func:`cross_language_pairs`;
    lang: ``(S,)`` language indices; n_langs: how many languages there are (None: read from
    ``lang``). Zero (with a graph) when there is no pair.
    """
    if first.numel() == 0:
        return (full.sum() + masked.sum()) * 0.0
    normalize, norm = nn.functional.normalize, torch.linalg.vector_norm
    # each gather and normalisation once (a small op costs the same launch whatever its size); on
    # an accelerator the language pairs take fixed slots when their number is known: reading the
    # batch's pairs back is three host-device synchronisations a call, a cheap read on the CPU
    masked_first, masked_second, full_unit = masked[first], masked[second], normalize(full, dim=1)
    pred_first, pred_second = head(masked_first, masked_second)
    per_pair = norm(normalize(masked_first + pred_first, dim=1) - full_unit[first], dim=1) + norm(
        normalize(masked_second + pred_second, dim=1) - full_unit[second], dim=1
    )
    if n_langs is None or lang.device.type == "cpu":
        return compact_pair_means(per_pair, lang[first], lang[second])
    return slotted_pair_means(per_pair, lang[first], lang[second], n_langs)


def compact_pair_means(per_pair: Tensor, lang_first: Tensor, lang_second: Tensor) -> Tensor:
    """Sum over the language pairs present of the mean of ``per_pair`` ``(P,)`` within each,
    the pairs' languages ``(P,)`` read from the data."""
    # any factor above the largest second language orders the ids as the pairs (first, second)
    language_pair = lang_first * (int(lang_second.max()) + 1) + lang_second
    _, group = torch.unique(language_pair, return_inverse=True)
    n_groups = int(group.max()) + 1
    sums = per_pair.new_zeros(n_groups).index_add(0, group, per_pair)
    sizes = per_pair.new_zeros(n_groups).index_add(0, group, torch.ones_like(per_pair))
    return (sums / sizes).sum()


def slotted_pair_means(per_pair: Tensor, lang_first: Tensor, lang_second: Tensor, n_langs: int) -> Tensor:
    """:func:`compact_pair_means` with one slot per ordered pair of the ``n_langs`` languages,
    the empty ones adding zero: fixed shapes, nothing read back to the host."""
    language_pair = lang_first * n_langs + lang_second
    sums = per_pair.new_zeros(n_langs * n_langs).index_add(0, language_pair, per_pair)
    sizes = per_pair.new_zeros(n_langs * n_langs).index_add(0, language_pair, torch.ones_like(per_pair))
    return (sums / sizes.clamp(min=1)).sum()


@dataclass
class MCLMOutput:
    """loss = universal + final; masked_universal ``(S, U)`` and masked_final
    ``(S, J)`` are the masked sentences (the latter enters the multimodal loss);
    mask ``(S, T)``; n_pairs: number of cross-language sentence pairs."""

    loss: Tensor
    universal: Tensor
    final: Tensor
    masked_universal: Tensor
    masked_final: Tensor
    mask: Tensor
    n_pairs: int


MaskedEncoder = Callable[[Tensor], tuple[Tensor, Tensor]]


def masked_cross_language(
    encode_masked: MaskedEncoder,
    universal_head: MCLMHead,
    final_head: MCLMHead,
    tokens: Tensor,
    lengths: Tensor,
    langs: Tensor,
    image_of_sentence: Tensor,
    universal: Tensor,
    final: Tensor,
    rate: float = 0.2,
    generator: torch.Generator | None = None,
    n_langs: int | None = None,
) -> MCLMOutput:
    """MCLM on both levels of SMALR (Fig. 2).

    ``encode_masked(mask) -> (u, s)`` encodes the batch's ``tokens`` with the words of ``mask
    (S, T)`` replaced by the MASK feature; ``universal (S, U)`` and ``final (S, J)`` are the
    unmasked encodings of the same batch; ``n_langs`` the model's languages (None: read from
    ``langs``).
    """
    mask = mask_words(lengths.to(tokens.device, non_blocking=True), tokens.shape[1], rate, generator)
    masked_u, masked_s = encode_masked(mask)
    first, second = cross_language_pairs(image_of_sentence, langs)
    loss_u = mclm_loss(universal, masked_u, universal_head, first, second, langs, n_langs)
    loss_s = mclm_loss(final, masked_s, final_head, first, second, langs, n_langs)
    return MCLMOutput(loss_u + loss_s, loss_u, loss_s, masked_u, masked_s, mask, int(first.numel()))
