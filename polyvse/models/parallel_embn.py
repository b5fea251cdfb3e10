"""PARALLEL-EmbN (MULE "Model Architecture", after Gella et al. 2017): EmbN with
one shared image branch and a separate language branch per language
(word embeddings → GRU, last valid step → FC → L2); "only a single image
representation is trained, but it contains separate language branches".

Token ids are those of the joint :class:`~polyvse.text.vocab.Vocabulary`,
whose entries are contiguous per language (``<pad>``, then each language's
``<unk>`` and words in order). Each branch embeds only its own language's
words, so its table has ``language_sizes[l] + 1`` rows (with padding 0) and
the parameter count grows with each language's vocabulary, as in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

from polyvse.models.embn import BranchSizes, GRUSentenceEncoder, ImageBranch
from polyvse.models.mule import init_word_embeddings
from polyvse.models.universal import check_langs, count

if TYPE_CHECKING:
    from polyvse.text.vocab import Vocabulary


@dataclass
class ParallelEmbNConfig(BranchSizes):
    """language_sizes: entries (with ``<unk>``) of each language in the joint
    vocabulary, in the order of its languages (``Vocabulary.language_sizes``)."""

    vocab_size: int
    image_dim: int
    language_sizes: list[int] = field(default_factory=list)
    word_dim: int = 300


def language_offsets(vocab: "Vocabulary") -> list[int]:
    """Joint index of each language's first entry (its ``<unk>``); checks that
    the entries of each language are contiguous."""
    offsets = []
    for lang in vocab.langs:
        ids = [i for i, (l, _) in enumerate(vocab.itos) if l == lang]
        if ids != list(range(ids[0], ids[0] + len(ids))):
            raise ValueError(f"vocabulary entries of {lang!r} are not contiguous")
        offsets.append(ids[0])
    return offsets


class ParallelEmbN(nn.Module):
    family = "parallel_embn"

    def __init__(self, config: ParallelEmbNConfig, word_vectors: Tensor | None = None):
        """``word_vectors``: optional ``(vocab_size, word_dim)`` over the joint
        vocabulary; each branch takes its language's rows."""
        super().__init__()
        if not config.language_sizes or sum(config.language_sizes) + 1 != config.vocab_size:
            raise ValueError(
                f"ParallelEmbNConfig: language_sizes {config.language_sizes} must sum to "
                f"vocab_size - 1 = {config.vocab_size - 1}"
            )
        self.config = config
        starts = torch.tensor([1] + config.language_sizes[:-1]).cumsum(0)
        self.register_buffer("offsets", starts, persistent=False)
        self.word_embeddings = nn.ModuleList()
        for lang, size in enumerate(config.language_sizes):
            table = nn.Embedding(size + 1, config.word_dim, padding_idx=0)
            rows = None
            if word_vectors is not None:
                if tuple(word_vectors.shape) != (config.vocab_size, config.word_dim):
                    raise ValueError(
                        f"ParallelEmbN(word_vectors): shape {tuple(word_vectors.shape)}, expected "
                        f"({config.vocab_size}, {config.word_dim})"
                    )
                start = int(starts[lang])
                rows = torch.cat([word_vectors.new_zeros(1, config.word_dim), word_vectors[start : start + size]])
            init_word_embeddings(table, rows, "ParallelEmbN(word_vectors)")
            self.word_embeddings.append(table)
        self.text = nn.ModuleList(
            GRUSentenceEncoder(config.word_dim, config.gru_hidden, config.joint_dim, config.dropout)
            for _ in config.language_sizes
        )
        self.image = ImageBranch(config.image_dim, config.image_hidden, config.joint_dim, config.dropout)

    @classmethod
    def from_vocabulary(
        cls, vocab: "Vocabulary", image_dim: int, word_vectors: Tensor | None = None, **options
    ) -> "ParallelEmbN":
        sizes = vocab.language_sizes()
        offsets = language_offsets(vocab)
        expected = [1 + sum(sizes[l] for l in vocab.langs[:i]) for i in range(len(vocab.langs))]
        if offsets != expected:
            raise ValueError("vocabulary languages are not laid out in the order of vocab.langs")
        return cls(
            ParallelEmbNConfig(
                vocab_size=len(vocab), image_dim=image_dim, language_sizes=[sizes[l] for l in vocab.langs], **options
            ),
            word_vectors,
        )

    def embed_images(self, features: Tensor) -> Tensor:
        return self.image(features)

    def embed_sentences(self, tokens: Tensor, lengths: Tensor, langs: Tensor | None = None) -> Tensor:
        """tokens ``(S, T)`` joint ids, lengths ``(S,)``, langs ``(S,)`` → ``(S, J)``."""
        n_langs = len(self.config.language_sizes)
        langs = check_langs(langs, tokens.shape[0], n_langs, "ParallelEmbN(langs)")
        out = None
        for lang in torch.unique(langs).tolist():
            rows = (langs == lang).nonzero(as_tuple=True)[0]
            tok = tokens[rows]
            local = torch.where(tok > 0, tok - self.offsets[lang] + 1, torch.zeros_like(tok))
            if int(local.min()) < 0 or int(local.max()) > self.config.language_sizes[lang]:
                raise ValueError(f"ParallelEmbN: sentences of language {lang} hold words of another language")
            emb = self.text[lang](self.word_embeddings[lang](local), lengths[rows.to(lengths.device)])
            if out is None:
                out = emb.new_zeros(tokens.shape[0], emb.shape[1])
            out[rows] = emb
        if out is None:  # an empty batch
            out = tokens.new_zeros(0, self.config.joint_dim, dtype=torch.float)
        return out

    def parameter_counts(self) -> tuple[int, int]:
        """(train-time, test-time); test time treats the word tables as lookups (as EmbN does)."""
        train = count(self.parameters())
        return train, train - count(self.word_embeddings.parameters())
