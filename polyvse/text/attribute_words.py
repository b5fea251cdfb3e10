"""How far apart a language's word vectors put the words of one attribute: the colours, the shapes.

A model that starts from word vectors in which "red" and "blue" are one vector has to learn the colours
from the captions alone (docs/learning.md, "Short queries"). The measure: each value's vector is the mean
of its tokens' vectors weighted by their counts in the captions, centred by the vocabulary's mean (a FastText table's rows share a large common
part: a vector's norm was 2.93 and the mean's 2.92, so uncentred cosines are all near 1); the attribute's
separation is the mean cosine over its values' pairs. 1: one vector for all; 0: as unrelated as two
random words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from polyvse.errors import InputError

ATTRIBUTE_COLUMNS: tuple[str, ...] = (
    "dataset",
    "lang",
    "attribute",
    "values",
    "mean_cosine",
    "min_cosine",
    "max_cosine",
)
"""The columns of rule attribute_words' ``results/{dataset}/attribute_words.tsv``."""


def value_vectors(
    vectors: np.ndarray,
    vocab: Sequence[str],
    tokens: Mapping[str, Sequence[str]],
    counts: Mapping[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Each value's centred vector: the mean over its tokens found in ``vocab`` of their rows of
    ``vectors`` ``(V, D)``, weighted by the tokens' ``counts`` when given (a word as the captions use it:
    Arabic's feminine singular "حمراء", which its non-human plurals take too, more than its rare dual), less
    the mean row. A value none of whose tokens is in ``vocab`` (with a count above 0) is left out."""
    if vectors.ndim != 2 or len(vectors) != len(vocab):
        raise ValueError(f"vectors {vectors.shape} do not match a vocabulary of {len(vocab)} tokens")
    row = {t: i for i, t in enumerate(vocab)}
    centre = vectors.mean(axis=0, dtype=np.float64)
    out = {}
    for value, words in tokens.items():
        found = [t for t in words if t in row and (counts is None or counts.get(t, 0) > 0)]
        if found:
            weights = np.asarray([1.0 if counts is None else counts[t] for t in found])
            mean = weights @ vectors[[row[t] for t in found]].astype(np.float64) / weights.sum()
            out[value] = mean - centre
    return out


def pairwise_cosines(by_value: Mapping[str, np.ndarray]) -> np.ndarray:
    """The cosines of every pair of the values' vectors (``n (n - 1) / 2``; a zero vector's are NaN)."""
    out = []
    for a, b in combinations(by_value.values(), 2):
        norm = float(np.linalg.norm(a) * np.linalg.norm(b))
        out.append(float(a @ b) / norm if norm > 0 else np.nan)
    return np.asarray(out, dtype=np.float64)


def attribute_separation(
    vectors: np.ndarray,
    vocab: Sequence[str],
    tokens: Mapping[str, Sequence[str]],
    counts: Mapping[str, int] | None = None,
) -> dict[str, float | int]:
    """``values`` found in the vocabulary, and the ``mean_cosine``, ``min_cosine`` and ``max_cosine`` of their
    centred vectors' pairs (:func:`value_vectors`; NaN with fewer than two values)."""
    by_value = value_vectors(vectors, vocab, tokens, counts)
    cosines = pairwise_cosines(by_value)
    if len(by_value) < 2 or np.isnan(cosines).all():
        return {"values": len(by_value), "mean_cosine": np.nan, "min_cosine": np.nan, "max_cosine": np.nan}
    return {
        "values": len(by_value),
        "mean_cosine": float(np.nanmean(cosines)),
        "min_cosine": float(np.nanmin(cosines)),
        "max_cosine": float(np.nanmax(cosines)),
    }


def read_attribute_words(path: str | Path) -> pd.DataFrame:
    """An ``attribute_words.tsv`` written by the workflow, its columns :data:`ATTRIBUTE_COLUMNS` checked."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "attribute words table not found")
    table = pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""])
    missing = [c for c in ATTRIBUTE_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(path, f"attribute words table: missing column(s) {', '.join(missing)}")
    for col in ATTRIBUTE_COLUMNS[3:]:
        if not pd.api.types.is_numeric_dtype(table[col]):
            raise InputError(path, f"attribute words table: column {col} is not numeric")
    return table.loc[:, list(ATTRIBUTE_COLUMNS)]


def attribute_words_markdown(table: pd.DataFrame) -> str:
    """Per dataset and language, the mean cosine (and its range) of the colour words' and the shape
    words' centred vectors: a Markdown table and its note."""
    attributes = list(dict.fromkeys(table["attribute"]))
    head = ["dataset", "lang", *(f"{a} words: mean cosine (min–max)" for a in attributes)]
    lines = [
        "**How far apart the FastText vectors put the world's words**",
        "",
        "| " + " | ".join(head) + " |",
        "|:--|:--|" + "--:|" * len(attributes),
    ]

    def cell(r: pd.DataFrame) -> str:
        if r.empty or pd.isna(r["mean_cosine"].iloc[0]):
            return "–"
        r = r.iloc[0]
        return f"{r['mean_cosine']:.2f} ({r['min_cosine']:.2f}–{r['max_cosine']:.2f}; {int(r['values'])} words)"

    for (dataset, lang), rows in table.groupby(["dataset", "lang"], sort=False):
        cells = [cell(rows[rows["attribute"] == a]) for a in attributes]
        lines.append("| " + " | ".join([str(dataset), str(lang), *cells]) + " |")
    note = (
        "The FastText table each language's word models start from (rule attribute_words). A value's vector is "
        "the mean of its words' vectors weighted by their counts in the training captions (every inflected "
        "form; for characters-segmented zh and ja, the characters no other value's word holds), less the "
        "vocabulary's mean vector; the cell is the mean "
        "cosine over the values' pairs: 1, one vector for every colour; 0, as unrelated as two random words."
    )
    return "\n".join(lines) + "\n\n" + note + "\n"
