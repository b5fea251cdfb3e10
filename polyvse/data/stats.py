"""Vocabulary statistics of a dataset's human captions: how long-tailed it is.

SMALR §1 motivates the hybrid embedding with real caption vocabularies being large and
long-tailed (most types seen a handful of times), and §3.1 keeps language-specific
embeddings for the K = 5000 most frequent words of each language. These statistics say
how close a dataset (the synthetic ones above all) comes to real Multi30K on exactly
that: per language, on the human training captions (``origin == "human"``,
``split == "train"``) of the canonical captions table (:mod:`polyvse.data.tables`),

* ``captions``, ``train_tokens``, ``types``;
* ``hapax_share``: share of types seen once; ``at_most_2_share``: seen once or twice;
* ``test_oov_rate``: share of the human *test* tokens whose type is not a training type
  (NaN without test captions);
* ``rank_freq_slope``: least-squares slope of log10 frequency against log10 rank over
  ranks 10–5000 (as many as exist; Zipf's law gives about −1); NaN when fewer than
  :data:`MIN_SLOPE_RANKS` ranks fall in that window, i.e. under 29 types;
* ``top5000_token_share``: share of the training tokens whose type is among the 5,000
  most frequent (SMALR §3.1's K; 1 when there are fewer types).

Tokens are lowercase ``\\w+`` runs (``re.findall(r"\\w+", text.lower())``), the
tokenisation the Multi30K reference numbers (``docs/multi30k_stats.tsv``) use, not the
models' :func:`polyvse.text.tokenize.tokenize`. Two consequences: Chinese and Japanese
have no spaces, so a "word" token is a whole run of characters between punctuation; for
them a second row (``unit == "char"``) counts every character of those runs as a
token. And Python's ``\\w`` excludes combining marks, which would split Devanagari (hi)
words at every vowel sign and virama; for the languages of :data:`MARK_LANGS` a token is
therefore a run of word characters *and* combining marks (:func:`words` with
``marks=True``), a whole word. Every other language keeps the plain ``\\w+`` runs.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd

from polyvse.errors import InputError
from polyvse.text.tokenize import UNSEGMENTED

UNITS: tuple[str, ...] = ("word", "char")
SLOPE_RANKS: tuple[int, int] = (10, 5000)  # first and last rank of the fitted window, 1-based, inclusive
MIN_SLOPE_RANKS = 20  # fewer ranks in the window: no slope (NaN), a fit through a handful of points says nothing
TOP_TYPES = 5000  # SMALR §3.1: K = 5000 language-specific words
# Languages whose script needs combining marks inside words, which \w+ splits at: their tokens keep the marks.
MARK_LANGS: frozenset[str] = frozenset({"hi"})

STATS_COLUMNS: tuple[str, ...] = (
    "dataset",
    "lang",
    "unit",
    "captions",
    "train_tokens",
    "types",
    "hapax_share",
    "at_most_2_share",
    "test_oov_rate",
    "rank_freq_slope",
    "top5000_token_share",
)
_COUNT_COLUMNS = ("captions", "train_tokens", "types")
_WORD = re.compile(r"\w+")


def _mark_class() -> str:
    """The combining marks (categories Mn, Mc, Me) of the Basic Multilingual Plane as a regex class body."""
    ranges: list[list[int]] = []
    for code in range(0x10000):
        if unicodedata.category(chr(code)).startswith("M"):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    return "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges)


_WORD_WITH_MARKS = re.compile(rf"(?:\w|[{_mark_class()}])+")


def words(text: str, marks: bool = False) -> list[str]:
    """Lowercase ``\\w+`` runs of ``text``: ``"A dog's ball." -> ['a', 'dog', 's', 'ball']``.

    ``marks``: runs of word characters and combining marks, so that a Devanagari word
    (``"हैं"``) is one token, not its consonants alone.
    """
    return (_WORD_WITH_MARKS if marks else _WORD).findall(text.lower())


def characters(text: str) -> list[str]:
    """Every character of the lowercase ``\\w+`` runs of ``text`` (punctuation and spaces dropped)."""
    return [ch for run in words(text) for ch in run]


def _splitter(unit: str, marks: bool = False) -> Callable[[str], list[str]]:
    if unit not in UNITS:
        raise ValueError(f"unit {unit!r}: expected one of {', '.join(UNITS)}")
    if unit == "char":
        return characters
    return (lambda text: words(text, marks=True)) if marks else words


def count_tokens(texts: Iterable[str], unit: str = "word", marks: bool = False) -> Counter[str]:
    """Token frequencies of ``texts``, tokens being :func:`words` (with combining marks when ``marks``)
    or (``unit="char"``) :func:`characters`."""
    split = _splitter(unit, marks)
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(split(text))
    return counts


def _descending(frequencies: Mapping[str, float] | Sequence[float]) -> np.ndarray:
    values = frequencies.values() if isinstance(frequencies, Mapping) else frequencies
    freq = np.sort(np.asarray(list(values), dtype=float))[::-1]
    if freq.size and not freq[-1] > 0:
        raise ValueError(f"frequencies must be positive, got {freq[-1]}")
    return freq


def rank_frequency_slope(
    frequencies: Mapping[str, float] | Sequence[float],
    first: int = SLOPE_RANKS[0],
    last: int = SLOPE_RANKS[1],
    min_ranks: int = MIN_SLOPE_RANKS,
) -> float:
    """Least-squares slope of log10 frequency against log10 rank over ranks ``first..last``.

    ``frequencies``: one positive number per type (a Counter, or any sequence; sorted here,
    rank 1 = most frequent). The window is cut at the number of types; with fewer than
    ``min_ranks`` ranks in it the slope is NaN. Frequencies exactly ∝ 1/r give −1.
    """
    if not 1 <= first <= last:
        raise ValueError(f"rank window {first}..{last}: expected 1 <= first <= last")
    freq = _descending(frequencies)
    window = freq[first - 1 : last]
    if window.size < min_ranks:
        return math.nan
    ranks = np.arange(first, first + window.size, dtype=float)
    return float(np.polyfit(np.log10(ranks), np.log10(window), 1)[0])


def top_types_share(frequencies: Mapping[str, float] | Sequence[float], k: int = TOP_TYPES) -> float:
    """Share of all tokens that belong to the ``k`` most frequent types (NaN for no tokens)."""
    freq = _descending(frequencies)
    total = freq.sum()
    return float(freq[:k].sum() / total) if total > 0 else math.nan


def oov_rate(train_types: Mapping[str, object] | set[str], test_tokens: Sequence[str]) -> float:
    """Share of ``test_tokens`` whose type is not in ``train_types`` (NaN when there are none)."""
    if not test_tokens:
        return math.nan
    return sum(token not in train_types for token in test_tokens) / len(test_tokens)


def corpus_stats(
    train_texts: Sequence[str], test_texts: Sequence[str], unit: str = "word", marks: bool = False
) -> dict[str, float]:
    """The statistics of one language (module docstring) from its training and test captions.

    Returns ``captions``, ``train_tokens``, ``types`` (ints) and ``hapax_share``,
    ``at_most_2_share``, ``test_oov_rate``, ``rank_freq_slope``, ``top5000_token_share`` (floats;
    NaN where undefined: no training tokens, no test tokens, too few ranks). ``marks``: word
    tokens keep combining marks (:func:`words`; the languages of :data:`MARK_LANGS`).
    """
    counts = count_tokens(train_texts, unit, marks)
    split = _splitter(unit, marks)
    test_tokens = [token for text in test_texts for token in split(text)]
    types = len(counts)
    seen = np.fromiter(counts.values(), dtype=np.int64, count=types)
    return {
        "captions": len(train_texts),
        "train_tokens": int(seen.sum()),
        "types": types,
        "hapax_share": float((seen == 1).mean()) if types else math.nan,
        "at_most_2_share": float((seen <= 2).mean()) if types else math.nan,
        "test_oov_rate": oov_rate(counts, test_tokens),
        "rank_freq_slope": rank_frequency_slope(counts),
        "top5000_token_share": top_types_share(counts),
    }


def dataset_stats(captions: pd.DataFrame, dataset: str, langs: Sequence[str], where: str) -> pd.DataFrame:
    """One row per language of ``langs`` (plus a ``char`` row for zh/ja), columns :data:`STATS_COLUMNS`.

    ``captions``: a validated captions table (:func:`polyvse.data.tables.validate_captions`);
    only human captions count, training ones for the vocabulary, test ones for the OOV rate.
    Raises ``InputError`` naming ``where`` when a language has no human training caption.
    """
    human = captions[captions["origin"] == "human"]
    rows = []
    for lang in langs:
        mine = human[human["lang"] == lang]
        train = mine.loc[mine["split"] == "train", "text"].tolist()
        if not train:
            present = sorted(human.loc[human["split"] == "train", "lang"].unique())
            raise InputError(
                where,
                f"dataset {dataset}: no human training captions in language {lang!r} "
                f"(human training captions exist in: {', '.join(present) or 'none'})",
            )
        test = mine.loc[mine["split"] == "test", "text"].tolist()
        for unit in ("word", "char") if lang in UNSEGMENTED else ("word",):
            rows.append(
                {
                    "dataset": dataset,
                    "lang": lang,
                    "unit": unit,
                    **corpus_stats(train, test, unit, marks=lang in MARK_LANGS),
                }
            )
    return pd.DataFrame(rows, columns=list(STATS_COLUMNS))


def check_stats_table(table: pd.DataFrame, where: str | Path) -> pd.DataFrame:
    """``table`` with :data:`STATS_COLUMNS` in order and numeric statistics; ``InputError`` naming ``where``
    on a missing column, a unit outside word|char or a statistic that is not a number."""
    missing = [c for c in STATS_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(
            where, f"data statistics table: missing column(s) {', '.join(missing)}; needs {', '.join(STATS_COLUMNS)}"
        )
    table = table.loc[:, list(STATS_COLUMNS)].reset_index(drop=True)
    bad_unit = ~table["unit"].isin(UNITS)
    if bad_unit.any():
        pos = int(np.flatnonzero(bad_unit)[0])
        raise InputError(
            where, f"data statistics table row {pos}: unit {table['unit'].iat[pos]!r} is not one of {'|'.join(UNITS)}"
        )
    for col in STATS_COLUMNS[3:]:
        values = pd.to_numeric(table[col], errors="coerce")
        bad = values.isna() & table[col].notna()
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise InputError(where, f"data statistics table row {pos}: {col} {table[col].iat[pos]!r} is not a number")
        table[col] = values
    return table


def read_stats(path: str | Path) -> pd.DataFrame:
    """A ``data_stats.tsv`` written by the workflow, checked (:func:`check_stats_table`)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "data statistics table not found")
    return check_stats_table(pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""]), path)


