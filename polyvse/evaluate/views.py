"""The views of a retrieval evaluation and their names in the tables, apart from the models that embed
them, so that the table rules read them without loading torch (two seconds of start-up per job).

A view is the image or one language's speech (or text, for MLMME); a pair of speech views is named as
in the thesis tables (§3.1.3):
``E&I``, ``H&I``, ``J&I`` (a language with the image), then ``H&E``, ``J&E``, ``J&H`` (cross-lingual).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from polyvse.evaluate.retrieval import KS

__all__ = ["IMAGE_VIEW", "ORDERED_COLUMNS", "VIEW_LETTERS", "ordered_from_view_pairs", "view_letter", "view_pairs"]

IMAGE_VIEW = "image"
VIEW_LETTERS: dict[str, str] = {IMAGE_VIEW: "I", "en": "E", "hi": "H", "ja": "J"}


def view_letter(view: str) -> str:
    """``I`` for the image, ``E``/``H``/``J`` for en/hi/ja (the thesis' names), else the code in capitals."""
    return VIEW_LETTERS.get(view, view.upper())


def view_pairs(langs: Sequence[str]) -> list[tuple[str, str, str, str]]:
    """``(name, view_a, view_b, kind)`` in the thesis' column order: every language with the
    image (kind ``image``), then each later language with each earlier one (kind ``cross``)."""
    pairs = [(f"{view_letter(l)}&I", l, IMAGE_VIEW, "image") for l in langs]
    for i, earlier in enumerate(langs):
        for later in langs[i + 1 :]:
            pairs.append((f"{view_letter(later)}&{view_letter(earlier)}", later, earlier, "cross"))
    return pairs


ORDERED_COLUMNS: tuple[str, ...] = ("query", "target", "r1", "r5", "r10", "mr", "medr", "n")
"""Columns of an any-to-any evaluation (:func:`polyvse.evaluate.speech.ordered_pair_retrieval`)."""


def ordered_from_view_pairs(table: pd.DataFrame, view_names: Mapping[str, str], ks: Sequence[int] = KS) -> pd.DataFrame:
    """A thesis evaluation (:func:`polyvse.evaluate.speech.pair_retrieval`, one row per unordered pair with both
    directions) as ordered rows of :data:`ORDERED_COLUMNS`, its views renamed by ``view_names``
    (e.g. ``{"image": "image", "en": "speech-en"}``): A → B reads the ``_ab`` columns, B → A the
    ``_ba`` ones."""
    rows = []
    for _, r in table.iterrows():
        for query, target, d in ((r["view_a"], r["view_b"], "ab"), (r["view_b"], r["view_a"], "ba")):
            recalls = {k: float(r[f"r{k}_{d}"]) for k in ks}
            rows.append(
                {
                    "query": view_names[query],
                    "target": view_names[target],
                    **{f"r{k}": recalls[k] for k in ks},
                    "mr": float(np.mean(list(recalls.values()))),
                    "medr": float(r[f"medr_{d}"]),
                    "n": int(r["n"]),
                }
            )
    return pd.DataFrame(rows, columns=[*ORDERED_COLUMNS[:2], *(f"r{k}" for k in ks), *ORDERED_COLUMNS[-3:]])
