"""Captions of synthetic scenes in eleven languages, one realiser a language, and their bilingual dictionaries.

A caption is made in two steps, so that the same choice of facts can be said in
several languages (Multi30K's fr/cs captions translate English caption 1, MULE
§Experiments "Datasets"):

1. :func:`caption_plan` picks, from the scene, which groups to mention, in which
   order, which of their attributes (colour, size, count, position), whether to
   mention the background, and a sentence template. The plan is
   language-independent and carries the values themselves.
2. :func:`realise` says the plan in one language with that language's lexicon and
   a small realiser: its word order (adjectives after the noun in fr and ar, SOV
   and existential verbs last in ja, ko, hi), its agreement (gender, number and
   case in de, fr, cs, ru, ar, hi; Arabic non-human plurals take feminine
   singular adjectives and 2 takes the dual), numerals with plural nouns
   (Russian 2–3 take the genitive singular), classifiers (zh 个/颗, ja つ, ko 개),
   particles (ko 이/가, 을/를, 와/과 chosen by the final consonant) and its script.

Japanese is written in kana only (no kanji), since the TTS stage reads kanji
wrongly (docs/architecture.md, Dependencies). Chinese and Japanese have no spaces.

:func:`glossary` lists, per language, every surface form the realiser can produce
with an English gloss: the MUSE-format dictionaries of the dictionary MT backend
are written from it. The grammars are consistent and plausible, not perfect.

Lexicon ``long_tail`` (:mod:`polyvse.data.synthetic.lexicon`, SMALR §1: real
vocabularies are long-tailed): the plan additionally carries variant *ranks*
(a noun's synonym, a shade word's synonym), the shade of each group whose colour
is said, and :class:`~polyvse.data.synthetic.lexicon.Extras` (an evaluative
sentence, a photographer, a place). Ranks are drawn in the plan, so one plan says
the same concept's rank-``r`` word in every language; which word that is, and
how it inflects, is the realiser's (a language with fewer words says its
rarest). Every long-tail draw comes after the closed plan's draws, and a closed
plan has none of the new fields set, so closed captions are byte-identical to
those of the closed-only generator.
"""

from __future__ import annotations

import itertools
import unicodedata

import numpy as np

from polyvse.data.synthetic import lexicon as lex
from polyvse.data.synthetic.languages.af import Afrikaans
from polyvse.data.synthetic.languages.ar import Arabic
from polyvse.data.synthetic.languages.base import EN_ADJ, EN_NOUN, Realiser, _norm, _one_token
from polyvse.data.synthetic.languages.cs import Czech
from polyvse.data.synthetic.languages.de import German
from polyvse.data.synthetic.languages.en import English
from polyvse.data.synthetic.languages.fr import French
from polyvse.data.synthetic.languages.hi import Hindi
from polyvse.data.synthetic.languages.ja import Japanese
from polyvse.data.synthetic.languages.ko import Korean
from polyvse.data.synthetic.languages.ru import Russian
from polyvse.data.synthetic.languages.zh import Chinese
from polyvse.data.synthetic.lexicon import extras_glossary, realise_extras
from polyvse.data.synthetic.plan import TEMPLATES, CaptionPlan, caption_plan
from polyvse.data.synthetic.scene import COLOURS, SHAPES, Scene

__all__ = ["ATTRIBUTES", "REALISERS", "attribute_tokens", "caption", "glossary", "realise"]


def realise(plan: CaptionPlan, lang: str) -> str:
    """Say ``plan`` in ``lang`` (NFC-normalised text); a long-tail plan's extras are
    further sentences after the scene's."""
    try:
        realiser = REALISERS[lang]
    except KeyError:
        raise ValueError(f"no caption grammar for language {lang!r}; known: {', '.join(REALISERS)}") from None
    if plan.template not in TEMPLATES:
        raise ValueError(f"unknown caption template {plan.template!r}; expected one of {TEMPLATES}")
    if plan.template == "where" and any(m.position is None for m in plan.mentions):
        raise ValueError("template 'where' needs the position of every mention")
    text = realiser.realise(plan)
    if plan.extras is not None:
        more = realise_extras(plan.extras, lang)
        text = text + ("" if lang in ("zh", "ja") or not more else " ") + more
    return unicodedata.normalize("NFC", text)


