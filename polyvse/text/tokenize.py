"""Per-language tokenisation.

Space-separated languages are lower-cased and split on whitespace with
punctuation removed. Chinese and Japanese are written without spaces; by
default they are segmented into characters (``segmenter="chars"``), which needs
no external package and is what MULE/SMALR-style models see for unsegmented
scripts when no segmenter is configured.
"""

from __future__ import annotations

import re
import unicodedata

UNSEGMENTED = frozenset({"zh", "ja"})
_PUNCT = re.compile(r"[^\w\s'\-]", flags=re.UNICODE)


class _PunctuationToSpace(dict):
    """A ``str.translate`` table, filled on first sight of each character:
    punctuation (P*) and symbols (S*) become a space, everything else stays.
    Combining marks (Devanagari, Arabic vowel signs) stay: they belong to words."""

    def __missing__(self, code: int) -> int | str:
        cat = unicodedata.category(chr(code))
        self[code] = " " if cat.startswith("P") or cat.startswith("S") else code
        return self[code]


_PUNCT_TABLE = _PunctuationToSpace()


def _strip_punct(text: str) -> str:
    return text.translate(_PUNCT_TABLE)


def tokenize(text: str, lang: str, segmenter: str = "chars") -> list[str]:
    """Split ``text`` of language ``lang`` into tokens.

    ``segmenter`` applies to zh/ja only: ``"chars"`` (one token per character),
    or ``"spaces"`` for text that is already segmented.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    text = _strip_punct(text)
    if lang in UNSEGMENTED:
        if segmenter == "chars":
            return [ch for ch in text if not ch.isspace()]
        if segmenter != "spaces":
            raise ValueError(f"unknown segmenter {segmenter!r} for {lang}: expected 'chars' or 'spaces'")
    return text.split()
