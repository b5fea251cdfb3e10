"""Vocabulary-reduction baselines that need no latent vocabulary (SMALR §4, Figure 3).

* **Frequency thresholding**: "We drop words that occur fewer than t times in
  the training set." A dropped word is read as its language's ``<unk>``
  (:func:`threshold_vocabulary`; :class:`polyvse.text.vocab.Vocabulary` maps
  every word outside the kept list to ``<unk>``).
* **Dictionary mapping**: "We map words that occur fewer than t times in
  non-English languages to English using dictionaries"; the word then uses the
  English word's embedding, so "the token will still exist indirectly in the
  vocabulary" (:func:`rare_word_map`, :func:`map_rare_to_english`).
* **PCA reduction** is the output of :mod:`polyvse.text.pca` at 50, 100 or 200
  dimensions; nothing here.

Dictionary entries are whole words. With zh/ja split into characters (the
tokenizer's default), only single-character entries can match a rare token.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from polyvse.text.tokenize import tokenize
from polyvse.translate.muse import MuseDictionary

ENGLISH = "en"


def _check_threshold(t: int) -> int:
    if isinstance(t, bool) or int(t) != t or t < 1:
        raise ValueError(f"threshold t must be a positive integer, got {t!r}")
    return int(t)


def threshold_vocabulary(counts: Mapping[str, int], t: int) -> dict[str, int]:
    """The words seen at least ``t`` times, most frequent first (ties by word).

    Words seen fewer than ``t`` times are left out, so a vocabulary built on the
    result reads them as the language's ``<unk>``. ``t=1`` keeps every word.
    """
    t = _check_threshold(t)
    kept = [(w, int(c)) for w, c in counts.items() if c >= t]
    kept.sort(key=lambda wc: (-wc[1], wc[0]))
    return dict(kept)


def _check_dictionary(dictionary: MuseDictionary, lang: str) -> None:
    if dictionary.src != lang or dictionary.tgt != ENGLISH:
        raise ValueError(f"dictionary mapping of {lang!r} needs a {lang}-{ENGLISH} dictionary, "
                         f"got {dictionary.src}-{dictionary.tgt}")


def rare_word_map(counts: Mapping[str, int], t: int, dictionary: MuseDictionary,
                  lang: str) -> dict[str, list[str]]:
    """Rare words of ``lang`` (seen fewer than ``t`` times) that the dictionary
    translates, each mapped to its first translation as English tokens.

    A translation is tokenised as English text is ("Teddy-bear" → ["teddy",
    "bear"]), so that it meets the English vocabulary's tokens.
    English maps nothing.
    """
    t = _check_threshold(t)
    if lang == ENGLISH:
        return {}
    _check_dictionary(dictionary, lang)
    mapping: dict[str, list[str]] = {}
    for word, count in counts.items():
        if count < t:
            target = dictionary.first(word)
            if target is not None:
                english = tokenize(target, ENGLISH)
                if english:
                    mapping[word] = english
    return mapping


def map_rare_to_english(tokens: Sequence[str], lang: str, counts: Mapping[str, int], t: int,
                        dictionary: MuseDictionary | None) -> list[tuple[str, str]]:
    """Tokens of one ``lang`` sentence as ``(language, token)`` pairs, rare words
    replaced by their English translation.

    A token seen fewer than ``t`` times in ``lang``'s training data (a token
    absent from ``counts`` counts 0) that the ``lang``→en ``dictionary``
    translates becomes ``("en", word)`` pair(s); every other token stays
    ``(lang, token)`` — a rare one without translation is later read as
    ``lang``'s ``<unk>`` by a vocabulary thresholded at ``t``. The language is
    part of each pair because the joint vocabulary is over (language, token):
    German "die" and an English "die" are different rows. English sentences, and
    ``dictionary=None`` for English, are returned unchanged.
    """
    t = _check_threshold(t)
    if lang == ENGLISH:
        return [(lang, tok) for tok in tokens]
    if dictionary is None:
        raise ValueError(f"dictionary mapping of {lang!r} needs a {lang}-{ENGLISH} dictionary, got None")
    _check_dictionary(dictionary, lang)
    out: list[tuple[str, str]] = []
    for tok in tokens:
        target = dictionary.first(tok) if counts.get(tok, 0) < t else None
        english = tokenize(target, ENGLISH) if target is not None else []
        if english:
            out.extend((ENGLISH, w) for w in english)
        else:
            out.append((lang, tok))
    return out
