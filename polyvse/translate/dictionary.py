"""Offline word-by-word translation with MUSE dictionaries: the default backend.

MULE (§Experiments, "Machine Translations") and SMALR (§4) augment their data with
Google Translate; this backend stands in for it on a machine with no network,
so that the workflow runs end to end offline. It is deliberately simple:

* the source sentence is tokenised with :func:`polyvse.text.tokenize.tokenize`
  (lower case, punctuation removed), every token is replaced by its first
  listed translation, and unknown tokens are kept as they are;
* Chinese and Japanese are written without spaces and the tokenizer would split
  them into characters, while dictionary entries are whole words: a zh/ja
  source is segmented by greedy longest match against the dictionary's source
  words, falling back to one character (or one run of Latin letters/digits);
* output tokens are joined without spaces for a zh/ja target, with spaces
  otherwise;
* a pair ``xx``→``yy`` uses the dictionary ``xx-yy.txt`` when there is one, and
  otherwise pivots through English, ``xx``→``en``→``yy`` (MUSE ships
  dictionaries to and from English for every language, few between others).
  The pivot language is an option;
* ``errors`` (config ``translate.errors``) adds the mistakes real MT makes —
  wrong sense, wrong agreement, dropped, untranslated and swapped words —
  drawn per sentence from a hash of (seed, pair, text):
  :mod:`polyvse.translate.errors`. All rates 0 (the class default) gives the
  clean word-by-word output.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Collection, Mapping, Sequence

from polyvse import LANGUAGES
from polyvse.errors import InputError
from polyvse.text.tokenize import UNSEGMENTED, tokenize
from polyvse.translate.backend import TranslationBackend, register
from polyvse.translate.errors import ERROR_MODEL_VERSION, Confusions, ErrorRates, noisy_words, sentence_rng
from polyvse.text.muse import MuseDictionary, discover_dictionaries, parse_pair_name

# A zh/ja dictionary word longer than this is not tried by the greedy segmenter:
# bounds the cost per character on dictionaries with a few very long entries.
MAX_SEGMENT_CHARS = 16


def _is_latin_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def segment_greedy(chunk: str, words: Collection[str], max_chars: int) -> list[str]:
    """Split ``chunk`` (no spaces) into the longest dictionary words, left to right.

    Where no word of two or more characters starts, the unit is a run of ASCII
    letters/digits (a Latin word inside Chinese text) or a single character.
    Example: with words {"红色", "红", "汽车"}, "红色汽车很大" → ["红色", "汽车", "很", "大"].
    """
    tokens: list[str] = []
    i, n = 0, len(chunk)
    longest = min(max_chars, MAX_SEGMENT_CHARS)
    while i < n:
        for length in range(min(longest, n - i), 1, -1):
            if chunk[i : i + length] in words:
                tokens.append(chunk[i : i + length])
                i += length
                break
        else:
            j = i + 1
            if _is_latin_alnum(chunk[i]):
                while j < n and _is_latin_alnum(chunk[j]):
                    j += 1
            tokens.append(chunk[i:j])
            i = j
    return tokens


def join_tokens(tokens: Sequence[str], lang: str) -> str:
    """Join translated tokens as ``lang`` is written: no spaces in zh/ja, spaces otherwise.

    In zh/ja, two adjacent Latin words (unknown words kept as they are) still get
    a space, so that they do not fuse into one.
    """
    if lang not in UNSEGMENTED:
        return " ".join(tokens)
    out: list[str] = []
    for tok in tokens:
        if out and out[-1] and tok and _is_latin_alnum(out[-1][-1]) and _is_latin_alnum(tok[0]):
            out.append(" ")
        out.append(tok)
    return "".join(out)


def source_tokens(text: str, dictionary: MuseDictionary) -> list[str]:
    """The source words of ``text`` as the dictionary sees them (zh/ja: greedy segmentation)."""
    src = dictionary.src
    if src in UNSEGMENTED:
        return [
            tok
            for chunk in tokenize(text, src, segmenter="spaces")
            for tok in segment_greedy(chunk, dictionary.entries, dictionary.max_source_chars)
        ]
    return tokenize(text, src)


def translate_words(text: str, dictionary: MuseDictionary) -> str:
    """Translate one sentence word by word with one dictionary (one hop, no pivot)."""
    tokens = source_tokens(text, dictionary)
    return join_tokens([dictionary.first(tok) or tok for tok in tokens], dictionary.tgt)


def _fingerprint(paths: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


@register("dictionary")
class DictionaryBackend(TranslationBackend):
    """Word-by-word MT with MUSE dictionaries (offline, deterministic).

    Give either ``directory`` (every ``{src}-{tgt}.txt`` there whose languages are
    in ``languages`` is used, others ignored) or ``files`` (each file's name must
    name two configured languages, else :class:`InputError`). Dictionaries are
    read on first use. ``pivot`` is the language used when no direct dictionary exists.
    ``errors``: the MT error rates (:class:`ErrorRates` or its config mapping;
    None: no errors) and ``seed`` the seed of their draws.
    """

    def __init__(
        self,
        directory: str | Path | None = None,
        files: Sequence[str | Path] | None = None,
        languages: Collection[str] = LANGUAGES,
        pivot: str = "en",
        errors: ErrorRates | Mapping[str, object] | None = None,
        seed: int = 0,
    ) -> None:
        if (directory is None) == (files is None):
            raise ValueError("DictionaryBackend needs exactly one of 'directory' or 'files'")
        self.languages = frozenset(languages)
        self.pivot = pivot
        self.errors = errors if isinstance(errors, ErrorRates) else ErrorRates.from_mapping(errors)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"translate.errors.seed: expected an integer, got {seed!r}")
        self.seed = seed
        self._confusions: dict[tuple[str, str], Confusions] = {}
        self._where = str(directory) if directory is not None else "translate dictionary files"
        if directory is not None:
            self.paths: dict[tuple[str, str], Path] = discover_dictionaries(directory, self.languages)
        else:
            self.paths = {}
            for f in files or ():
                pair = parse_pair_name(f, self.languages)
                if pair in self.paths:
                    raise InputError(f, f"a second dictionary for {pair[0]}-{pair[1]} (first: {self.paths[pair]})")
                self.paths[pair] = Path(f)
        self._loaded: dict[tuple[str, str], MuseDictionary] = {}
        self._keys: dict[tuple[str, str], str] = {}

    @classmethod
    def from_dictionaries(
        cls,
        dictionaries: Mapping[tuple[str, str], MuseDictionary] | Sequence[MuseDictionary],
        pivot: str = "en",
        errors: ErrorRates | Mapping[str, object] | None = None,
        seed: int = 0,
    ) -> "DictionaryBackend":
        """A backend over dictionaries already in memory (tests, notebooks)."""
        dicts = list(dictionaries.values()) if isinstance(dictionaries, Mapping) else list(dictionaries)
        self = cls(files=[], languages=LANGUAGES, pivot=pivot, errors=errors, seed=seed)
        for d in dicts:
            self._loaded[(d.src, d.tgt)] = d
            if d.path is not None:
                self.paths[(d.src, d.tgt)] = d.path
        return self

    def _has(self, pair: tuple[str, str]) -> bool:
        return pair in self._loaded or pair in self.paths

    def route(self, src: str, tgt: str) -> list[tuple[str, str]]:
        """The dictionaries that carry ``src`` to ``tgt``: direct, or through the pivot."""
        if src == tgt:
            return []
        if self._has((src, tgt)):
            return [(src, tgt)]
        if src != self.pivot and tgt != self.pivot and self._has((src, self.pivot)) and self._has((self.pivot, tgt)):
            return [(src, self.pivot), (self.pivot, tgt)]
        needed = f"{src}-{tgt}.txt" + (
            f", or both {src}-{self.pivot}.txt and {self.pivot}-{tgt}.txt" if self.pivot not in (src, tgt) else ""
        )
        raise InputError(self._where, f"no dictionary to translate {src}→{tgt}: needs {needed}")

    def dictionary(self, src: str, tgt: str) -> MuseDictionary:
        pair = (src, tgt)
        if pair not in self._loaded:
            self._loaded[pair] = MuseDictionary.from_file(self.paths[pair], self.languages)
        return self._loaded[pair]

    def cache_key(self, src: str, tgt: str) -> str:
        """``dictionary:<hash of the dictionary files on the route>``: edited files never hit stale entries.

        With errors, ``:errors=v<model version>,<rates>:seed=<seed>`` follows, so a changed
        rate, seed or error model never reuses translations made under others; without errors the key is
        the clean backend's, whose output is unchanged.
        """
        return self._dictionary_key(src, tgt) + (
            f":errors=v{ERROR_MODEL_VERSION},{self.errors.key()}:seed={self.seed}" if self.errors.active else ""
        )

    def _dictionary_key(self, src: str, tgt: str) -> str:
        pair = (src, tgt)
        if pair not in self._keys:
            route = self.route(src, tgt)
            if all(p in self.paths for p in route):
                self._keys[pair] = f"{self.name}:{_fingerprint([self.paths[p] for p in route])}"
            else:  # in-memory dictionaries: fingerprint their content
                content = "\n".join(
                    f"{s}\t{' '.join(ts)}" for p in route for s, ts in self.dictionary(*p).entries.items()
                )
                self._keys[pair] = f"{self.name}:{hashlib.sha256(content.encode()).hexdigest()[:12]}"
        return self._keys[pair]

    def confusions(self, src: str, tgt: str) -> Confusions:
        """The error model's candidate words of the dictionary ``src``→``tgt`` (built on first use)."""
        pair = (src, tgt)
        if pair not in self._confusions:
            self._confusions[pair] = Confusions(self.dictionary(src, tgt))
        return self._confusions[pair]

    def translate_one_hop(self, text: str, src: str, tgt: str) -> str:
        """``text`` through the dictionary ``src``→``tgt`` alone, with this backend's errors."""
        d = self.dictionary(src, tgt)
        if not self.errors.active:
            return translate_words(text, d)
        words = noisy_words(
            source_tokens(text, d), self.confusions(src, tgt), self.errors, sentence_rng(self.seed, src, tgt, text)
        )
        return join_tokens(words, tgt)

    def translate_batch(self, texts: list[str], src: str, tgt: str) -> list[str]:
        out = list(texts)
        for hop in self.route(src, tgt):
            out = [self.translate_one_hop(t, *hop) for t in out]
        return out