def caption(scene: Scene, lang: str, rng: np.random.Generator, lexicon: str = "closed") -> str:
    """One caption of ``scene`` in ``lang``: :func:`caption_plan` then :func:`realise`."""
    return realise(caption_plan(scene, rng, lexicon), lang)


def glossary(lang: str, lexicon: str = "closed") -> list[tuple[str, str]]:
    """``(english, word)`` pairs covering every word ``lang``'s realiser can write.

    ``long_tail`` adds the shade words and noun synonyms, the kinds' words (glossed
    by their English form; a compound by that and by its noun) and every word of the
    extras, generated names included (glossed by their English transliteration);
    the closed pairs come first and are unchanged.

    Words are normalised as the tokenizer normalises them (NFKC, lower case);
    zh/ja words are whole words, not characters. Every English word of the
    English captions has at least one pair. Order is preference: for MT the
    first pair of a word wins.
    """
    if lang == "en":
        raise ValueError("the glossary of a language is with English; en has none")
    try:
        realiser = REALISERS[lang]
    except KeyError:
        raise ValueError(f"no caption grammar for language {lang!r}; known: {', '.join(REALISERS)}") from None
    if lexicon not in lex.LEXICONS:
        raise ValueError(f"unknown lexicon {lexicon!r}; expected one of {lex.LEXICONS}")
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, str]] = []
    pairs = realiser.glossary()
    if lexicon == "long_tail":
        pairs = itertools.chain(pairs, realiser.long_tail_glossary(), realiser.kind_glossary(), extras_glossary(lang))
    for en, word in pairs:
        pair = (_norm(en), _norm(word))
        for w in pair:
            if not _one_token(w):
                raise AssertionError(f"{lang} glossary entry {pair} is not one token")
        if pair not in seen:
            seen.add(pair)
            out.append(pair)
    return out


ATTRIBUTES: dict[str, tuple[str, ...]] = {"colour": COLOURS, "shape": SHAPES}
"""The attributes whose words :func:`attribute_tokens` finds, and their values."""


def attribute_tokens(lang: str, attribute: str, segmenter: str = "chars") -> dict[str, list[str]]:
    """Each value of ``attribute`` (:data:`ATTRIBUTES`) → the tokens that say it in ``lang``.

    The words :func:`glossary` glosses by the value's English words (German "rote", "roter", "rotes" for
    red; English: the words themselves), tokenised as the captions are
    (:func:`polyvse.text.tokenize.tokenize`), less the tokens another value's words hold too: Chinese
    "红色" is 红, not the 色 of every colour. A value whose words are written only in characters other
    values' words hold too (Japanese kana under the ``chars`` segmenter: "きいろい", "しろい") keeps every
    token of its words but those all values' words hold."""
    from polyvse.text.tokenize import tokenize

    if attribute not in ATTRIBUTES:
        raise ValueError(f"unknown attribute {attribute!r}; expected one of {', '.join(ATTRIBUTES)}")
    if lang not in REALISERS:
        raise ValueError(f"no caption grammar for language {lang!r}; known: {', '.join(REALISERS)}")
    english = {v: {EN_ADJ[v]} if attribute == "colour" else set(EN_NOUN[v]) for v in ATTRIBUTES[attribute]}
    pairs = [(w, w) for words in english.values() for w in words] if lang == "en" else glossary(lang)
    words = {v: {w for en, w in pairs if en in glosses} for v, glosses in english.items()}
    tokens = {v: {t for w in ws for t in tokenize(w, lang, segmenter)} for v, ws in words.items()}
    shared = set.intersection(*tokens.values())
    out = {}
    for value, own in tokens.items():
        elsewhere = set().union(*(t for v, t in tokens.items() if v != value))
        out[value] = sorted(own - elsewhere or own - shared)
    return out


REALISERS: dict[str, Realiser] = {
    r.lang: r
    for r in (
        English(),
        German(),
        French(),
        Czech(),
        Chinese(),
        Japanese(),
        Arabic(),
        Afrikaans(),
        Korean(),
        Russian(),
        Hindi(),
    )
}
"""One realiser per language, in the order of polyvse.LANGUAGES."""

# the words generated for the long tail (the kinds', the names' characters) are drawn so as to be none of these
lex.use_glossaries(
    {
        lang: ((() if lang == "en" else tuple(r.glossary())), tuple(r.long_tail_glossary()))
        for lang, r in REALISERS.items()
    }
)