def read_reference(path: str | Path) -> tuple[str, pd.DataFrame]:
    """The reference statistics file: leading ``# `` lines (the caption: where the numbers come
    from), then a TSV with :data:`STATS_COLUMNS`. Returns ``(caption, table)``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "reference statistics file not found")
    lines = path.read_text(encoding="utf-8").splitlines()
    head = [line for line in lines if line.startswith("#")]
    if lines[: len(head)] != head or not head:
        raise InputError(
            path,
            "reference statistics file must start with '# ' lines saying where its numbers come from, then the table",
        )
    caption = " ".join(line.lstrip("#").strip() for line in head).strip()
    table = pd.read_csv(StringIO("\n".join(lines[len(head) :])), sep="\t", keep_default_na=False, na_values=[""])
    if table.empty:
        raise InputError(path, "reference statistics file has no rows")
    return caption, check_stats_table(table, path)


def _count(v: float) -> str:
    return "–" if pd.isna(v) else f"{int(v):,}"


def _percent(v: float) -> str:
    return "–" if pd.isna(v) else f"{100 * v:.1f}"


def _slope(v: float) -> str:
    return "–" if pd.isna(v) else f"{v:.2f}"


def stats_markdown(ours: pd.DataFrame, reference: pd.DataFrame, reference_caption: str) -> str:
    """Our rows beside the reference rows (checked tables, :func:`check_stats_table`), grouped by
    language: each language's dataset rows, then its reference row (in italics), with notes on
    the tokenisation and where the reference numbers come from."""
    langs = list(dict.fromkeys([*ours["lang"], *reference["lang"]]))
    head = [
        "dataset",
        "lang",
        "unit",
        "captions",
        "train tokens",
        "types",
        "seen once %",
        "seen ≤ 2 %",
        "test OOV %",
        "rank–freq. slope",
        "top-5000 share %",
    ]
    lines = [
        "**Vocabulary of the human training captions: our datasets beside real Multi30K**",
        "",
        "| " + " | ".join(head) + " |",
        "|:--|:--|:--|" + "--:|" * (len(head) - 3),
    ]

    def row(r: pd.Series, label: str) -> str:
        cells = [
            label,
            r["lang"],
            r["unit"],
            _count(r["captions"]),
            _count(r["train_tokens"]),
            _count(r["types"]),
            _percent(r["hapax_share"]),
            _percent(r["at_most_2_share"]),
            _percent(r["test_oov_rate"]),
            _slope(r["rank_freq_slope"]),
            _percent(r["top5000_token_share"]),
        ]
        return "| " + " | ".join(cells) + " |"

    for lang in langs:
        lines += [row(r, str(r["dataset"])) for _, r in ours[ours["lang"] == lang].iterrows()]
        lines += [row(r, f"*{r['dataset']}* ²") for _, r in reference[reference["lang"] == lang].iterrows()]
    notes = [
        "Human captions only: training captions for the vocabulary, test captions for the OOV rate (the share "
        "of test tokens whose type never occurs in training). Tokens are lowercase `\\w+` runs. Slope: "
        f"least squares of log10 frequency on log10 rank over ranks {SLOPE_RANKS[0]}–{SLOPE_RANKS[1]} (– with "
        f"fewer than {MIN_SLOPE_RANKS} ranks there). Top-5000 share: tokens whose type is among the 5,000 most "
        "frequent (SMALR §3.1's K)."
    ]
    shown = set(ours["lang"]) | set(reference["lang"])
    if shown & UNSEGMENTED:
        notes.append(
            f"{', '.join(sorted(shown & UNSEGMENTED))}: written without spaces, so a `word` token is a "
            "whole run of characters between punctuation, not a word, and their word rows do not compare "
            "with spaced languages'; their `char` rows count each character of those runs as a token."
        )
    if shown & MARK_LANGS:
        notes.append(
            f"{', '.join(sorted(shown & MARK_LANGS))}: Python's `\\w` excludes combining marks, which "
            "would split Devanagari words at every vowel sign: tokens are runs of word characters and "
            "combining marks, whole words."
        )
    notes.append(f"² {reference_caption}")
    # a blank line between notes: Markdown would run them into one paragraph
    return "\n".join(lines) + "\n\n" + "\n\n".join(notes) + "\n"
