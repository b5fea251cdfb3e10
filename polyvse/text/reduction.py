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
from pathlib import Path

from polyvse.errors import InputError
from polyvse.text.tokenize import tokenize
from polyvse.text.vocab import Vocabulary
from polyvse.text.muse import MuseDictionary, discover_dictionaries

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
        raise ValueError(
            f"dictionary mapping of {lang!r} needs a {lang}-{ENGLISH} dictionary, got {dictionary.src}-{dictionary.tgt}"
        )


def rare_word_map(counts: Mapping[str, int], t: int, dictionary: MuseDictionary, lang: str) -> dict[str, list[str]]:
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


def map_rare_to_english(
    tokens: Sequence[str], lang: str, counts: Mapping[str, int], t: int, dictionary: MuseDictionary | None
) -> list[tuple[str, str]]:
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


def load_english_dictionaries(directory: str | Path, langs: Sequence[str]) -> dict[str, MuseDictionary]:
    """The ``{lang}-en.txt`` MUSE dictionaries of ``directory`` for every
    non-English language of ``langs``; a missing one raises :class:`InputError`
    naming the file it looked for."""
    found = discover_dictionaries(directory, set(langs) | {ENGLISH})
    out = {}
    for lang in langs:
        if lang == ENGLISH:
            continue
        path = found.get((lang, ENGLISH))
        if path is None:
            raise InputError(
                Path(directory) / f"{lang}-{ENGLISH}.txt", "dictionary mapping needs this dictionary and it is missing"
            )
        out[lang] = MuseDictionary.from_file(path, set(langs) | {ENGLISH})
    return out


class DictionaryMappedVocabulary(Vocabulary):
    """The joint vocabulary of the dictionary-mapping baseline (SMALR §4).

    English keeps every word (seen ``min_count`` times); another language keeps
    the words seen at least ``t`` times, and its rarer words that the
    ``lang``→en dictionary translates into English words of the vocabulary are
    read as those English words: they share the English rows of the embedding
    table ("the token will still exist indirectly in the vocabulary"). Other
    rare words read as the language's ``<unk>``. In a model with
    language-specific layers (MULE) a mapped word still passes through its
    sentence's language layer: only the word's own row is saved.

    ``mapping[lang][word]`` holds the English tokens of each mapped training
    word; it travels in :meth:`state_dict`, so a word is read the same way at
    test time. A test word never seen in training is not looked up (it reads as
    ``<unk>``, as in every other vocabulary).
    """

    kind = "dictionary_mapped"

    def __init__(
        self,
        langs: Sequence[str],
        tokens: Mapping[str, Sequence[str]],
        segmenter: str = "chars",
        mapping: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
        t: int = 1,
    ):
        super().__init__(langs, tokens, segmenter)
        if ENGLISH not in self.langs:
            raise ValueError("dictionary mapping maps rare words to English: the vocabulary needs English")
        self.t = int(t)
        self.mapping = {lang: {w: list(en) for w, en in words.items()} for lang, words in (mapping or {}).items()}
        for lang, words in self.mapping.items():
            for word, english in words.items():
                missing = [w for w in english if (ENGLISH, w) not in self.stoi]
                if missing:
                    raise ValueError(f"({lang}, {word}) maps to English {missing} that the vocabulary lacks")

    @classmethod
    def from_counts_and_dictionaries(
        cls,
        counts: Mapping[str, Mapping[str, int]],
        t: int,
        dictionaries: Mapping[str, MuseDictionary],
        min_count: int = 1,
        segmenter: str = "chars",
    ) -> "DictionaryMappedVocabulary":
        """Build from per-language training counts, thresholding non-English
        languages at ``t`` and mapping their rarer words through ``dictionaries``
        (lang → its ``lang``-en dictionary)."""
        t = _check_threshold(t)
        if ENGLISH not in counts:
            raise ValueError("dictionary mapping maps rare words to English: train on English too")
        kept: dict[str, list[str]] = {}
        for lang, c in counts.items():
            floor = min_count if lang == ENGLISH else max(min_count, t)
            kept[lang] = [w for w, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])) if n >= floor]
        english = set(kept[ENGLISH])
        mapping: dict[str, dict[str, list[str]]] = {}
        for lang, c in counts.items():
            if lang == ENGLISH:
                continue
            if lang not in dictionaries:
                raise ValueError(f"dictionary mapping of {lang!r} needs its {lang}-{ENGLISH} dictionary")
            rare = rare_word_map(c, t, dictionaries[lang], lang)
            mapping[lang] = {w: en for w, en in rare.items() if w not in kept[lang] and all(x in english for x in en)}
        return cls(list(counts), kept, segmenter, mapping, t)

    def encode(self, text: str, lang: str, max_len: int | None = None) -> list[int]:
        """Token ids of ``text``; a mapped rare word becomes its English word(s)."""
        if lang not in self.langs:
            raise KeyError(f"language {lang!r} is not in this vocabulary ({', '.join(self.langs)})")
        unk = self.stoi[(lang, "<unk>")]
        mapped = self.mapping.get(lang, {})
        ids: list[int] = []
        for tok in tokenize(text, lang, self.segmenter):
            if (lang, tok) in self.stoi:
                ids.append(self.stoi[(lang, tok)])
            elif tok in mapped:
                ids.extend(self.stoi[(ENGLISH, w)] for w in mapped[tok])
            else:
                ids.append(unk)
        ids = ids[:max_len] if max_len else ids
        return ids or [unk]

    def n_mapped(self) -> dict[str, int]:
        """Mapped words per language."""
        return {lang: len(words) for lang, words in self.mapping.items()}

    def state_dict(self) -> dict:
        return {**super().state_dict(), "kind": self.kind, "mapping": self.mapping, "t": self.t}

    @classmethod
    def from_state_dict(cls, state: dict) -> "DictionaryMappedVocabulary":
        return cls(state["langs"], state["tokens"], state["segmenter"], state["mapping"], state["t"])
