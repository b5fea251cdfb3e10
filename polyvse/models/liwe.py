"""LIWE, the character-level language-agnostic baseline (Wehrmann et al. ICCV
2019) as SMALR Tables 1–2(b) use it: S-LIWE (24-D character embeddings) and
L-LIWE (120-D).

Text branch: character embeddings (one table shared by all languages,
:class:`polyvse.text.chars.CharVocabulary`) → a bidirectional GRU over the
characters → the final states of both directions (the forward state after the
last valid character, the backward state after reading back to the first),
concatenated → dropout → FC → L2 norm. The two directions are two one-way GRUs
over the padded batch, the backward one reading each sentence reversed within
its length: on a CPU a packed bidirectional GRU multiplies its input projection
step by step, three to four times slower over ~100 characters. Image branch: EmbN's, so that LIWE
differs from the other rows only in its text encoder. (LIWE's published
numbers use bottom-up Faster R-CNN features, SMALR §4; here every row shares
the workflow's image features.)

``config.vocab_size`` is the size of the *character* vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from polyvse.models.embn import BranchSizes, ImageBranch, l2_normalize, last_valid_output, reversed_within_lengths
from polyvse.models.mlmme import check_lengths

LIWE_SIZES = {"small": 24, "large": 120}  # character embedding sizes of S-LIWE and L-LIWE


@dataclass
class LIWEConfig(BranchSizes):
    vocab_size: int
    image_dim: int
    char_dim: int = 24


class LIWE(nn.Module):
    family = "liwe"

    def __init__(self, config: LIWEConfig):
        super().__init__()
        self.config = config
        self.char_embeddings = nn.Embedding(config.vocab_size, config.char_dim, padding_idx=0)
        self.forward_gru = nn.GRU(config.char_dim, config.gru_hidden, batch_first=True)
        self.backward_gru = nn.GRU(config.char_dim, config.gru_hidden, batch_first=True)
        self.dropout = nn.Dropout(config.dropout)
        self.fc = nn.Linear(2 * config.gru_hidden, config.joint_dim)
        self.image = ImageBranch(config.image_dim, config.image_hidden, config.joint_dim, config.dropout)

    def embed_images(self, features: Tensor) -> Tensor:
        return self.image(features)

    def embed_sentences(self, tokens: Tensor, lengths: Tensor, langs: Tensor | None = None) -> Tensor:
        """tokens ``(S, T)`` character ids, lengths ``(S,)`` → ``(S, J)``, unit
        norm; ``langs`` is unused (one encoder for every language)."""
        lengths = check_lengths(lengths, tokens.shape[1], "LIWE(lengths)")
        chars = self.char_embeddings(tokens)
        forward = last_valid_output(self.forward_gru, chars, lengths)  # after the last character
        backward = last_valid_output(self.backward_gru, reversed_within_lengths(chars, lengths), lengths)
        return l2_normalize(self.fc(self.dropout(torch.cat([forward, backward], dim=1))))

    def parameter_counts(self) -> tuple[int, int]:
        """(train-time, test-time); as for EmbN the embedding table is a lookup at test time."""
        train = sum(p.numel() for p in self.parameters() if p.requires_grad)
        return train, train - self.char_embeddings.weight.numel()
