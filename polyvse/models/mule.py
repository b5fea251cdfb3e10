"""MULE: Multimodal Universal Language Embedding (Kim et al., AAAI 2020).

"Visual-Semantic Multilingual Alignment": every word of every language has its
own word embedding (initialised from 300-D monolingual FastText), projected
into the 512-D universal embedding (MULE) by a language-specific fully
connected layer; "the word embeddings and these fully connected layers are the
only language-specific parameters". Above the universal embedding, one
multimodal model serves all languages (:mod:`polyvse.models.universal`):
u = mean of the word features (MULE sentence embedding), s = GRU, last valid
step → FC → L2 (multimodal sentence embedding), EmbN's image branch, and the
adversarial language classifier (one FC on u behind gradient reversal).

The paper says "a single fully-connected layer"; no activation follows it here
(none is named). The losses (multi-layer neighbourhood constraints, language
classifier, image–sentence triplet) and the LP pretraining objective are in
:mod:`polyvse.train.objectives_mule`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

from polyvse.models.embn import BranchSizes
from polyvse.models.universal import UniversalEmbeddingModel

if TYPE_CHECKING:
    from polyvse.text.vocab import Vocabulary


@dataclass
class MULEConfig(BranchSizes):
    vocab_size: int
    image_dim: int
    n_langs: int
    word_dim: int = 300
    universal_dim: int = 512


def init_word_embeddings(table: nn.Embedding, word_vectors: Tensor | None, where: str) -> None:
    """Copy ``word_vectors (V, d)`` into ``table`` (random init stays when None);
    the padding row is kept at zero."""
    if word_vectors is not None:
        if tuple(word_vectors.shape) != tuple(table.weight.shape):
            raise ValueError(
                f"{where}: word_vectors has shape {tuple(word_vectors.shape)}, expected {tuple(table.weight.shape)}"
            )
        with torch.no_grad():
            table.weight.copy_(word_vectors.to(table.weight.dtype))
    if table.padding_idx is not None:
        with torch.no_grad():
            table.weight[table.padding_idx].zero_()


class MULE(UniversalEmbeddingModel):
    """MULE with its multimodal EmbN (MULE Fig. 2).

    ``word_vectors``: optional ``(vocab_size, word_dim)`` initial word
    embeddings aligned with the joint :class:`~polyvse.text.vocab.Vocabulary`
    (FastText 300-D); None keeps a random initialisation.
    """

    family = "mule"

    def __init__(self, config: MULEConfig, word_vectors: Tensor | None = None):
        super().__init__(
            config.universal_dim,
            config.n_langs,
            config.image_dim,
            config.gru_hidden,
            config.joint_dim,
            config.image_hidden,
            config.dropout,
        )
        self.config = config
        self.word_embeddings = nn.Embedding(config.vocab_size, config.word_dim, padding_idx=0)
        init_word_embeddings(self.word_embeddings, word_vectors, "MULE(word_vectors)")
        self.language_fc = nn.ModuleList(
            nn.Linear(config.word_dim, config.universal_dim) for _ in range(config.n_langs)
        )

    @classmethod
    def from_vocabulary(
        cls, vocab: "Vocabulary", image_dim: int, word_vectors: Tensor | None = None, **options
    ) -> "MULE":
        """A fresh model for ``vocab`` (one language FC per ``vocab.langs``)."""
        return cls(
            MULEConfig(vocab_size=len(vocab), image_dim=image_dim, n_langs=len(vocab.langs), **options), word_vectors
        )

    def word_features(self, tokens: Tensor, langs: Tensor) -> Tensor:
        """``(S, T)``, ``(S,)`` → ``(S, T, universal_dim)``: each sentence's words
        through its language's FC.

        A word's feature depends only on (language, word): the FC runs once per
        distinct pair of the batch and the result is gathered, not once per
        position (a batch of padded sentences repeats few words many times)."""
        vocab_size = self.config.vocab_size
        key = langs.unsqueeze(1) * vocab_size + tokens  # (S, T)
        pairs, where = torch.unique(key, return_inverse=True)  # sorted: each language's pairs in one run
        pair_lang, pair_word = pairs // vocab_size, pairs % vocab_size
        embedded = self.word_embeddings(pair_word)
        present, counts = torch.unique_consecutive(pair_lang, return_counts=True)
        # each language's FC on its slice: no per-language mask, gather and scatter back
        done = [
            self.language_fc[lang](rows)  # bfloat16 under autocast
            for lang, rows in zip(present.tolist(), embedded.split(counts.tolist()))
        ]
        out = torch.cat(done) if done else embedded.new_zeros(0, self.config.universal_dim)
        return out[where]

    def universal_parameters(self) -> list[nn.Parameter]:
        return [self.word_embeddings.weight, *self.language_fc.parameters()]
