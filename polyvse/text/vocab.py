"""Word vocabularies: per-language counts from the training split, and the
joint index a multilingual model embeds.

Every language keeps its own words (MULE: "a unique word embedding for every
word in every language"), so the joint index is over (language, token) pairs,
with one padding index and one unknown-word index per language.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from polyvse.errors import InputError
from polyvse.text.tokenize import tokenize

PAD = 0


def count_tokens(texts: Iterable[str], lang: str, segmenter: str = "chars") -> Counter[str]:
    """Token counts of ``texts`` in language ``lang``."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(tokenize(text, lang, segmenter))
    return counts


def training_texts(captions: pd.DataFrame, lang: str, where: str = "captions") -> pd.Series:
    """The texts of ``lang``'s training-split captions, in table order.

    Vocabularies and word vectors are built from these only, so that no
    validation or test word leaks into what a model is given. ``where`` names
    the captions file in the error raised when there are none.
    """
    train = captions[(captions["split"] == "train") & (captions["lang"] == lang)]
    if train.empty:
        raise InputError(where, f"no training captions in language {lang!r}")
    return train["text"]


def training_counts(
    captions: pd.DataFrame, lang: str, segmenter: str = "chars", where: str = "captions"
) -> Counter[str]:
    """Token counts of ``lang``'s training-split captions (the ``vocab`` rule's counts)."""
    return count_tokens(training_texts(captions, lang, where), lang, segmenter)


def counts_frame(counts: Mapping[str, int]) -> pd.DataFrame:
    """A vocabulary table ``token, count``, most frequent first (ties by token)."""
    df = pd.DataFrame({"token": list(counts.keys()), "count": list(counts.values())})
    return df.sort_values(["count", "token"], ascending=[False, True], kind="stable").reset_index(drop=True)


def read_counts(path: str | Path) -> dict[str, int]:
    """Read a ``token<TAB>count`` vocabulary file written by :func:`counts_frame`."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "vocabulary file is missing")
    df = pd.read_csv(path, sep="\t", dtype={"token": str, "count": "int64"}, keep_default_na=False, quoting=3)
    if list(df.columns) != ["token", "count"]:
        raise InputError(path, f"expected columns token, count; found {list(df.columns)}", line=1)
    return dict(zip(df["token"], df["count"]))


class Vocabulary:
    """The joint (language, token) index of a multilingual model.

    Index 0 is padding; each language has its own unknown-word index.
    """

    def __init__(self, langs: Sequence[str], tokens: Mapping[str, Sequence[str]], segmenter: str = "chars"):
        self.langs = list(langs)
        self.segmenter = segmenter
        self.itos: list[tuple[str, str]] = [("", "<pad>")]
        self.stoi: dict[tuple[str, str], int] = {}
        for lang in self.langs:
            for tok in ["<unk>", *tokens.get(lang, [])]:
                self.stoi[(lang, tok)] = len(self.itos)
                self.itos.append((lang, tok))

    @classmethod
    def from_counts(
        cls, counts: Mapping[str, Mapping[str, int]], min_count: int = 1, segmenter: str = "chars"
    ) -> "Vocabulary":
        """Keep tokens seen at least ``min_count`` times in training, per language."""
        kept = {
            lang: [t for t, c in sorted(c_.items(), key=lambda kv: (-kv[1], kv[0])) if c >= min_count]
            for lang, c_ in counts.items()
        }
        return cls(list(counts.keys()), kept, segmenter)

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str, lang: str, max_len: int | None = None) -> list[int]:
        """Token ids of ``text``; unknown words map to the language's ``<unk>``."""
        if lang not in self.langs:
            raise KeyError(f"language {lang!r} is not in this vocabulary ({', '.join(self.langs)})")
        unk = self.stoi[(lang, "<unk>")]
        ids = [self.stoi.get((lang, t), unk) for t in tokenize(text, lang, self.segmenter)]
        ids = ids[:max_len] if max_len else ids
        return ids or [unk]  # an empty sentence still has one step for the GRU

    def language_sizes(self) -> dict[str, int]:
        """Number of entries (with ``<unk>``) per language."""
        return dict(Counter(lang for lang, _ in self.itos[1:]))

    def state_dict(self) -> dict:
        return {
            "langs": self.langs,
            "segmenter": self.segmenter,
            "tokens": {lang: [t for (l, t) in self.itos[1:] if l == lang and t != "<unk>"] for lang in self.langs},
        }

    @classmethod
    def from_state_dict(cls, state: dict) -> "Vocabulary":
        return cls(state["langs"], state["tokens"], state["segmenter"])
