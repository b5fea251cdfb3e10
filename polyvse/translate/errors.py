"""An error model for the offline dictionary MT: the mistakes real MT makes on captions.

MULE (§Experiments, "Machine Translations") and SMALR (§4, §3.4 and the "Trans.
to En" rows of Tables 1–2) train and test on Google-Translate output, whose
errors are part of what those rows measure. Word-by-word translation over the
synthetic languages' own glossary gets every content word right, so without
errors the translate-to-English baseline and CLC would be flattered. This module
perturbs the dictionary backend's word-by-word output with five kinds of error,
each with its own rate (config ``translate.errors``):

* ``wrong_sense`` — a token gets a translation of a *related* source word: one
  that shares a translation with it (``a``/``one`` → ``ein``) or is another form
  of the same lemma (``circle``/``circles``: a common prefix of at least four
  characters covering all but the last two of the shorter word);
* ``wrong_agreement`` — a token gets another listed translation of itself: in
  the synthetic dictionaries one gloss maps to its several inflected forms
  (``red`` → ``rote roter rotes roten``), so this is a wrong inflection;
* ``drop`` — the token is left out (never every token: a sentence keeps its last
  dropped word, translated, rather than come back empty);
* ``untranslated`` — the source token is copied as it is;
* ``reorder`` — after the word choices, each pair of adjacent output tokens is
  swapped with this probability (a swapped token is not swapped again).

The first four are exclusive per token (at most one of them applies), so their
sum must not exceed 1. A token with no candidate for the drawn error (no related
word, a single listed translation, a word the dictionary lacks) is translated
correctly. Errors are drawn per hop of a pivot route, as a pivoting MT system
compounds errors.

Determinism: the random stream of a sentence is seeded by a hash of
``(seed, src, tgt, text)``, so a sentence gets the same translation whatever
batch, order or process it is translated in: the SQLite cache and a resumed run
agree, and :meth:`ErrorRates.key` is part of the backend's cache key.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Sequence

import numpy as np

from polyvse.translate.muse import MuseDictionary

# The same-lemma test: shared prefix of at least this many characters ...
LEMMA_MIN_PREFIX = 4
# ... covering all but at most this many characters of the shorter word.
LEMMA_MAX_SUFFIX = 2

TOKEN_ERRORS: tuple[str, ...] = ("wrong_sense", "wrong_agreement", "drop", "untranslated")

ERROR_MODEL_VERSION = 2
"""Part of the translation cache key: raised whenever :func:`noisy_words` changes what it
outputs for the same rates and seed, so that cached translations of an older model are
not reused (2: a sentence is never dropped whole)."""


@dataclass(frozen=True)
class ErrorRates:
    """Per-token probabilities of each error kind (``reorder``: per adjacent pair)."""

    wrong_sense: float = 0.0
    wrong_agreement: float = 0.0
    drop: float = 0.0
    untranslated: float = 0.0
    reorder: float = 0.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ValueError(f"translate.errors.{f.name}: expected a probability in [0, 1], got {value!r}")
        total = sum(getattr(self, k) for k in TOKEN_ERRORS)
        if total > 1.0 + 1e-12:
            raise ValueError(f"translate.errors: the per-token rates {', '.join(TOKEN_ERRORS)} are exclusive and "
                             f"must sum to at most 1, got {total:g}")

    @classmethod
    def from_mapping(cls, settings: Mapping[str, object] | None, where: str = "translate.errors") -> "ErrorRates":
        """Rates from a config block (unknown keys raise, naming ``where``); ``seed`` is ignored here."""
        settings = dict(settings or {})
        settings.pop("seed", None)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ValueError(f"{where}: unknown error kind(s) {unknown}; expected {sorted(known)}")
        return cls(**{k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v  # type: ignore[arg-type]
                      for k, v in settings.items()})

    @property
    def active(self) -> bool:
        """Whether any rate is non-zero (all zero: the clean word-by-word output)."""
        return any(v > 0 for v in asdict(self).values())

    def key(self) -> str:
        """A canonical text of the rates, for cache keys: ``ws=0.05,wa=0.1,...``."""
        short = {"wrong_sense": "ws", "wrong_agreement": "wa", "drop": "dr", "untranslated": "un", "reorder": "ro"}
        return ",".join(f"{short[k]}={v:.6g}" for k, v in asdict(self).items())


def sentence_rng(seed: int, src: str, tgt: str, text: str) -> np.random.Generator:
    """The random stream of one sentence: a hash of (seed, src, tgt, text), independent of batching."""
    digest = hashlib.sha256(f"{seed}\x00{src}\x00{tgt}\x00{text}".encode()).digest()
    return np.random.default_rng(np.random.SeedSequence(int.from_bytes(digest[:16], "little")))


def same_lemma(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` look like two forms of one lemma (``kreis``/``kreise``, ``rote``/``roten``)."""
    if a == b:
        return False
    shorter = min(len(a), len(b))
    prefix = 0
    for x, y in zip(a, b):
        if x != y:
            break
        prefix += 1
    return prefix >= max(LEMMA_MIN_PREFIX, shorter - LEMMA_MAX_SUFFIX)


