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

from polyvse.text.muse import MuseDictionary

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
            raise ValueError(
                f"translate.errors: the per-token rates {', '.join(TOKEN_ERRORS)} are exclusive and "
                f"must sum to at most 1, got {total:g}"
            )

    @classmethod
    def from_mapping(cls, settings: Mapping[str, object] | None, where: str = "translate.errors") -> "ErrorRates":
        """Rates from a config block (unknown keys raise, naming ``where``); ``seed`` is ignored here."""
        settings = dict(settings or {})
        settings.pop("seed", None)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ValueError(f"{where}: unknown error kind(s) {unknown}; expected {sorted(known)}")
        return cls(
            **{
                k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v  # type: ignore[arg-type]
                for k, v in settings.items()
            }
        )

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

    Related source words are those sharing a translation, and those of the same lemma (compared
    within buckets of a common four-character prefix, so a 100k-word MUSE file stays cheap). A
    word's candidates are found on its first use: a job translates a few hundred of a dictionary's
    words, and finding every word's up front was two thirds of an MT job's time.
    """

    def __init__(self, dictionary: MuseDictionary) -> None:
        self.dictionary = dictionary
        self._by_target: dict[str, set[str]] = defaultdict(set)
        self._by_prefix: dict[str, list[str]] = defaultdict(list)
        for word, targets in dictionary.entries.items():
            for t in targets:
                self._by_target[t].add(word)
            if len(word) >= LEMMA_MIN_PREFIX:
                self._by_prefix[word[:LEMMA_MIN_PREFIX]].append(word)
        self._related: dict[str, list[str]] = {}
        self._sense: dict[str, list[str]] = {}

    def _related_set(self, word: str) -> set[str]:
        targets = self.dictionary.entries.get(word)
        if targets is None:
            return set()
        related = {w for t in targets for w in self._by_target[t]}
        if len(word) >= LEMMA_MIN_PREFIX:
            related.update(b for b in self._by_prefix[word[:LEMMA_MIN_PREFIX]] if same_lemma(word, b))
        related.discard(word)
        return related

    def sense(self, word: str) -> list[str]:
        """Translations of words related to ``word`` that are not translations of ``word`` itself."""
        if word not in self._sense:
            entries = self.dictionary.entries
            own = set(entries.get(word, ()))
            self._sense[word] = sorted({t for o in self.related(word) for t in entries[o]} - own)
        return self._sense[word]

    def agreement(self, word: str) -> list[str]:
        """The other listed translations of ``word`` (its first one is the correct choice)."""
        return self.dictionary.entries.get(word, [])[1:]

    def related(self, word: str) -> list[str]:
        """The source words related to ``word`` (sharing a translation, or of the same lemma)."""
        if word not in self._related:
            self._related[word] = sorted(self._related_set(word))
        return self._related[word]


def noisy_words(
    tokens: Sequence[str], confusions: Confusions, rates: ErrorRates, rng: np.random.Generator
) -> list[str]:
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
        cands = (
            confusions.sense(tok)
            if kind == "wrong_sense"
            else confusions.agreement(tok)
            if kind == "wrong_agreement"
            else []
        )
        out.append(cands[int(v * len(cands))] if cands else correct)
    return _finish(out, last_dropped, rates.reorder, rng)


def _finish(out: list[str], last_dropped: str | None, reorder: float, rng: np.random.Generator) -> list[str]:
    """The end of both error models: a sentence whose every word was dropped keeps its last one (MT
    drops words, not whole captions), then each adjacent pair of output words is swapped with
    probability ``reorder`` (a swapped word is not moved again; one draw per pair, after the word
    choices, so that each error model draws the same stream of ``rng`` whichever calls it)."""
    if not out and last_dropped is not None:
        out.append(last_dropped)
    if reorder > 0 and len(out) > 1:
        swaps = rng.random(len(out) - 1)
        i = 0
        while i < len(out) - 1:
            if swaps[i] < reorder:
                out[i], out[i + 1] = out[i + 1], out[i]
                i += 2
            else:
                i += 1
    return out


# ----------------------------------------------------------------------------- target-side errors (transfer MT)

TARGET_ERROR_MODEL_VERSION = 1
"""Part of the ``transfer`` backend's cache key: raised whenever :func:`noisy_target_words`
changes what it outputs for the same rates, seed and candidates."""


class TargetConfusions:
    """The error candidates of every *target* word of one pair ``src``→``tgt``.

    The ``transfer`` backend (:mod:`polyvse.translate.transfer`) produces a correct
    target sentence and then errs on its words; each target word is traced back to
    its English gloss through the MUSE dictionary ``en-{tgt}`` (the first English
    word listing it), and then:

    * :meth:`sense` — translations into ``tgt`` of English words *related* to the
      gloss (:class:`Confusions`: sharing a translation, or of the same lemma);
      for an English target, those related English words themselves;
    * :meth:`agreement` — the gloss's other listed forms in ``tgt`` (the synthetic
      dictionaries list every inflected form of a gloss); for an English target,
      English words of the same lemma (``circle``/``circles``);
    * :meth:`untranslated` — the ``src`` word for the gloss (its first form in
      ``en-{src}``; the gloss itself when ``src`` is English).

    ``to_tgt``: the dictionary en→tgt (None when ``tgt`` is English or no such
    dictionary exists); ``to_src``: en→src (None when ``src`` is English or none
    exists). A word whose gloss is unknown has no candidates. ``confusions``: the
    :class:`Confusions` of the dictionary that supplies the related words (en→tgt, or
    en→src for an English target) when the caller already built it; it depends on that
    dictionary only, so every source language into one target can share it.
    """

    def __init__(
        self,
        src: str,
        tgt: str,
        to_tgt: MuseDictionary | None,
        to_src: MuseDictionary | None,
        confusions: Confusions | None = None,
    ) -> None:
        self.src, self.tgt = src, tgt
        self.to_tgt = to_tgt if tgt != "en" else None
        self.to_src = to_src if src != "en" else None
        self._gloss: dict[str, str] = {}
        if self.to_tgt is not None:
            for en, words in self.to_tgt.entries.items():
                for w in words:
                    self._gloss.setdefault(w, en)
            self._confusions: Confusions | None = confusions or Confusions(self.to_tgt)
        else:
            # English target: related English words come from the en→src dictionary
            self._confusions = (confusions or Confusions(self.to_src)) if self.to_src is not None else None
        self.words: frozenset[str] = frozenset(self._gloss)
        """The target words the dictionary knows (zh/ja: the segmenter's vocabulary)."""
        self.longest_word: int = max((len(w) for w in self.words), default=1)
        """Characters of the longest of :attr:`words` (the segmenter's window)."""

    def gloss(self, word: str) -> str | None:
        """The English gloss of target ``word`` (itself for an English target; None if unknown)."""
        if self.tgt == "en":
            return word if self._confusions is None or word in self._confusions.dictionary.entries else None
        return self._gloss.get(word)

    def sense(self, word: str) -> list[str]:
        """Target words of a related gloss: the wrong-sense candidates of ``word``."""
        gloss = self.gloss(word)
        if gloss is None or self._confusions is None:
            return []
        if self.tgt == "en":
            return [w for w in self._confusions.related(gloss) if w != word]
        return [w for w in self._confusions.sense(gloss) if w != word]

    def agreement(self, word: str) -> list[str]:
        """Other forms of ``word``'s gloss in the target language: the wrong-agreement candidates."""
        gloss = self.gloss(word)
        if gloss is None:
            return []
        if self.tgt == "en":
            if self._confusions is None:
                return []
            return [w for w in self._confusions.related(gloss) if same_lemma(w, word)]
        assert self.to_tgt is not None
        return [w for w in self.to_tgt.entries.get(gloss, []) if w != word]

    def untranslated(self, word: str) -> str | None:
        """The source-language word for ``word``'s gloss (None: unknown)."""
        gloss = self.gloss(word)
        if gloss is None:
            return None
        if self.src == "en":
            return gloss
        return self.to_src.first(gloss) if self.to_src is not None else None


def noisy_target_words(
    tokens: Sequence[str],
    confusions: TargetConfusions,
    rates: ErrorRates,
    rng: np.random.Generator,
    units: Sequence[int] | None = None,
) -> list[str]:
    """Perturb a *correct* target sentence ``tokens`` with the five error kinds drawn from ``rng``.

    The ``transfer`` backend's error model: the same kinds and rates as
    :func:`noisy_words` (module docstring), applied to the words of a correct
    translation rather than to a word-by-word one, since a transfer system that
    parsed the caption gets order and agreement right unless it errs:

    * ``wrong_sense``: a translation of an English word related to the word's gloss
      (:meth:`TargetConfusions.sense`);
    * ``wrong_agreement``: another inflected form of the same gloss
      (:meth:`TargetConfusions.agreement`);
    * ``drop``: the word is left out (a sentence keeps its last dropped word rather
      than come back empty);
    * ``untranslated``: the source-language word for the gloss
      (:meth:`TargetConfusions.untranslated`);
    * ``reorder``: after the word choices, adjacent output words are swapped with
      this probability (a swapped word is not swapped again).

    ``units``: how many units of the script each token is (None: one each). The
    per-token rates are per unit: a token of ``k`` units errs with probability
    ``1 - (1 - p)**k`` where ``p`` is the sum of the four per-token rates, split
    among the kinds in proportion to their rates. The transfer backend passes the
    characters of a zh/ja word: those scripts are written, tokenised and scored
    (sacrebleu's ``zh``/``char`` BLEU) character by character, and an MT system
    errs in them per character rather than per dictionary word; without this, the
    same rates leave ja/zh BLEU 15-30 points above the other languages'.

    A wrong sense or agreement drawn on a word without such candidates takes the
    other kind's, else the untranslated word (an MT system that errs on a word errs
    somehow: without this, a language with few inflected forms, such as ja, would
    get fewer errors at the same rates); a word with no candidate at all (unknown
    gloss) stays correct. With every rate 0
    the output is ``tokens`` unchanged. Deterministic in ``rng`` (seed it with
    :func:`sentence_rng` for a per-sentence stream independent of batching).
    """
    per_token = np.array([getattr(rates, k) for k in TOKEN_ERRORS])
    total = float(per_token.sum())
    draws = rng.random(len(tokens))
    picks = rng.random(len(tokens))
    out: list[str] = []
    last_dropped: str | None = None
    for i, (tok, u, v) in enumerate(zip(tokens, draws, picks)):
        k = 1 if units is None else max(1, int(units[i]))
        edges = np.cumsum(
            per_token if k == 1 or not 0.0 < total < 1.0 else per_token * ((1.0 - (1.0 - total) ** k) / total)
        )
        kind = TOKEN_ERRORS[int(np.searchsorted(edges, u, side="right"))] if u < edges[-1] else None
        if kind == "drop":
            last_dropped = tok
            continue
        if kind == "untranslated":
            out.append(confusions.untranslated(tok) or tok)
            continue
        cands: list[str] = []
        if kind is not None:
            first, second = (
                (confusions.sense, confusions.agreement)
                if kind == "wrong_sense"
                else (confusions.agreement, confusions.sense)
            )
            cands = first(tok) or second(tok)
            if not cands:
                other = confusions.untranslated(tok)
                cands = [other] if other else []
        out.append(cands[int(v * len(cands))] if cands else tok)
    return _finish(out, last_dropped, rates.reorder, rng)
