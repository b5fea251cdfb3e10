"""Bilingual word pairs between any two languages from MUSE dictionaries,
composed through a pivot language where no direct dictionary exists.

The Translator (poster §2) learns M from a dictionary between the target and
the source language (fr → de in the poster). MUSE (and the synthetic data)
ship ``en-xx`` / ``xx-en`` dictionaries only, so a de–fr dictionary is
composed through English: fr word f and de word d are paired when some
English word e translates f (``fr-en.txt``) and is translated by d
(``en-de.txt``). Composition multiplies ambiguity (a word with several English
senses pairs with every translation of each sense); dictionary induction
(:mod:`polyvse.align.induction`) counts any listed translation as correct.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from polyvse.errors import InputError
from polyvse.text.muse import normalize_word, read_muse


def _file_pairs(directory: Path, a: str, b: str) -> list[tuple[str, str]] | None:
    """``(a_word, b_word)`` pairs from ``a-b.txt``, or ``b-a.txt`` flipped, or None."""
    direct, reverse = directory / f"{a}-{b}.txt", directory / f"{b}-{a}.txt"
    if direct.is_file():
        return [(normalize_word(x), normalize_word(y)) for x, y in read_muse(direct)]
    if reverse.is_file():
        return [(normalize_word(y), normalize_word(x)) for x, y in read_muse(reverse)]
    return None


def compose(first: Iterable[tuple[str, str]], second: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(a, c)`` for every ``(a, b)`` of ``first`` and ``(b, c)`` of ``second``;
    duplicates removed, in first-seen order."""
    by_middle: dict[str, list[str]] = {}
    for b, c in second:
        by_middle.setdefault(b, []).append(c)
    seen: dict[tuple[str, str], None] = {}
    for a, b in first:
        for c in by_middle.get(b, ()):
            seen.setdefault((a, c), None)
    return list(seen)


def bilingual_pairs(
    directory: str | Path, target: str, source: str, pivots: Sequence[str] = ("en",)
) -> tuple[list[tuple[str, str]], str]:
    """``(target_word, source_word)`` pairs and how they were obtained.

    A direct ``{target}-{source}.txt`` (or ``{source}-{target}.txt``) wins;
    otherwise the dictionaries are composed through the first pivot with both
    halves. Words are normalised as the tokenizer writes them.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(directory, "dictionary directory not found")
    if target == source:
        raise InputError(directory, f"source and target language are both {source!r}")
    direct = _file_pairs(directory, target, source)
    if direct is not None:
        return list(dict.fromkeys(direct)), f"{target}-{source} dictionary"
    for pivot in pivots:
        if pivot in (target, source):
            continue
        first, second = _file_pairs(directory, target, pivot), _file_pairs(directory, pivot, source)
        if first is not None and second is not None:
            pairs = compose(first, second)
            if not pairs:
                raise InputError(directory, f"composing {target}-{pivot} and {pivot}-{source} gives no pair")
            return pairs, f"{target}-{pivot} ∘ {pivot}-{source} (composed through {pivot})"
    raise InputError(
        directory,
        f"no {target}-{source} dictionary, and none to compose through "
        f"{', '.join(pivots)} ({target}-xx and xx-{source} files, either direction)",
    )
