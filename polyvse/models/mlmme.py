"""MLMME: multilingual multi-modal embeddings (Calixto et al. 2017, §2 and §4).

- Text: one GRU sentence encoder per language, each with its own word
  embeddings trained with the model; "our encoder RNNs for different languages
  share no parameters". The sentence vector is the last annotation vector
  h_{N_k}, the state after the last *real* token (padding is never read).
- Image: ``d = W_I · q`` for a CNN feature q (VGG19 FC7 in the paper).
- Both are L2-normalised into one joint space; similarity is the dot product.
- §4: word embeddings 620-D, GRU 1024-D, joint space 2048-D, dropout 0.5 "in
  both text and image representations, which are in turn mapped onto" the joint
  space. The 1024-D state therefore reaches the 2048-D space through a linear
  map (per language, unshared); dropout acts on h and q before the maps. Like
  ``W_I · q``, the maps have no bias.
- §4 initialisation: non-recurrent matrices ~ N(0, 0.01) (read as the standard
  deviation, as in Kiros et al.'s code), recurrent matrices random orthogonal,
  biases zero.

With one language this is the VSE baseline of Kiros et al. (2014).

The model follows the family interface of :mod:`polyvse.models`
(``embed_images``, ``embed_sentences(tokens, lengths, langs)``,
``parameter_counts``). Token ids may be local to a language (0 = padding) or
ids of the joint :class:`polyvse.text.vocab.Vocabulary`; :meth:`MLMME.from_vocabulary`
records each language's offset into the joint index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

from polyvse.errors import InputError

if TYPE_CHECKING:
    from polyvse.text.vocab import Vocabulary

PAD = 0


def l2_normalize(x: Tensor) -> Tensor:
    return nn.functional.normalize(x, dim=-1)


def check_lengths(lengths: Tensor, max_len: int, where: str) -> Tensor:
    """Lengths as a CPU int64 tensor with 1 ≤ length ≤ T, or an InputError."""
    lengths = lengths.detach().to("cpu", torch.int64).reshape(-1)
    if lengths.numel() and (int(lengths.min()) < 1 or int(lengths.max()) > max_len):
        raise InputError(
            where, f"sentence lengths must lie in [1, {max_len}], got {int(lengths.min())}..{int(lengths.max())}"
        )
    return lengths


def init_paper_weights(module: nn.Module, std: float = 0.01) -> None:
    """Calixto et al. §4: non-recurrent matrices ~ N(0, std²), recurrent
    matrices random orthogonal (one block per GRU gate), biases zero. Keeps a
    padding row of an embedding at zero."""
    for sub in module.modules():
        if isinstance(sub, nn.GRU):
            for name, p in sub.named_parameters():
                if name.startswith("weight_hh"):
                    for block in p.data.chunk(3, dim=0):  # reset, update, new gates
                        nn.init.orthogonal_(block)
                elif name.startswith("weight_ih"):
                    nn.init.normal_(p, 0.0, std)
                else:
                    nn.init.zeros_(p)
        elif isinstance(sub, nn.Linear):
            nn.init.normal_(sub.weight, 0.0, std)
            if sub.bias is not None:
                nn.init.zeros_(sub.bias)
        elif isinstance(sub, nn.Embedding):
            nn.init.normal_(sub.weight, 0.0, std)
            if sub.padding_idx is not None:
                with torch.no_grad():
                    sub.weight[sub.padding_idx].zero_()


class RecurrentEncoder(nn.Module):
    """A GRU over embedded tokens; its state after the last valid token, through
    dropout and a linear map into the joint space.

    ``(B, T, input_dim)`` with lengths ``(B,)`` → ``(B, joint_dim)`` (not normalised).
    ``joint_dim=None`` skips the map (the state is the sentence vector).
    """

    def __init__(self, input_dim: int, hidden_dim: int, joint_dim: int | None, dropout: float):
        super().__init__()
        self.gru = nn.GRU(input_dim, hidden_dim, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.project = nn.Linear(hidden_dim, joint_dim, bias=False) if joint_dim is not None else None

    def last_state(self, inputs: Tensor, lengths: Tensor) -> Tensor:
        """h_N: the GRU state after each sequence's last valid step, ``(B, hidden)``.

        Packing stops the recurrence at each length, so padding never enters.
        """
        lengths = check_lengths(lengths, inputs.shape[1], "RecurrentEncoder(lengths)")
        packed = nn.utils.rnn.pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
        _, h_n = self.gru(packed)  # (1, B, H), in the input order
        return h_n[-1]

    def forward(self, inputs: Tensor, lengths: Tensor) -> Tensor:
        h = self.dropout(self.last_state(inputs, lengths))
        return self.project(h) if self.project is not None else h


class SentenceEncoder(nn.Module):
    """One language's text branch: word embeddings → :class:`RecurrentEncoder` → unit norm.

    tokens ``(B, T)`` local ids (0 = padding), lengths ``(B,)`` → ``(B, joint_dim)``.
    """

    def __init__(self, vocab_size: int, word_dim: int, hidden_dim: int, joint_dim: int | None, dropout: float):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, word_dim, padding_idx=PAD)
        self.encoder = RecurrentEncoder(word_dim, hidden_dim, joint_dim, dropout)

    def forward(self, tokens: Tensor, lengths: Tensor) -> Tensor:
        return l2_normalize(self.encoder(self.embed(tokens), lengths))


class ImageEncoder(nn.Module):
    """``d = W_I · q`` after dropout on q, unit norm: ``(B, image_dim) → (B, joint_dim)``."""

    def __init__(self, image_dim: int, joint_dim: int, dropout: float):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.project = nn.Linear(image_dim, joint_dim, bias=False)  # W_I

    def forward(self, features: Tensor) -> Tensor:
        return l2_normalize(self.project(self.dropout(features)))


@dataclass
class MLMMEConfig:
    """Sizes of an MLMME model; the defaults are the paper's (§4).

    vocab_sizes: language → number of local ids (with padding 0), in the
    order of ``embed_sentences``' language indices; token_offsets: language →
    offset subtracted from joint-vocabulary ids (absent: ids are local).
    """

    vocab_sizes: dict[str, int]
    image_dim: int
    word_dim: int = 620
    gru_hidden: int = 1024
    joint_dim: int = 2048
    dropout: float = 0.5
    init_std: float = 0.01
    token_offsets: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def vocabulary_ranges(itos: Sequence[tuple[str, str]], langs: Sequence[str]) -> tuple[dict[str, int], dict[str, int]]:
    """Local sizes and offsets of each language in a joint (language, token) index.

    itos: the joint index, entry 0 padding, each language's entries contiguous
    (as :class:`polyvse.text.vocab.Vocabulary` builds it). Joint id g of language
    l becomes local id ``g − offset[l]`` (its first entry → 1; 0 stays padding).
    """
    first: dict[str, int] = {}
    count: dict[str, int] = {}
    for i, (lang, _) in enumerate(itos[1:], start=1):
        first.setdefault(lang, i)
        count[lang] = count.get(lang, 0) + 1
        if i - first[lang] + 1 != count[lang]:
            raise InputError("vocabulary", f"the entries of language {lang!r} are not contiguous (index {i})")
    missing = [lang for lang in langs if lang not in first]
    if missing:
        raise InputError("vocabulary", f"no entries for language(s) {', '.join(missing)}")
    return ({lang: count[lang] + 1 for lang in langs}, {lang: first[lang] - 1 for lang in langs})


class MLMME(nn.Module):
    """One :class:`SentenceEncoder` per language and one :class:`ImageEncoder`."""

    family = "mlmme"

    def __init__(self, config: MLMMEConfig):
        super().__init__()
        if not config.vocab_sizes:
            raise InputError("MLMMEConfig(vocab_sizes)", "at least one language is needed")
        self.config = config
        self.languages: list[str] = list(config.vocab_sizes)
        self.encoders = nn.ModuleDict(
            {
                lang: SentenceEncoder(size, config.word_dim, config.gru_hidden, config.joint_dim, config.dropout)
                for lang, size in config.vocab_sizes.items()
            }
        )
        self.image = ImageEncoder(config.image_dim, config.joint_dim, config.dropout)
        init_paper_weights(self, config.init_std)

    @classmethod
    def from_vocabulary(cls, vocab: Vocabulary, image_dim: int, langs: Sequence[str] | None = None, **sizes) -> MLMME:
        """An MLMME over the languages of a joint :class:`~polyvse.text.vocab.Vocabulary`
        (or the subset ``langs``, e.g. one language for VSE), reading its ids."""
        langs = list(vocab.langs if langs is None else langs)
        vocab_sizes, offsets = vocabulary_ranges(vocab.itos, langs)
        return cls(MLMMEConfig(vocab_sizes=vocab_sizes, image_dim=image_dim, token_offsets=offsets, **sizes))

    def local_ids(self, lang: str, tokens: Tensor) -> Tensor:
        """Joint ids → this language's local ids (padding stays 0); checks the range."""
        offset = self.config.token_offsets.get(lang, 0)
        local = torch.where(tokens == PAD, tokens, tokens - offset)
        size = self.config.vocab_sizes[lang]
        if local.numel() and (int(local.min()) < 0 or int(local.max()) >= size):
            raise InputError(
                f"MLMME.encode({lang})",
                f"token ids outside {lang}'s vocabulary ({offset + 1}..{offset + size - 1} or padding {PAD})",
            )
        return local

    def encode(self, lang: str, tokens: Tensor, lengths: Tensor) -> Tensor:
        """Sentences of one language: ``(B, T), (B,) → (B, joint_dim)``, unit norm."""
        if lang not in self.encoders:
            raise InputError("MLMME.encode(lang)", f"no encoder for {lang!r} (has {', '.join(self.languages)})")
        return self.encoders[lang](self.local_ids(lang, tokens), lengths)

    def embed_images(self, features: Tensor) -> Tensor:
        """``(B, image_dim) → (B, joint_dim)``, unit norm."""
        return self.image(features)

    def embed_sentences(self, tokens: Tensor, lengths: Tensor, langs: Tensor | None = None) -> Tensor:
        """Sentences of mixed languages: tokens ``(S, T)``, lengths ``(S,)``, langs
        ``(S,)`` indices into :attr:`languages` (None: all in the only language).
        Returns ``(S, joint_dim)``, unit norm, in input order."""
        if langs is None:
            if len(self.languages) != 1:
                raise InputError("MLMME.embed_sentences(langs)", "langs is required with several languages")
            return self.encode(self.languages[0], tokens, lengths)
        if langs.numel() and (int(langs.min()) < 0 or int(langs.max()) >= len(self.languages)):
            raise InputError("MLMME.embed_sentences(langs)", f"language index outside 0..{len(self.languages) - 1}")
        out = None
        for i, lang in enumerate(self.languages):
            rows = (langs == i).nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            part = self.encode(lang, tokens[rows], lengths[rows.to(lengths.device)])
            out = part.new_zeros(len(tokens), part.shape[1]) if out is None else out
            out = out.index_copy(0, rows.to(part.device), part)
        if out is None:
            return tokens.new_zeros((0, self.config.joint_dim), dtype=torch.get_default_dtype())
        return out

    def forward(
        self, features: Tensor, sentences: Mapping[str, tuple[Tensor, Tensor]]
    ) -> tuple[Tensor, dict[str, Tensor]]:
        """One tuple per row: images ``(B, image_dim)`` and lang → (tokens ``(B, T)``,
        lengths ``(B,)``) → images ``(B, J)`` and lang → ``(B, J)``, the inputs of
        :func:`polyvse.losses.multilingual_ranking.multilingual_ranking_loss`."""
        return self.embed_images(features), {lang: self.encode(lang, t, n) for lang, (t, n) in sentences.items()}

    def parameter_counts(self) -> tuple[int, int]:
        """(train-time, test-time) parameters; test time leaves out the word
        embedding tables (a lookup of precomputed vectors, as SMALR §5 counts)."""
        train = sum(p.numel() for p in self.parameters() if p.requires_grad)
        tables = sum(enc.embed.weight.numel() for enc in self.encoders.values())
        return train, train - tables
