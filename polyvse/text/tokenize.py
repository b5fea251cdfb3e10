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


def _strip_punct(text: str) -> str:
    # Keep combining marks (Devanagari, Arabic vowel signs): they belong to words.
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat.startswith("P") or cat.startswith("S"):
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


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
