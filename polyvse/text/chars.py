"""Character vocabularies for character-level text encoders (LIWE, Wehrmann
et al. ICCV 2019, as SMALR Table 1/2(b) uses it).

One vocabulary is shared by all languages (LIWE is language-agnostic: the
same character embedding serves every script). Text is normalised as the word
tokeniser does (NFKC, lower case, punctuation removed, whitespace collapsed);
spaces between words are kept as a character, so the encoder sees word
boundaries. Index 0 is padding, 1 the unknown character.

:class:`CharVocabulary` has the ``encode(text, lang, max_len)``, ``langs``,
``len`` and ``state_dict`` of :class:`polyvse.text.vocab.Vocabulary`, so
:func:`polyvse.train.data.encode_captions` produces ``(S, T)`` character ids and
``(S,)`` lengths for it and the training batches keep their format.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import torch
from torch import Tensor

from polyvse.text.tokenize import tokenize

PAD = 0
UNK = 1


def normalise(text: str, lang: str, max_words: int | None = None) -> str:
    """The character sequence a model reads: tokenised words joined by one space
    (zh/ja keep their unsegmented runs), the first ``max_words`` of them when given."""
    words = tokenize(text, lang, segmenter="spaces")
    return " ".join(words[:max_words] if max_words else words)


class CharVocabulary:
    """Characters seen in training texts, most frequent first."""

    kind = "chars"

    def __init__(self, langs: Sequence[str], chars: Sequence[str]):
        self.langs = list(langs)
        self.itos: list[str] = ["<pad>", "<unk>", *chars]
        self.stoi: dict[str, int] = {c: i for i, c in enumerate(self.itos) if i > UNK}
        if len(self.stoi) != len(chars):
            raise ValueError("CharVocabulary: characters must be unique")

    @classmethod
    def from_texts(cls, texts: Iterable[tuple[str, str]], langs: Sequence[str], min_count: int = 1) -> "CharVocabulary":
        """Build from ``(text, lang)`` pairs; keep characters seen ``min_count`` times."""
        counts: Counter[str] = Counter()
        for text, lang in texts:
            counts.update(normalise(text, lang))
        kept = [c for c, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if n >= min_count]
        return cls(langs, kept)

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str, lang: str, max_len: int | None = None) -> list[int]:
        """Character ids of ``text``'s first ``max_len`` words (``text.max_len`` counts words for
        every family: cut to that many characters, a sentence of ~100 would keep its first few
        words); unseen characters map to ``<unk>``; at least one id."""
        if lang not in self.langs:
            raise KeyError(f"language {lang!r} is not in this vocabulary ({', '.join(self.langs)})")
        ids = [self.stoi.get(c, UNK) for c in normalise(text, lang, max_len)]
        return ids or [UNK]

    def encode_batch(
        self, texts: Sequence[str], langs: Sequence[str], max_len: int | None = None
    ) -> tuple[Tensor, Tensor]:
        """``S`` texts → ``(S, T)`` zero-padded ids and ``(S,)`` lengths."""
        ids = [self.encode(t, l, max_len) for t, l in zip(texts, langs)]
        lengths = torch.tensor([len(x) for x in ids], dtype=torch.long)
        tokens = torch.zeros(len(ids), int(lengths.max()) if ids else 1, dtype=torch.long)
        for i, x in enumerate(ids):
            tokens[i, : len(x)] = torch.tensor(x, dtype=torch.long)
        return tokens, lengths

    def state_dict(self) -> dict:
        return {"kind": self.kind, "langs": self.langs, "chars": self.itos[UNK + 1 :]}

    @classmethod
    def from_state_dict(cls, state: dict) -> "CharVocabulary":
        return cls(state["langs"], state["chars"])
