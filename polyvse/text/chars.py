"""Character vocabularies for LIWE's character-based word embeddings (Wehrmann et al. ICCV 2019, as
SMALR Tables 1–2(b) use it).

One vocabulary is shared by all languages (LIWE is language-agnostic: the same character embedding
serves every script). A sentence is split into words as the word families split it
(:func:`polyvse.text.tokenize.tokenize`: NFKC, lower case, punctuation removed; zh and ja by the
``segmenter``), and each word is read from its characters: LIWE builds a word's embedding from its
first ``word_chars`` characters and runs its GRU over the words. Index 0 is padding, 1 the unknown
character.

:class:`CharVocabulary` has the ``encode(text, lang, max_len)``, ``langs``, ``len`` and
``state_dict`` of :class:`polyvse.text.vocab.Vocabulary`, so :func:`polyvse.train.data.encode_captions`
produces its ``(S, T)`` ids and ``(S,)`` lengths and the training batches keep their format: a
sentence's ids are its words one after the other, each in ``word_chars`` slots (its characters, then
padding), so that ``T`` and the lengths are multiples of ``word_chars`` and a model reads the words
as ``(S, T / word_chars, word_chars)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import torch
from torch import Tensor

from polyvse.text.tokenize import tokenize

PAD = 0
UNK = 1
WORD_CHARS = 26
"""Characters of a word LIWE reads (its public code's word layout); longer words keep their first ones."""


class CharVocabulary:
    """Characters seen in training words, most frequent first; sentences encoded word by word."""

    kind = "chars"

    def __init__(
        self, langs: Sequence[str], chars: Sequence[str], word_chars: int = WORD_CHARS, segmenter: str = "chars"
    ):
        if word_chars < 1:
            raise ValueError(f"CharVocabulary: word_chars must be at least 1, got {word_chars}")
        self.langs = list(langs)
        self.itos: list[str] = ["<pad>", "<unk>", *chars]
        self.stoi: dict[str, int] = {c: i for i, c in enumerate(self.itos) if i > UNK}
        if len(self.stoi) != len(chars):
            raise ValueError("CharVocabulary: characters must be unique")
        self.word_chars = int(word_chars)
        self.segmenter = segmenter
        self._word_ids: dict[str, list[int]] = {}  # a word's slots, computed once: words repeat

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[tuple[str, str]],
        langs: Sequence[str],
        min_count: int = 1,
        word_chars: int = WORD_CHARS,
        segmenter: str = "chars",
    ) -> "CharVocabulary":
        """Build from ``(text, lang)`` pairs; keep characters seen ``min_count`` times."""
        words: Counter[str] = Counter()
        for text, lang in texts:
            words.update(tokenize(text, lang, segmenter))
        counts: Counter[str] = Counter()
        for word, n in words.items():  # each distinct word's characters, as often as the word occurs
            for c in word:
                counts[c] += n
        kept = [c for c, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if n >= min_count]
        return cls(langs, kept, word_chars, segmenter)

    def __len__(self) -> int:
        return len(self.itos)

    def words(self, text: str, lang: str, max_len: int | None = None) -> list[str]:
        """The words of ``text`` a model reads, the first ``max_len`` of them (``text.max_len`` counts words
        for every family)."""
        if lang not in self.langs:
            raise KeyError(f"language {lang!r} is not in this vocabulary ({', '.join(self.langs)})")
        words = tokenize(text, lang, self.segmenter)
        return words[:max_len] if max_len else words

    def encode(self, text: str, lang: str, max_len: int | None = None) -> list[int]:
        """``word_chars`` ids a word of ``text`` (its first ``max_len`` words): the word's first
        ``word_chars`` characters, unseen ones as ``<unk>``, then padding. A text without a word reads as
        one unknown word."""
        ids: list[int] = []
        for word in self.words(text, lang, max_len) or ["\0"]:
            slots = self._word_ids.get(word)
            if slots is None:
                chars = [self.stoi.get(c, UNK) for c in word[: self.word_chars]]
                slots = self._word_ids[word] = chars + [PAD] * (self.word_chars - len(chars))
            ids.extend(slots)
        return ids

    def encode_batch(
        self, texts: Sequence[str], langs: Sequence[str], max_len: int | None = None
    ) -> tuple[Tensor, Tensor]:
        """``S`` texts → ``(S, T)`` zero-padded ids and ``(S,)`` lengths (multiples of ``word_chars``)."""
        ids = [self.encode(t, l, max_len) for t, l in zip(texts, langs)]
        lengths = torch.tensor([len(x) for x in ids], dtype=torch.long)
        tokens = torch.zeros(len(ids), int(lengths.max()) if ids else self.word_chars, dtype=torch.long)
        for i, x in enumerate(ids):
            tokens[i, : len(x)] = torch.tensor(x, dtype=torch.long)
        return tokens, lengths

    def state_dict(self) -> dict:
        return {
            "kind": self.kind,
            "langs": self.langs,
            "chars": self.itos[UNK + 1 :],
            "word_chars": self.word_chars,
            "segmenter": self.segmenter,
        }

    @classmethod
    def from_state_dict(cls, state: dict) -> "CharVocabulary":
        return cls(state["langs"], state["chars"], state["word_chars"], state["segmenter"])