class Confusions:
    """The wrong-sense and wrong-agreement candidates of every source word of one dictionary.

    Built once per dictionary: related source words are those sharing a
    translation, and those of the same lemma (compared within buckets of a
    common four-character prefix, so a 100k-word MUSE file stays cheap).
    """

    def __init__(self, dictionary: MuseDictionary) -> None:
        self.dictionary = dictionary
        by_target: dict[str, set[str]] = defaultdict(set)
        by_prefix: dict[str, list[str]] = defaultdict(list)
        for word, targets in dictionary.entries.items():
            for t in targets:
                by_target[t].add(word)
            if len(word) >= LEMMA_MIN_PREFIX:
                by_prefix[word[:LEMMA_MIN_PREFIX]].append(word)
        related: dict[str, set[str]] = defaultdict(set)
        for words in by_target.values():
            for w in words:
                related[w] |= words - {w}
        for words in by_prefix.values():
            for i, a in enumerate(words):
                for b in words[i + 1:]:
                    if same_lemma(a, b):
                        related[a].add(b)
                        related[b].add(a)
        self._sense: dict[str, list[str]] = {}
        for word, others in related.items():
            own = set(dictionary.entries[word])
            cands = {t for o in others for t in dictionary.entries[o]} - own
            if cands:
                self._sense[word] = sorted(cands)

    def sense(self, word: str) -> list[str]:
        """Translations of words related to ``word`` that are not translations of ``word`` itself."""
        return self._sense.get(word, [])

    def agreement(self, word: str) -> list[str]:
        """The other listed translations of ``word`` (its first one is the correct choice)."""
        return self.dictionary.entries.get(word, [])[1:]


def noisy_words(tokens: Sequence[str], confusions: Confusions, rates: ErrorRates,
                rng: np.random.Generator) -> list[str]:
    """Translate source ``tokens`` word by word with errors drawn from ``rng`` (see the module docstring).

    With every rate 0 this is exactly the clean word-by-word choice: each known
    token's first translation, unknown tokens kept.
    """
    d = confusions.dictionary
    edges = np.cumsum([getattr(rates, k) for k in TOKEN_ERRORS])
    draws = rng.random(len(tokens))
    picks = rng.random(len(tokens))
    out: list[str] = []
    last_dropped: str | None = None
    for tok, u, v in zip(tokens, draws, picks):
        kind = TOKEN_ERRORS[int(np.searchsorted(edges, u, side="right"))] if u < edges[-1] else None
        correct = d.first(tok) or tok
        if kind == "drop":
            last_dropped = correct
            continue
        if kind == "untranslated":
            out.append(tok)
            continue
        cands = confusions.sense(tok) if kind == "wrong_sense" else \
            confusions.agreement(tok) if kind == "wrong_agreement" else []
        out.append(cands[int(v * len(cands))] if cands else correct)
    if not out and last_dropped is not None:
        # MT drops words, not whole sentences: a caption never comes back empty
        out.append(last_dropped)
    if rates.reorder > 0 and len(out) > 1:
        swaps = rng.random(len(out) - 1)
        i = 0
        while i < len(out) - 1:
            if swaps[i] < rates.reorder:
                out[i], out[i + 1] = out[i + 1], out[i]
                i += 2  # a swapped token is not moved again
            else:
                i += 1
    return out
