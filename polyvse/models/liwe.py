"""LIWE, the character-based language-agnostic baseline (Wehrmann et al. ICCV 2019) as SMALR
Tables 1–2(b) use it: S-LIWE (24-D character embeddings) and L-LIWE (120-D).

LIWE's text branch reads words built from characters. A word's embedding is computed from its first
``word_chars`` characters: their embeddings (one table shared by every language and script,
:class:`polyvse.text.chars.CharVocabulary`) concatenated, ``word_chars × char_dim``, through fully
connected layers (``word_hidden``, then ``word_dim``; each FC → batch norm → ReLU, as LIWE's 1×1
convolutions over a sentence's words). A bidirectional GRU runs over the sentence's word embeddings
(SMALR §2: LIWE "uses a bidirectional [GRU] to aggregate 24-D character embeddings"); its two final
states (the forward one after the last word, the backward one after reading back to the first),
concatenated → dropout → FC → L2 norm give the sentence embedding, the head every other row of the
tables has. The two directions are two one-way GRUs over the padded words, the backward one reading
each sentence reversed within its length. Image branch: EmbN's, so that LIWE differs from the other
rows only in its text encoder. (LIWE's published numbers use bottom-up Faster R-CNN features, SMALR
§4; here every row shares the workflow's image features. Its code's weight normalisation of the word
layers and its attention over the GRU's outputs are left out.)

``config.vocab_size`` is the size of the *character* vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from polyvse.models.embn import BranchSizes, ImageBranch, l2_normalize, last_valid_output, reversed_within_lengths
from polyvse.models import gru_recurrence
from polyvse.models.mlmme import check_lengths
from polyvse.text.chars import WORD_CHARS

LIWE_SIZES = {"small": 24, "large": 120}  # character embedding sizes of S-LIWE and L-LIWE


@dataclass
class LIWEConfig(BranchSizes):
    vocab_size: int
    image_dim: int
    char_dim: int = 24
    word_chars: int = WORD_CHARS
    word_hidden: list[int] = field(default_factory=lambda: [128, 256])
    word_dim: int = 300


def counted_batch_norm(norm: nn.BatchNorm1d, x: Tensor, counts: Tensor) -> Tensor:
    """``norm`` over ``(N, C)`` distinct rows of a batch in which row ``i`` occurs ``counts[i]`` times:
    the output, gradients and running statistics ``norm`` gives the batch with every occurrence
    written out (training statistics weighted by the counts; the running variance unbiased over the
    occurrences), computed on the distinct rows alone. In eval mode ``norm`` itself."""
    if not norm.training:
        return norm(x)
    w = counts.to(x.dtype).unsqueeze(1)
    n = w.sum()
    mean = (w * x).sum(0) / n
    centred = x - mean
    var = (w * centred * centred).sum(0) / n
    out = centred * torch.rsqrt(var + norm.eps)
    if norm.affine:
        out = out * norm.weight + norm.bias
    if norm.track_running_stats and norm.running_mean is not None and norm.running_var is not None:
        with torch.no_grad():
            norm.num_batches_tracked.add_(1)
            momentum = norm.momentum if norm.momentum is not None else 1.0 / float(norm.num_batches_tracked)
            unbiased = var * n / (n - 1.0).clamp(min=1.0)
            norm.running_mean.mul_(1.0 - momentum).add_(momentum * mean.detach())
            norm.running_var.mul_(1.0 - momentum).add_(momentum * unbiased.detach())
    return out


class CharacterWords(nn.Module):
    """LIWE's word embedding from characters: ``(N, word_chars)`` character ids → ``(N, word_dim)``.

    The layers run once per distinct word of the batch, their batch norms counting each word as often
    as it occurs (:func:`counted_batch_norm`): the function of the layers over every occurrence, at the
    cost of the distinct words (a ten-language batch's 4,000 word positions hold ~1,000 words)."""

    def __init__(self, vocab_size: int, char_dim: int, word_chars: int, hidden: list[int], word_dim: int):
        super().__init__()
        self.char_embeddings = nn.Embedding(vocab_size, char_dim, padding_idx=0)
        layers: list[nn.Module] = []
        sizes = [word_chars * char_dim, *hidden, word_dim]
        for n_in, n_out in zip(sizes, sizes[1:]):
            layers += [nn.Linear(n_in, n_out), nn.BatchNorm1d(n_out), nn.ReLU()]
        self.layers = nn.Sequential(*layers)

    def forward(self, chars: Tensor) -> Tensor:
        words, where = self.distinct(chars)
        return words[where]

    def distinct(self, chars: Tensor) -> tuple[Tensor, Tensor]:
        """``(N, word_chars)`` → the ``(U, word_dim)`` embeddings of its distinct words and the ``(N,)``
        row of each word among them."""
        distinct, where, counts = torch.unique(chars, dim=0, return_inverse=True, return_counts=True)
        h = self.char_embeddings(distinct).flatten(1)
        for layer in self.layers:
            h = counted_batch_norm(layer, h, counts) if isinstance(layer, nn.BatchNorm1d) else layer(h)
        return h, where


class LIWE(nn.Module):
    family = "liwe"

    def __init__(self, config: LIWEConfig):
        super().__init__()
        self.config = config
        self.words = CharacterWords(
            config.vocab_size, config.char_dim, config.word_chars, list(config.word_hidden), config.word_dim
        )
        self.forward_gru = nn.GRU(config.word_dim, config.gru_hidden, batch_first=True)
        self.backward_gru = nn.GRU(config.word_dim, config.gru_hidden, batch_first=True)
        self.dropout = nn.Dropout(config.dropout)
        self.fc = nn.Linear(2 * config.gru_hidden, config.joint_dim)
        self.image = ImageBranch(config.image_dim, config.image_hidden, config.joint_dim, config.dropout)

    def embed_images(self, features: Tensor) -> Tensor:
        return self.image(features)

    def embed_sentences(self, tokens: Tensor, lengths: Tensor, langs: Tensor | None = None) -> Tensor:
        """tokens ``(S, W · word_chars)``: each word's character ids in ``word_chars`` slots
        (:meth:`polyvse.text.chars.CharVocabulary.encode`), lengths ``(S,)`` their valid slots → ``(S, J)``,
        unit norm; ``langs`` is unused (one encoder for every language)."""
        lengths = check_lengths(lengths, tokens.shape[1], "LIWE(lengths)")
        c = self.config.word_chars
        if tokens.shape[1] % c or bool((lengths % c).any()):
            raise ValueError(f"LIWE(tokens): sentences must come in words of {c} character slots")
        n_words = lengths // c
        words = tokens.view(tokens.shape[0], -1, c)  # (S, W, C)
        valid = gru_recurrence.valid_positions(n_words.to(tokens.device), words.shape[1])  # (S, W)
        if gru_recurrence.takes_recurrence(self.forward_gru, tokens):
            distinct, where = self.words.distinct(words[valid])
            forward, backward = gru_recurrence.final_states_both_ways(
                self.forward_gru, self.backward_gru, distinct, valid, where
            )
            return l2_normalize(self.fc(self.dropout(torch.cat([forward, backward], dim=1))))
        embedded = self.words(words[valid])  # the valid words only: padding never enters the batch norm
        x = embedded.new_zeros(words.shape[0], words.shape[1], embedded.shape[1])
        x[valid] = embedded
        forward = last_valid_output(self.forward_gru, x, n_words)  # after the last word
        backward = last_valid_output(self.backward_gru, reversed_within_lengths(x, n_words), n_words)
        return l2_normalize(self.fc(self.dropout(torch.cat([forward, backward], dim=1))))

    def parameter_counts(self) -> tuple[int, int]:
        """(train-time, test-time); as for EmbN the embedding table is a lookup at test time."""
        train = sum(p.numel() for p in self.parameters() if p.requires_grad)
        return train, train - self.words.char_embeddings.weight.numel()
