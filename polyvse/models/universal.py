"""The multimodal model on top of a universal language embedding, shared by
MULE (Kim et al. AAAI 2020, Fig. 2) and SMALR's LA / HEM / SMALR (Burns et al.
ECCV 2020, Fig. 2, §3).

A family defines only how words reach the universal embedding space
(:meth:`UniversalEmbeddingModel.word_features`: language-specific FC layers for
MULE, latent tokens and language-specific FC layers for HEM). Everything above
that is common:

- u, the sentence vector in the universal space: the mean of the word features
  of the valid (non-padding) tokens (MULE "Multi-Layer Neighborhood
  Constraints": averaging "performed better than using an LSTM");
- s, the multimodal sentence embedding: a GRU over the word features, its state
  after the last valid token, dropout, FC, L2 norm (EmbN's text branch);
- the image branch of EmbN;
- a language classifier, one FC on u (MULE eq. 2; SMALR L_adv), reached
  through a gradient reversal layer so that the universal embedding learns to
  fool it;
- optionally a learned MASK vector in the universal space, which replaces the
  features of masked words (SMALR §3.2, MCLM).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor, nn

from polyvse.models.embn import GRUSentenceEncoder, ImageBranch
from polyvse.models.gradient_reversal import reverse_gradient
from polyvse.text.encoded import valid_mask


def masked_mean(x: Tensor, lengths: Tensor) -> Tensor:
    """Mean over the valid steps: ``(S, T, D), (S,) -> (S, D)``; padding never enters."""
    lengths = lengths.to(x.device, non_blocking=True)  # from the host: a blocking copy waits for the device
    keep = valid_mask(lengths, x.shape[1]).unsqueeze(-1).to(x.dtype)
    return (x * keep).sum(dim=1) / lengths.clamp(min=1).unsqueeze(1).to(x.dtype)


def check_langs(langs: Tensor | None, n_sentences: int, n_langs: int, where: str) -> Tensor:
    """The ``(S,)`` language indices a multilingual family needs, range-checked."""
    if langs is None:
        raise ValueError(f"{where}: this model has language-specific parameters and needs `langs`")
    if langs.shape != (n_sentences,):
        raise ValueError(f"{where}: langs has shape {tuple(langs.shape)}, expected ({n_sentences},)")
    if n_sentences and langs.device.type != "cpu":
        # reading the range back would make the host wait for the device at every step: the
        # device checks it and fails the next synchronising call with this message
        torch._assert_async(
            ((langs >= 0) & (langs < n_langs)).all(), f"{where}: language index out of range [0, {n_langs})"
        )
    elif n_sentences and (int(langs.min()) < 0 or int(langs.max()) >= n_langs):
        raise ValueError(f"{where}: language index out of range [0, {n_langs}): {int(langs.min())}..{int(langs.max())}")
    return langs


def count(params: Iterable[nn.Parameter]) -> int:
    return sum(p.numel() for p in params if p.requires_grad)


class UniversalEmbeddingModel(nn.Module):
    """Base class: subclasses implement :meth:`word_features` and
    :meth:`universal_parameters`."""

    family = "universal"

    def __init__(
        self,
        universal_dim: int,
        n_langs: int,
        image_dim: int,
        gru_hidden: int,
        joint_dim: int,
        image_hidden: int,
        dropout: float,
        mask_token: bool = False,
    ):
        super().__init__()
        self.universal_dim = universal_dim
        self.n_langs = n_langs
        self.text = GRUSentenceEncoder(universal_dim, gru_hidden, joint_dim, dropout)
        self.image = ImageBranch(image_dim, image_hidden, joint_dim, dropout)
        self.language_classifier = nn.Linear(universal_dim, n_langs)  # W_lc of MULE eq. 2
        # SMALR §3.2: masked words are replaced by one learned MASK feature.
        self.mask_embedding = nn.Parameter(torch.randn(universal_dim) * 0.02) if mask_token else None

    # -- what a family defines -------------------------------------------------
    def word_features(self, tokens: Tensor, langs: Tensor) -> Tensor:
        """``(S, T)`` token ids, ``(S,)`` languages → ``(S, T, universal_dim)``.

        Values at padding positions are never read."""
        raise NotImplementedError

    def universal_parameters(self) -> list[nn.Parameter]:
        """Parameters below the universal embedding (word features, language
        FCs): what MULE's LP stage trains, and what test time precomputes."""
        raise NotImplementedError

    # -- shared ---------------------------------------------------------------
    def universal_words(
        self, tokens: Tensor, lengths: Tensor, langs: Tensor | None, mask: Tensor | None = None
    ) -> Tensor:
        """Word features ``(S, T, U)`` with masked positions (``mask (S, T)`` bool)
        replaced by the MASK feature."""
        langs = check_langs(langs, tokens.shape[0], self.n_langs, f"{type(self).__name__}(langs)")
        return self.masked_words(self.word_features(tokens, langs), mask)

    def masked_words(self, words: Tensor, mask: Tensor | None) -> Tensor:
        """``(S, T, U)`` word features with the positions of ``mask (S, T)`` (None: none)
        replaced by the MASK feature."""
        if mask is None:
            return words
        if self.mask_embedding is None:
            raise ValueError(f"{type(self).__name__} has no MASK feature; build it with mask_token=True")
        return torch.where(mask.unsqueeze(-1), self.mask_embedding.to(words.dtype), words)

    def encode(
        self, tokens: Tensor, lengths: Tensor, langs: Tensor | None, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """(u, s): u ``(S, U)`` mean word feature in the universal space (not
        normalised), s ``(S, J)`` the unit-norm multimodal sentence embedding."""
        return self.encode_words(self.universal_words(tokens, lengths, langs, mask), lengths)

    def encode_words(self, words: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        """(u, s) of :meth:`encode` from word features ``(S, T, U)``."""
        return masked_mean(words, lengths), self.text(words, lengths)

    def encode_universal(
        self, tokens: Tensor, lengths: Tensor, langs: Tensor | None, mask: Tensor | None = None
    ) -> Tensor:
        """u alone ``(S, U)``, without running the GRU (LP pretraining)."""
        return masked_mean(self.universal_words(tokens, lengths, langs, mask), lengths)

    def embed_sentences(self, tokens: Tensor, lengths: Tensor, langs: Tensor | None = None) -> Tensor:
        """``(S, T), (S,), (S,) -> (S, J)``, unit norm."""
        return self.text(self.universal_words(tokens, lengths, langs), lengths)

    def embed_images(self, features: Tensor) -> Tensor:
        """``(B, image_dim) -> (B, J)``, unit norm."""
        return self.image(features)

    def language_logits(self, universal: Tensor, reversal_weight: float = 1.0) -> Tensor:
        """Language classifier on u behind gradient reversal: ``(S, U) -> (S, n_langs)``.

        The classifier's own weights get the plain gradient; u gets it
        multiplied by ``-reversal_weight`` (MULE eq. 4: W_lc minimises the
        cross-entropy, the language-specific parameters maximise it)."""
        return self.language_classifier(reverse_gradient(universal, reversal_weight))

    def parameter_counts(self) -> tuple[int, int]:
        """(train-time, test-time) parameters.

        Test time counts as SMALR §5 does: the language representations are
        precomputed (each word's universal feature is a lookup), so only the
        multimodal model remains: the text GRU + FC and the image branch.
        """
        train = count(self.parameters())
        return train, count(self.text.parameters()) + count(self.image.parameters())
