"""Offline rule-based transfer MT for the synthetic data: understand the caption, then err.

MULE (§Experiments, "Machine Translations") and SMALR (§4) train and test on
Google-Translate output: fluent sentences, in the target language's word order
and inflection, with some mistakes. The word-by-word ``dictionary`` backend
(:mod:`polyvse.translate.dictionary`) cannot reorder or inflect, so its quality
depends on how far a language's grammar is from the source's (BLEU en→ja 50 but
en→ar 0.8 on the synthetic data) and no error rate can calibrate it.

A synthetic caption is the realisation of a language-independent plan
(:func:`polyvse.data.synthetic.plan.caption_plan`), and the grammar that wrote it
can say the same plan in every language: this backend is what a rule-based
transfer system with that grammar would do. ``translate_batch`` looks the source
text up in a table of plan realisations
(:func:`polyvse.data.synthetic.plan_realisations`, the workflow's
results/{dataset}/references.parquet): the text in ``src`` identifies its plan,
and the plan's realisation in ``tgt``, tokenised and joined as the dictionary
backend writes its output (lower case, no punctuation, no spaces in zh/ja), is the
correct translation. The target-side error model
(:func:`polyvse.translate.errors.noisy_target_words`) then makes the mistakes
real MT makes — wrong sense, wrong agreement, dropped, untranslated and swapped
words — at the rates of config ``translate.errors``, drawn per sentence from a
hash of (seed, src, tgt, text), calibrated so that BLEU lies in the range of
published caption MT (results/{dataset}/mt_quality.tsv).

A text the table does not know (a user's query, real data, a language without
plans) falls back to the dictionary backend's word-by-word translation with the
same errors, so the backend translates any text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import pandas as pd

from polyvse import LANGUAGES
from polyvse.errors import InputError
from polyvse.text.tokenize import UNSEGMENTED, tokenize
from polyvse.translate.backend import TranslationBackend, register
from polyvse.translate.dictionary import DictionaryBackend, _fingerprint, join_tokens, segment_greedy
from polyvse.translate.errors import (
    ERROR_MODEL_VERSION,
    TARGET_ERROR_MODEL_VERSION,
    Confusions,
    ErrorRates,
    TargetConfusions,
    noisy_target_words,
    sentence_rng,
)
from polyvse.text.muse import MuseDictionary

REALISATION_COLUMNS = ["image_id", "split", "src_lang", "cap_idx", "lang", "text"]
"""One row per (human caption, language): the caption's plan (image_id, src_lang, cap_idx) realised in ``lang``."""


class PlanTable:
    """Plan realisations indexed by text: which plan a sentence says, and how it is said elsewhere.

    ``table``: :data:`REALISATION_COLUMNS`. A text of language ``l`` that several
    plans realise resolves to the first, preferring a plan whose human caption it
    is (``lang == src_lang``), then table order, so lookups are deterministic.
    """

    def __init__(self, table: pd.DataFrame) -> None:
        missing = [c for c in REALISATION_COLUMNS if c not in table.columns]
        if missing:
            raise InputError(
                "references",
                f"plan realisations lack columns {missing} (has {list(table.columns)}): "
                "rebuild results/{dataset}/references.parquet",
            )
        keys = list(zip(table["image_id"], table["src_lang"], table["cap_idx"]))
        plan_ids: dict[tuple, int] = {}
        self._said: list[dict[str, str]] = []
        for key, lang, text in zip(keys, table["lang"], table["text"]):
            pid = plan_ids.setdefault(key, len(plan_ids))
            if pid == len(self._said):
                self._said.append({})
            self._said[pid].setdefault(lang, text)
        self._index: dict[tuple[str, str], int] = {}
        for human_first in (True, False):
            for key, lang, text in zip(keys, table["lang"], table["text"]):
                if (lang == key[1]) == human_first:
                    self._index.setdefault((lang, text), plan_ids[key])
        self._normalised: dict[str, dict[str, int]] = {}
        self.fingerprint = hashlib.sha256(
            "\n".join(
                f"{k[0]}\t{k[1]}\t{k[2]}\t{lang}\t{text}" for k, lang, text in zip(keys, table["lang"], table["text"])
            ).encode()
        ).hexdigest()[:12]

    def __len__(self) -> int:
        return len(self._said)

    def _by_normalised(self, lang: str) -> dict[str, int]:
        if lang not in self._normalised:
            index: dict[str, int] = {}
            for (l, text), pid in self._index.items():
                if l == lang:
                    index.setdefault(_normal_key(text, lang), pid)
            self._normalised[lang] = index
        return self._normalised[lang]

    def lookup(self, text: str, src: str, tgt: str) -> str | None:
        """The realisation in ``tgt`` of the plan ``text`` (in ``src``) says; None if unknown.

        ``text`` is matched as written, else after tokenisation (case and punctuation ignored).
        """
        pid = self._index.get((src, text))
        if pid is None:
            pid = self._by_normalised(src).get(_normal_key(text, src))
        return None if pid is None else self._said[pid].get(tgt)


def _normal_key(text: str, lang: str) -> str:
    return " ".join(tokenize(text, lang, segmenter="spaces"))


def read_plan_table(path: str | Path) -> pd.DataFrame:
    """Read a plan-realisation table (results/{dataset}/references.parquet)."""
    return pd.read_parquet(path)


@register("transfer")
class TransferBackend(TranslationBackend):
    """Rule-based transfer MT over the synthetic grammar, with target-side errors (module docstring).

    ``references``: the plan-realisation table (:data:`REALISATION_COLUMNS`; a path
    to its parquet file, a DataFrame, or None for data without plans: every text
    then falls back). ``directory``/``files``/``languages``/``pivot``: the MUSE
    dictionaries, as :class:`DictionaryBackend` takes them: the fallback and the
    error model's glosses. ``errors`` and ``seed``: the error rates
    (``translate.errors``) and the seed of their draws.
    """

    def __init__(
        self,
        directory: str | Path | None = None,
        files: Sequence[str | Path] | None = None,
        references: str | Path | pd.DataFrame | None = None,
        languages: Collection[str] = LANGUAGES,
        pivot: str = "en",
        errors: ErrorRates | Mapping[str, object] | None = None,
        seed: int = 0,
    ) -> None:
        self.fallback = DictionaryBackend(
            directory=directory, files=files, languages=languages, pivot=pivot, errors=errors, seed=seed
        )
        self._init_table(references)

    def _init_table(self, references: str | Path | pd.DataFrame | None) -> None:
        self._references_path = Path(references) if isinstance(references, (str, Path)) else None
        table = read_plan_table(references) if isinstance(references, (str, Path)) else references
        self.plans: PlanTable | None = PlanTable(table) if table is not None else None
        self._confusions: dict[tuple[str, str], TargetConfusions] = {}
        self._dictionary_confusions: dict[str, Confusions] = {}  # en→lang's, by lang
        self._keys: dict[tuple[str, str], str] = {}

    @classmethod
    def from_dictionaries(
        cls,
        dictionaries: Mapping[tuple[str, str], MuseDictionary] | Sequence[MuseDictionary],
        references: str | Path | pd.DataFrame | None = None,
        pivot: str = "en",
        errors: ErrorRates | Mapping[str, object] | None = None,
        seed: int = 0,
    ) -> "TransferBackend":
        """A backend over dictionaries already in memory (tests, notebooks)."""
        self = cls.__new__(cls)
        self.fallback = DictionaryBackend.from_dictionaries(dictionaries, pivot=pivot, errors=errors, seed=seed)
        self._init_table(references)
        return self

    @property
    def errors(self) -> ErrorRates:
        return self.fallback.errors

    @property
    def seed(self) -> int:
        return self.fallback.seed

    def _en_dictionary(self, lang: str) -> MuseDictionary | None:
        if lang == "en" or not self.fallback._has(("en", lang)):
            return None
        return self.fallback.dictionary("en", lang)

    def confusions(self, src: str, tgt: str) -> TargetConfusions:
        """The target-side error candidates of ``src``→``tgt`` (built on first use)."""
        pair = (src, tgt)
        if pair not in self._confusions:
            to_tgt, to_src = self._en_dictionary(tgt), self._en_dictionary(src)
            # related words come from en→tgt (en→src for an English target): built once per dictionary,
            # not once per pair (they were 89 % of a query_translations job)
            lang, dictionary = (tgt, to_tgt) if tgt != "en" else (src, to_src)
            if dictionary is not None and lang not in self._dictionary_confusions:
                self._dictionary_confusions[lang] = Confusions(dictionary)
            self._confusions[pair] = TargetConfusions(src, tgt, to_tgt, to_src, self._dictionary_confusions.get(lang))
        return self._confusions[pair]

    def target_tokens(self, text: str, lang: str, words: Collection[str], longest: int) -> list[str]:
        """``text`` in ``lang`` as output tokens: tokenised; zh/ja segmented into the dictionary's ``words``,
        ``longest`` the longest one's characters (measured once per pair, :class:`TargetConfusions`: once a
        sentence it was two thirds of an MT stage's time)."""
        if lang in UNSEGMENTED:
            return [
                tok
                for chunk in tokenize(text, lang, segmenter="spaces")
                for tok in segment_greedy(chunk, words, longest)
            ]
        return tokenize(text, lang)

    def translate_known(self, text: str, src: str, tgt: str) -> str | None:
        """The transfer translation of ``text`` with errors; None when the table does not know it."""
        said = self.plans.lookup(text, src, tgt) if self.plans is not None else None
        if said is None:
            return None
        conf = self.confusions(src, tgt)
        tokens = self.target_tokens(said, tgt, conf.words, conf.longest_word)
        if self.errors.active:
            units = [len(t) for t in tokens] if tgt in UNSEGMENTED else None
            tokens = noisy_target_words(tokens, conf, self.errors, sentence_rng(self.seed, src, tgt, text), units)
        return join_tokens(tokens, tgt)

    def translate_batch(self, texts: list[str], src: str, tgt: str) -> list[str]:
        out: list[str | None] = [self.translate_known(t, src, tgt) for t in texts]
        unknown = [t for t, o in zip(texts, out) if o is None]
        if unknown:
            filled = iter(self.fallback.translate_batch(unknown, src, tgt))
            out = [o if o is not None else next(filled) for o in out]
        return [str(o) for o in out]

    def cache_key(self, src: str, tgt: str) -> str:
        """``transfer:plans=<table hash>:dicts=<dictionary hash>`` and, with errors,
        ``:errors=v<models>,<rates>:seed=<seed>``: a changed table, dictionary, rate or
        seed never reuses translations made under others."""
        pair = (src, tgt)
        if pair not in self._keys:
            table = self.plans.fingerprint if self.plans is not None else "none"
            self._keys[pair] = f"{self.name}:plans={table}:dicts={self._dictionaries_key(src, tgt)}"
        key = self._keys[pair]
        if self.errors.active:
            key += f":errors=v{ERROR_MODEL_VERSION}.{TARGET_ERROR_MODEL_VERSION},{self.errors.key()}:seed={self.seed}"
        return key

    def _dictionaries_key(self, src: str, tgt: str) -> str:
        """A hash of every dictionary the pair may read: the fallback's route and the glosses' en-xx files."""
        try:
            route = self.fallback.route(src, tgt)
        except InputError:
            route = []
        pairs = list(dict.fromkeys([*route, *[("en", l) for l in (src, tgt) if l != "en"]]))
        pairs = [p for p in pairs if self.fallback._has(p)]
        if all(p in self.fallback.paths for p in pairs):
            return _fingerprint([self.fallback.paths[p] for p in pairs]) if pairs else "none"
        content = "\n".join(
            f"{p}\t{s}\t{' '.join(ts)}" for p in pairs for s, ts in self.fallback.dictionary(*p).entries.items()
        )
        return hashlib.sha256(content.encode()).hexdigest()[:12]
