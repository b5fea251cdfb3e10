"""Captions of synthetic scenes in eleven languages, and their bilingual dictionaries.

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

Lexicon ``long_tail`` (:mod:`polyvse.data.synthetic_lexicon`, SMALR §1: real
vocabularies are long-tailed): the plan additionally carries variant *ranks*
(a noun's synonym, a shade word's synonym), the shade of each group whose colour
is said, and :class:`~polyvse.data.synthetic_lexicon.Extras` (an evaluative
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
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

import numpy as np

from polyvse.data import synthetic_lexicon as lex
from polyvse.data.synthetic_lexicon import EN_NOUN_VARIANTS, EN_SHADE, Extras, extras_glossary, realise_extras
from polyvse.data.synthetic_scene import BG_COLOURS, CHROMATIC, COLOURS, Scene

TEMPLATES: tuple[str, ...] = ("exist", "show", "list", "where")
"""exist: "there is X"; show: "the picture shows X"; list: a bare noun phrase;
where: one clause per group, position first ("on the left there is X")."""

# How often a caption says each attribute of its groups (drawn once per caption,
# so that one caption names colours, another counts and positions, ...).
ATTRIBUTE_P: dict[str, float] = {"colour": 0.7, "size": 0.4, "count": 0.45, "position": 0.5}
ALL_GROUPS_P = 0.7  # otherwise a random proper subset of the groups
TEXTURE_P = 0.35
BG_COLOUR_P = 0.3


@dataclass(frozen=True)
class Mention:
    """One object group as a caption says it; None means "not said".

    ``count`` is always the true count (it decides singular/plural);
    ``say_count`` says whether the numeral is spoken. Long-tail plans only:
    ``variant`` is the rank of the shape noun among its synonyms (0: the
    usual word), ``shade`` the said shade of the colour and ``shade_variant``
    the rank of its word, ``kind`` the said kind of the shape (its rank,
    :func:`~polyvse.data.synthetic_lexicon.kind_word`; None: the shape alone).
    """

    shape: str
    count: int
    colour: str | None = None
    size: str | None = None
    position: str | None = None
    say_count: bool = False
    variant: int = 0
    shade: str | None = None
    shade_variant: int = 0
    kind: int | None = None

    @property
    def plural(self) -> bool:
        return self.count > 1


@dataclass(frozen=True)
class CaptionPlan:
    """A language-independent choice of facts, their order and a template."""

    template: str
    mentions: tuple[Mention, ...]
    texture: str | None = None
    bg_colour: str | None = None
    extras: Extras | None = None  # long-tail plans only


def caption_plan(scene: Scene, rng: np.random.Generator, lexicon: str = "closed") -> CaptionPlan:
    """Choose which facts of ``scene`` one caption says, in which order, with which template.

    ``long_tail``: after the closed plan's draws, a variant rank per mention, the
    shade of each shaded group whose colour is said (with probability
    ``SAY_SHADE_P``), the kind of each group that is one (with probability
    ``SAY_KIND_P``) and the extras.
    """
    if lexicon not in lex.LEXICONS:
        raise ValueError(f"unknown lexicon {lexicon!r}; expected one of {lex.LEXICONS}")
    n = len(scene.groups)
    if n > 1 and rng.random() >= ALL_GROUPS_P:
        chosen = [int(i) for i in rng.choice(n, size=int(rng.integers(1, n)), replace=False)]
    else:
        chosen = list(range(n))
    order = [chosen[int(i)] for i in rng.permutation(len(chosen))]
    attrs: set[str] = set()
    while "colour" not in attrs and len(attrs) < 2:  # "one ring." is too little to tell scenes apart
        attrs = {a for a, p in ATTRIBUTE_P.items() if rng.random() < p}
    mentions = tuple(
        dict.fromkeys(  # two groups that differ only in unsaid attributes are said once
            Mention(
                shape=g.shape,
                count=g.count,
                colour=g.colour if "colour" in attrs else None,
                size=g.size if "size" in attrs else None,
                position=g.position if "position" in attrs else None,
                say_count="count" in attrs,
            )
            for g in (scene.groups[i] for i in order)
        )
    )
    texture = scene.texture if rng.random() < TEXTURE_P else None
    bg_colour = scene.bg_colour if rng.random() < BG_COLOUR_P else None
    templates = [t for t in TEMPLATES if t != "where" or "position" in attrs]
    plan = CaptionPlan(
        template=templates[int(rng.integers(len(templates)))], mentions=mentions, texture=texture, bg_colour=bg_colour
    )
    if lexicon == "closed":
        return plan
    return _long_tail_plan(plan, [scene.groups[i] for i in order], rng)


def _long_tail_plan(plan: CaptionPlan, groups: Sequence, rng: np.random.Generator) -> CaptionPlan:
    """``plan`` with variant ranks, shades, kinds and extras (a fixed number of draws per group)."""
    extended: dict[Mention, Mention] = {}
    for g in groups:
        variant = lex.zipf_rank(rng, lex.MAX_VARIANTS, lex.VARIANT_ZIPF)
        shade_variant = lex.zipf_rank(rng, 2, lex.VARIANT_ZIPF)
        say_shade = rng.random() < lex.SAY_SHADE_P
        say_kind = rng.random() < lex.SAY_KIND_P
        base = next(
            m
            for m in plan.mentions
            if m.shape == g.shape
            and m.count == g.count
            and m.colour in (None, g.colour)
            and m.size in (None, g.size)
            and m.position in (None, g.position)
        )
        if base in extended:  # a group said as the same mention as an earlier one
            continue
        shade = g.shade if (base.colour and say_shade) else None
        kind = g.kind if say_kind else None
        extended[base] = replace(
            base,
            variant=variant,
            shade=shade,
            shade_variant=shade_variant if shade else 0,
            kind=kind,
        )
    return replace(plan, mentions=tuple(extended[m] for m in plan.mentions), extras=lex.sample_extras(rng))


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


# --- helpers ------------------------------------------------------------------------------------


def _one_token(word: str) -> bool:
    """Whether ``word`` is non-empty, without spaces, punctuation or symbols: what the tokenizer keeps whole."""
    if word.isalnum():  # letters and numbers only: the common case, without a per-character lookup
        return True
    return bool(word) and not any(ch.isspace() or unicodedata.category(ch)[0] in "PS" for ch in word)


def _norm(word: str) -> str:
    # what tokenize() does to a word; "'n" (Afrikaans) loses its apostrophe there too
    return unicodedata.normalize("NFKC", word).lower().replace("'", "")


def _join(parts: Sequence[str], sep: str, last: str) -> str:
    """ "A, B and C"."""
    if len(parts) == 1:
        return parts[0]
    return sep.join(parts[:-1]) + last + parts[-1]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _bg_order(texture_word: str | None, colour_word: str | None, texture: str | None) -> list[str]:
    """Background adjectives: "plain grey" but "grey striped"."""
    words = [colour_word, texture_word] if texture != "plain" else [texture_word, colour_word]
    return [w for w in words if w]


def _aligned(en: str, word: str) -> list[tuple[str, str]]:
    """Token-by-token pairs of a phrase and its gloss, which have equally many tokens."""
    a, b = en.split(), word.split()
    if len(a) != len(b):
        raise AssertionError(f"gloss {en!r} and phrase {word!r} differ in length")
    return list(zip(a, b))


# English words, the glosses of every other language's forms.
EN_NOUN: dict[str, tuple[str, str]] = {
    "circle": ("circle", "circles"),
    "square": ("square", "squares"),
    "triangle": ("triangle", "triangles"),
    "star": ("star", "stars"),
    "cross": ("cross", "crosses"),
    "ring": ("ring", "rings"),
}
EN_ADJ: dict[str, str] = {
    **{c: c for c in COLOURS + BG_COLOURS},
    "small": "small",
    "large": "large",
    "plain": "plain",
    "stripes": "striped",
    "dots": "dotted",
    "checker": "checkered",
}
EN_NUM = {1: "one", 2: "two", 3: "three"}


def _noun_pairs(nouns: dict[str, Sequence[str]], sg: int, pl: Sequence[int]) -> list[tuple[str, str]]:
    """Gloss the singular form at index ``sg`` and the plural-like forms at ``pl`` of each noun."""
    pairs = []
    for shape, forms in nouns.items():
        pairs.append((EN_NOUN[shape][0], forms[sg]))
        pairs += [(EN_NOUN[shape][1], forms[i]) for i in pl]
    return pairs


def _phrases(entry: object) -> list[str]:
    """The forms of a lexicon entry (a form, or a tuple of forms and gender codes), in order."""
    return [entry] if isinstance(entry, str) else [f for f in entry if isinstance(f, str) and f not in ("m", "f", "n")]


def _words(entry: object) -> list[str]:
    """The words of a lexicon entry (a form, or a tuple of forms and gender codes)."""
    return [w for f in _phrases(entry) for w in f.split()]


class _Realiser:
    lang = ""
    NOUN: dict[str, object] = {}
    # long tail: shape -> the entries (in NOUN's format) of its synonyms after the usual word
    NOUN_VARIANTS: dict[str, tuple] = {}
    # long tail: shade -> its words (rank order), in the form the realiser combines with a colour
    SHADE: dict[str, tuple[str, ...]] = {}
    # long tail: where a kind's word goes: "before" / "after" the noun (a word of its own), or
    # "compound" (written as one word with the noun: de, af, zh, ja)
    KIND_PLACE = "before"

    def realise(self, plan: CaptionPlan) -> str:
        raise NotImplementedError

    def glossary(self) -> Iterable[tuple[str, str]]:
        raise NotImplementedError

    def noun_entry(self, m: Mention) -> object:
        """NOUN's entry of the mention's shape, or of its rank-``variant`` synonym."""
        alts = self.NOUN_VARIANTS.get(m.shape, ())
        if m.variant == 0 or not alts:
            return self.NOUN[m.shape]
        return alts[min(m.variant, len(alts)) - 1]

    def with_kind(self, noun: str, m: Mention) -> str:
        """``noun`` (a form of the mention's noun) with the mention's kind said, as the language
        forms such words (:attr:`KIND_PLACE`); ``noun`` itself when no kind is said."""
        if m.kind is None:
            return noun
        word = lex.kind_word(m.shape, m.kind, self.lang)
        if self.KIND_PLACE == "after":
            return noun + " " + word
        if self.KIND_PLACE == "compound":  # German nouns are capitalised: Stern -> Kobistern
            return (word.capitalize() + noun.lower()) if noun[:1].isupper() else word + noun
        return word + " " + noun

    def noun_forms(self, shape: str) -> list[tuple[str, str]]:
        """``(english word, form)`` of every form of every word for ``shape`` (its usual word and its
        synonyms) that :meth:`with_kind` can be given, each with the words of its English gloss."""
        entries = [(EN_NOUN[shape], self.NOUN[shape])]
        entries += zip(EN_NOUN_VARIANTS.get(shape, ()), self.NOUN_VARIANTS.get(shape, ()))
        return [
            (en, form)
            for en_forms, entry in entries
            for i, form in enumerate(_phrases(entry))
            for en in en_forms[min(i, 1)].split()
        ]

    def kind_glossary(self) -> Iterable[tuple[str, str]]:
        """Pairs of the kinds' words: ``(english kind word, word)``; a compound of a spaced language
        also with the English noun (``star``/``stars`` -> ``kobistern``/``kobisterne``). zh and ja
        list the kind's word alone: their words are found by segmenting, which splits the compound."""
        for shape in self.NOUN:
            for kind in range(lex.KINDS_PER_SHAPE):
                en = lex.kind_word(shape, kind, "en")
                if self.KIND_PLACE != "compound" or self.lang in ("zh", "ja"):
                    yield en, lex.kind_word(shape, kind, self.lang)
                    continue
                m = Mention(shape, 1, kind=kind)
                for en_noun, form in self.noun_forms(shape):
                    word = self.with_kind(form, m)
                    yield from ((en, word), (en_noun, word))

    def shade_word(self, m: Mention) -> str | None:
        if m.shade is None:
            return None
        words = self.SHADE[m.shade]
        return words[min(m.shade_variant, len(words) - 1)]

    def shade_forms(self, shade: str) -> Iterable[tuple[str, str]]:
        """``(english, word)`` pairs of the shade's words in every form the realiser writes."""
        for word in self.SHADE[shade]:
            yield from ((en, w) for en in EN_SHADE[shade] for w in _words(word))

    def long_tail_glossary(self) -> Iterable[tuple[str, str]]:
        """Pairs of the long-tail words the scene part of a caption can say: noun synonyms, shades.

        Every English synonym (each of its words) is paired with the language's
        word of the same rank, so that every English caption word has a gloss.
        """
        for shape, en_alts in EN_NOUN_VARIANTS.items():
            alts = self.NOUN_VARIANTS.get(shape, ())
            for rank, en_forms in enumerate(en_alts, start=1):
                entry = alts[min(rank, len(alts)) - 1] if alts else self.NOUN[shape]
                words = _words(entry)
                for en in dict.fromkeys(w for f in en_forms for w in f.split()):
                    yield from ((en, w) for w in words)
        for shade in self.SHADE:
            yield from self.shade_forms(shade)


class _Inflecting(_Realiser):
    """Languages whose sentence is a frame around a list of noun phrases (en de fr cs ru ar af).

    A plain template is ``FRAMES[template]`` with ``{items}`` (noun phrase +
    position, joined) and ``{be}`` (a verb agreeing with the mentions);
    ``where`` joins one ``WHERE`` clause per mention. The background phrase ends
    the sentence.
    """

    POS: dict[str, tuple[str, ...]] = {}  # position -> (phrase, English gloss of each of its words)
    FRAMES: dict[str, str] = {}
    CASE: dict[str, str] = {}  # template -> case of its noun phrases; nominative by default
    WHERE = "{pos} {np}"
    AND = " and "
    SEP = ", "
    WHERE_AND: str | None = None  # between where-clauses; AND by default
    COMMA = ", "

    def np(self, m: Mention, case: str) -> str:
        raise NotImplementedError

    def pos(self, position: str) -> str:
        return self.POS[position][0]

    def bg(self, texture: str | None, colour: str | None) -> str:
        raise NotImplementedError

    def be(self, mentions: Sequence[Mention]) -> str:
        return ""

    def join(self, parts: Sequence[str], clauses: bool) -> str:
        return _join(parts, self.SEP, (self.WHERE_AND or self.AND) if clauses else self.AND)

    def item(self, m: Mention, case: str) -> str:
        return self.np(m, case) + (" " + self.pos(m.position) if m.position else "")

    def realise(self, plan: CaptionPlan) -> str:
        bg = self.bg(plan.texture, plan.bg_colour) if (plan.texture or plan.bg_colour) else ""
        if plan.template == "where":
            body = self.join(
                [
                    self.WHERE.format(pos=self.pos(m.position), np=self.np(m, "nom"), be=self.be([m]))
                    for m in plan.mentions
                ],
                clauses=True,
            )
            text = body + (self.COMMA + bg if bg else "")
        else:
            case = self.CASE.get(plan.template, "nom")
            items = self.join([self.item(m, case) for m in plan.mentions], clauses=False)
            text = self.FRAMES[plan.template].format(items=items, be=self.be(plan.mentions)) + (" " + bg if bg else "")
        return self.finish(text)

    def finish(self, text: str) -> str:
        return _cap(text) + "."


# --- English ----------------------------------------------------------------------------------


class English(_Inflecting):
    lang = "en"
    POS = {
        "left": ("on the left",),
        "right": ("on the right",),
        "top": ("at the top",),
        "bottom": ("at the bottom",),
        "centre": ("in the middle",),
    }
    FRAMES = {"exist": "there {be} {items}", "show": "the picture shows {items}", "list": "{items}"}
    WHERE = "{pos} there {be} {np}"
    NOUN = EN_NOUN
    NOUN_VARIANTS = EN_NOUN_VARIANTS
    SHADE = EN_SHADE

    def np(self, m: Mention, case: str) -> str:
        adjs = [EN_ADJ[m.size]] if m.size else []
        if m.colour:
            adjs += [w for w in (self.shade_word(m), EN_ADJ[m.colour]) if w]
        words = adjs + self.with_kind(self.noun_entry(m)[m.plural], m).split()
        if m.say_count:
            det = EN_NUM[m.count]
        elif m.plural:
            det = ""
        else:
            det = "an" if words[0][0] in "aeiou" else "a"
        return " ".join(([det] if det else []) + words)

    def bg(self, texture: str | None, colour: str | None) -> str:
        adjs = _bg_order(texture and EN_ADJ[texture], colour and EN_ADJ[colour], texture)
        return "on a " + " ".join(adjs) + " background"

    def be(self, mentions: Sequence[Mention]) -> str:
        return "are" if mentions[0].plural else "is"

    def glossary(self) -> Iterable[tuple[str, str]]:
        return []


# --- German -----------------------------------------------------------------------------------


class German(_Inflecting):
    """Adjectives before the noun; mixed declension after ein, strong in the bare plural."""

    lang = "de"
    NOUN = {
        "circle": ("Kreis", "Kreise", "m"),
        "square": ("Quadrat", "Quadrate", "n"),
        "triangle": ("Dreieck", "Dreiecke", "n"),
        "star": ("Stern", "Sterne", "m"),
        "cross": ("Kreuz", "Kreuze", "n"),
        "ring": ("Ring", "Ringe", "m"),
    }
    ADJ = {
        "red": "rot",
        "orange": "orangefarben",
        "yellow": "gelb",
        "green": "grün",
        "blue": "blau",
        "purple": "violett",
        "black": "schwarz",
        "white": "weiß",
        "grey": "grau",
        "brown": "braun",
        "small": "klein",
        "large": "groß",
        "plain": "einfarbig",
        "stripes": "gestreift",
        "dots": "gepunktet",
        "checker": "kariert",
    }
    ARTICLE = {
        ("nom", "m"): "ein",
        ("nom", "n"): "ein",
        ("nom", "f"): "eine",
        ("acc", "m"): "einen",
        ("acc", "n"): "ein",
        ("acc", "f"): "eine",
        ("dat", "m"): "einem",
        ("dat", "n"): "einem",
        ("dat", "f"): "einer",
    }
    MIXED = {
        ("nom", "m"): "er",
        ("nom", "n"): "es",
        ("nom", "f"): "e",
        ("acc", "m"): "en",
        ("acc", "n"): "es",
        ("acc", "f"): "e",
        ("dat", "m"): "en",
        ("dat", "n"): "en",
        ("dat", "f"): "en",
    }
    STRONG_PLURAL = "e"  # nominative and accusative
    NUM = {2: "zwei", 3: "drei"}
    POS = {
        "left": ("links", "left"),
        "right": ("rechts", "right"),
        "top": ("oben", "top"),
        "bottom": ("unten", "bottom"),
        "centre": ("in der Mitte", "in the middle"),
    }
    FRAMES = {"exist": "es gibt {items}", "show": "das Bild zeigt {items}", "list": "{items}"}
    CASE = {"exist": "acc", "show": "acc"}
    WHERE = "{pos} {be} {np}"
    AND = " und "

    NOUN_VARIANTS = {
        "circle": (("Scheibe", "Scheiben", "f"),),
        "square": (("Viereck", "Vierecke", "n"),),
        "triangle": (("Keil", "Keile", "m"),),
        "star": (("Pentagramm", "Pentagramme", "n"),),
        "cross": (("Pluszeichen", "Pluszeichen", "n"),),
        "ring": (("Reif", "Reifen", "m"),),
    }
    SHADE = {"light": ("hell", "blass"), "dark": ("dunkel", "tief")}  # compounds: hellrot, tiefblau
    ENDINGS = ("e", "er", "es", "en")
    KIND_PLACE = "compound"  # ein Kobistern

    def np(self, m: Mention, case: str) -> str:
        sg, pl, gender = self.noun_entry(m)
        stems = ([self.ADJ[m.size]] if m.size else []) + (
            [(self.shade_word(m) or "") + self.ADJ[m.colour]] if m.colour else []
        )
        if m.plural:
            det, ending, noun = (self.NUM[m.count] if m.say_count else ""), self.STRONG_PLURAL, pl
        else:
            det, ending, noun = self.ARTICLE[case, gender], self.MIXED[case, gender], sg
        return " ".join(([det] if det else []) + [s + ending for s in stems] + [self.with_kind(noun, m)])

    def shade_forms(self, shade: str) -> Iterable[tuple[str, str]]:
        for word in self.SHADE[shade]:
            for c in CHROMATIC:
                for e in self.ENDINGS:
                    yield from ((en, word + self.ADJ[c] + e) for en in (*EN_SHADE[shade], EN_ADJ[c]))

    def bg(self, texture: str | None, colour: str | None) -> str:
        adjs = _bg_order(texture and self.ADJ[texture], colour and self.ADJ[colour], texture)
        return "auf einem " + " ".join(a + self.MIXED["dat", "m"] for a in adjs) + " Hintergrund"

    def be(self, mentions: Sequence[Mention]) -> str:
        return "sind" if mentions[0].plural else "ist"

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "ein"),
            ("a", "einen"),
            ("a", "eine"),
            ("a", "einem"),
            ("an", "ein"),
            ("an", "einen"),
            ("one", "ein"),
            ("one", "einen"),
            ("one", "eine"),
            ("two", "zwei"),
            ("three", "drei"),
            ("is", "ist"),
            ("are", "sind"),
            ("there", "es"),
            ("is", "gibt"),
            ("are", "gibt"),
            ("the", "das"),
            ("the", "der"),
            ("picture", "bild"),
            ("shows", "zeigt"),
            ("and", "und"),
            ("on", "auf"),
            ("at", "an"),
            ("background", "hintergrund"),
        ]
        yield from _noun_pairs(self.NOUN, 0, [1])
        for key, stem in self.ADJ.items():
            yield from ((EN_ADJ[key], stem + e) for e in self.ENDINGS)
        for phrase, gloss in self.POS.values():
            yield from _aligned(gloss, phrase)


# --- French -----------------------------------------------------------------------------------


class French(_Inflecting):
    """Size before the noun, colour after it; both agree in gender and number."""

    lang = "fr"
    NOUN = {
        "circle": ("cercle", "cercles", "m"),
        "square": ("carré", "carrés", "m"),
        "triangle": ("triangle", "triangles", "m"),
        "star": ("étoile", "étoiles", "f"),
        "cross": ("croix", "croix", "f"),
        "ring": ("anneau", "anneaux", "m"),
    }
    # (m sg, f sg, m pl, f pl)
    ADJ = {
        "red": ("rouge", "rouge", "rouges", "rouges"),
        "orange": ("orange",) * 4,
        "yellow": ("jaune", "jaune", "jaunes", "jaunes"),
        "green": ("vert", "verte", "verts", "vertes"),
        "blue": ("bleu", "bleue", "bleus", "bleues"),
        "purple": ("violet", "violette", "violets", "violettes"),
        "black": ("noir", "noire", "noirs", "noires"),
        "white": ("blanc", "blanche", "blancs", "blanches"),
        "grey": ("gris", "grise", "gris", "grises"),
        "brown": ("marron",) * 4,
        "small": ("petit", "petite", "petits", "petites"),
        "large": ("grand", "grande", "grands", "grandes"),
    }
    TEXTURE = {
        "plain": ("uni", "plain"),
        "stripes": ("rayé", "striped"),
        "dots": ("à pois", "with dotted"),
        "checker": ("à carreaux", "with checkered"),
    }
    NUM = {2: "deux", 3: "trois"}
    POS = {
        "left": ("à gauche", "at left"),
        "right": ("à droite", "at right"),
        "top": ("en haut", "at top"),
        "bottom": ("en bas", "at bottom"),
        "centre": ("au centre", "in middle"),
    }
    FRAMES = {"exist": "il y a {items}", "show": "cette image montre {items}", "list": "{items}"}
    WHERE = "{pos} se {be} {np}"
    AND = " et "

    NOUN_VARIANTS = {
        "circle": (("disque", "disques", "m"),),
        "square": (("carreau", "carreaux", "m"),),
        "star": (("pentagramme", "pentagrammes", "m"),),
        "ring": (("cerceau", "cerceaux", "m"),),
    }
    SHADE = {"light": ("clair", "pâle"), "dark": ("foncé", "sombre")}  # "rouge clair": both invariable
    KIND_PLACE = "after"  # une étoile kobi

    def np(self, m: Mention, case: str) -> str:
        sg, pl, gender = self.noun_entry(m)
        i = (gender == "f") + 2 * m.plural
        pre = [self.ADJ[m.size][i]] if m.size else []
        post = [self.ADJ[m.colour][i]] if m.colour else []
        if m.colour and m.shade:
            post = [self.ADJ[m.colour][0], self.shade_word(m)]
        if m.plural:  # "des étoiles", but "de petites étoiles"
            det = self.NUM[m.count] if m.say_count else ("de" if pre else "des")
        elif m.say_count:
            det = "une seule" if gender == "f" else "un seul"
        else:
            det = "une" if gender == "f" else "un"
        return " ".join([det] + pre + [self.with_kind(pl if m.plural else sg, m)] + post)

    def bg(self, texture: str | None, colour: str | None) -> str:
        words = ([self.ADJ[colour][0]] if colour else []) + ([self.TEXTURE[texture][0]] if texture else [])
        return "sur un fond " + " ".join(words)

    def be(self, mentions: Sequence[Mention]) -> str:
        return "trouvent" if mentions[0].plural else "trouve"

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "un"),
            ("a", "une"),
            ("an", "un"),
            ("an", "une"),
            ("one", "un"),
            ("one", "une"),
            ("one", "seul"),
            ("one", "seule"),
            ("two", "deux"),
            ("three", "trois"),
            ("some", "des"),
            ("some", "de"),
            ("is", "est"),
            ("are", "sont"),
            ("there", "il"),
            ("there", "y"),
            ("is", "a"),
            ("are", "a"),
            ("is", "trouve"),
            ("are", "trouvent"),
            ("itself", "se"),
            ("the", "le"),
            ("the", "la"),
            ("this", "cette"),
            ("picture", "image"),
            ("shows", "montre"),
            ("and", "et"),
            ("on", "sur"),
            ("background", "fond"),
        ]
        yield from _noun_pairs(self.NOUN, 0, [1])
        for key, forms in self.ADJ.items():
            yield from ((EN_ADJ[key], f) for f in forms)
        for phrase, gloss in [*self.TEXTURE.values(), *self.POS.values()]:
            yield from _aligned(gloss, phrase)


# --- Czech ------------------------------------------------------------------------------------


class Czech(_Inflecting):
    """No articles; hard adjectives agree in gender, number and case (nom, acc, loc)."""

    lang = "cs"
    # (gender, nom sg, acc sg, nom/acc pl)
    NOUN = {
        "circle": ("m", "kruh", "kruh", "kruhy"),
        "square": ("m", "čtverec", "čtverec", "čtverce"),
        "triangle": ("m", "trojúhelník", "trojúhelník", "trojúhelníky"),
        "star": ("f", "hvězda", "hvězdu", "hvězdy"),
        "cross": ("m", "kříž", "kříž", "kříže"),
        "ring": ("m", "kroužek", "kroužek", "kroužky"),
    }
    ADJ = {
        "red": "červen",
        "orange": "oranžov",
        "yellow": "žlut",
        "green": "zelen",
        "blue": "modr",
        "purple": "fialov",
        "black": "čern",
        "white": "bíl",
        "grey": "šed",
        "brown": "hněd",
        "small": "mal",
        "large": "velk",
        "plain": "jednobarevn",
        "stripes": "pruhovan",
        "dots": "puntíkovan",
        "checker": "kostkovan",
    }
    # hard declension; masculine nouns here are all inanimate (acc = nom)
    ENDING = {
        ("m", "nom"): "ý",
        ("m", "acc"): "ý",
        ("f", "nom"): "á",
        ("f", "acc"): "ou",
        ("n", "nom"): "é",
        ("n", "acc"): "é",
        ("m", "pl"): "é",
        ("f", "pl"): "é",
        ("n", "pl"): "á",
        ("loc", "n"): "ém",
    }
    ONE = {
        ("m", "nom"): "jeden",
        ("m", "acc"): "jeden",
        ("f", "nom"): "jedna",
        ("f", "acc"): "jednu",
        ("n", "nom"): "jedno",
        ("n", "acc"): "jedno",
    }
    TWO = {"m": "dva", "f": "dvě", "n": "dvě"}
    POS = {
        "left": ("vlevo", "left"),
        "right": ("vpravo", "right"),
        "top": ("nahoře", "top"),
        "bottom": ("dole", "bottom"),
        "centre": ("uprostřed", "middle"),
    }
    FRAMES = {"exist": "na obrázku {be} {items}", "show": "obrázek ukazuje {items}", "list": "{items}"}
    CASE = {"show": "acc"}
    WHERE = "{pos} {be} {np}"
    AND = " a "

    SHADE = {"light": ("světle", "bledě"), "dark": ("tmavě",)}  # adverbs before the colour: světle modrý
    KIND_PLACE = "after"  # hvězda kobi

    def np(self, m: Mention, case: str) -> str:
        gender, nom, acc, pl = self.NOUN[m.shape]
        stems = [self.ADJ[a] for a in (m.size, m.colour) if a]
        if m.plural:  # 2-4 take the nominative plural, as does a bare plural
            det = ("tři" if m.count == 3 else self.TWO[gender]) if m.say_count else ""
            ending, noun = self.ENDING[gender, "pl"], pl
        else:
            det = self.ONE[gender, case] if m.say_count else ""
            ending, noun = self.ENDING[gender, case], (acc if case == "acc" else nom)
        adjs = [s + ending for s in stems]
        if m.colour and m.shade:
            adjs.insert(len(adjs) - 1, self.shade_word(m))
        return " ".join(([det] if det else []) + adjs + [self.with_kind(noun, m)])

    def bg(self, texture: str | None, colour: str | None) -> str:
        adjs = _bg_order(texture and self.ADJ[texture], colour and self.ADJ[colour], texture)
        return "na " + " ".join(a + self.ENDING["loc", "n"] for a in adjs) + " pozadí"

    def be(self, mentions: Sequence[Mention]) -> str:
        return "jsou" if mentions[0].plural else "je"

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "jeden"),
            ("an", "jeden"),
            ("one", "jeden"),
            ("one", "jedna"),
            ("one", "jednu"),
            ("one", "jedno"),
            ("two", "dva"),
            ("two", "dvě"),
            ("three", "tři"),
            ("is", "je"),
            ("are", "jsou"),
            ("there", "tam"),
            ("the", "ten"),
            ("on", "na"),
            ("at", "na"),
            ("in", "na"),
            ("picture", "obrázek"),
            ("picture", "obrázku"),
            ("shows", "ukazuje"),
            ("and", "a"),
            ("background", "pozadí"),
        ]
        for shape, (_, nom, acc, pl) in self.NOUN.items():
            yield from [(EN_NOUN[shape][0], nom), (EN_NOUN[shape][0], acc), (EN_NOUN[shape][1], pl)]
        for key, stem in self.ADJ.items():
            yield from ((EN_ADJ[key], stem + e) for e in ("ý", "á", "é", "ou", "ém"))
        for phrase, gloss in self.POS.values():
            yield from _aligned(gloss, phrase)


# --- Russian ----------------------------------------------------------------------------------


class Russian(_Inflecting):
    """No articles or present copula; adjectives agree; два/три + genitive singular."""

    lang = "ru"
    # (gender, nom sg, gen sg, nom pl)
    NOUN = {
        "circle": ("m", "круг", "круга", "круги"),
        "square": ("m", "квадрат", "квадрата", "квадраты"),
        "triangle": ("m", "треугольник", "треугольника", "треугольники"),
        "star": ("f", "звезда", "звезды", "звёзды"),
        "cross": ("m", "крест", "креста", "кресты"),
        "ring": ("n", "кольцо", "кольца", "кольца"),
    }
    ADJ = {
        "red": ("красн", "hard"),
        "orange": ("оранжев", "hard"),
        "yellow": ("жёлт", "hard"),
        "green": ("зелён", "hard"),
        "blue": ("син", "soft"),
        "purple": ("фиолетов", "hard"),
        "black": ("чёрн", "hard"),
        "white": ("бел", "hard"),
        "grey": ("сер", "hard"),
        "brown": ("коричнев", "hard"),
        "small": ("маленьк", "velar"),
        "large": ("больш", "stressed"),
        "plain": ("однотонн", "hard"),
        "stripes": ("полосат", "hard"),
        "checker": ("клетчат", "hard"),
    }
    # nominative by gender, nominative plural, genitive plural, locative masculine
    ENDINGS = {
        "hard": {"m": "ый", "f": "ая", "n": "ое", "pl": "ые", "gpl": "ых", "loc": "ом"},
        "soft": {"m": "ий", "f": "яя", "n": "ее", "pl": "ие", "gpl": "их", "loc": "ем"},
        "velar": {"m": "ий", "f": "ая", "n": "ое", "pl": "ие", "gpl": "их", "loc": "ом"},
        "stressed": {"m": "ой", "f": "ая", "n": "ое", "pl": "ие", "gpl": "их", "loc": "ом"},
    }
    ONE = {"m": "один", "f": "одна", "n": "одно"}
    TWO = {"m": "два", "f": "две", "n": "два"}
    SHOWN = {"m": "изображён", "f": "изображена", "n": "изображено", "pl": "изображены"}
    POS = {
        "left": ("слева", "left"),
        "right": ("справа", "right"),
        "top": ("сверху", "top"),
        "bottom": ("снизу", "bottom"),
        "centre": ("в центре", "in middle"),
    }
    FRAMES = {"exist": "на картинке {items}", "show": "здесь {be} {items}", "list": "{items}"}
    AND = " и "
    WHERE_AND = ", а "

    def adj(self, key: str, form: str) -> str:
        stem, kind = self.ADJ[key]
        return stem + self.ENDINGS[kind][form]

    SHADE = {"light": ("светло", "бледно"), "dark": ("тёмно",)}  # compounds: светло-красный
    KIND_PLACE = "after"  # звезда кобэ

    def np(self, m: Mention, case: str) -> str:
        gender, nom, gen, pl = self.NOUN[m.shape]
        if not m.plural:
            det, form, noun = (self.ONE[gender] if m.say_count else ""), gender, nom
        elif m.say_count:  # feminine: nominative plural adjective; m/n: genitive plural
            det = self.TWO[gender] if m.count == 2 else "три"
            form, noun = ("pl" if gender == "f" else "gpl"), gen
        else:
            det, form, noun = "", "pl", pl
        adjs = [self.adj(a, form) for a in (m.size, m.colour) if a]
        if m.colour and m.shade:
            adjs[-1] = self.shade_word(m) + "-" + adjs[-1]
        return " ".join(([det] if det else []) + adjs + [self.with_kind(noun, m)])

    def bg(self, texture: str | None, colour: str | None) -> str:
        adj_texture = texture if texture in self.ADJ else None
        adjs = _bg_order(adj_texture and self.adj(adj_texture, "loc"), colour and self.adj(colour, "loc"), texture)
        return " ".join(["на", *adjs, "фоне"] + (["в", "горошек"] if texture == "dots" else []))

    def be(self, mentions: Sequence[Mention]) -> str:
        if len(mentions) > 1 or mentions[0].plural:
            return self.SHOWN["pl"]
        return self.SHOWN[self.NOUN[mentions[0].shape][0]]

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "один"),
            ("an", "один"),
            ("one", "один"),
            ("one", "одна"),
            ("one", "одно"),
            ("two", "два"),
            ("two", "две"),
            ("three", "три"),
            ("the", "этот"),
            ("there", "здесь"),
            ("here", "здесь"),
            ("is", "есть"),
            ("are", "есть"),
            ("shows", "показывает"),
            *(("shows", s) for s in self.SHOWN.values()),
            ("on", "на"),
            ("at", "на"),
            ("in", "в"),
            ("picture", "картинке"),
            ("and", "и"),
            ("and", "а"),
            ("background", "фоне"),
            ("dotted", "горошек"),
        ]
        for shape, (_, nom, gen, pl) in self.NOUN.items():
            yield from [(EN_NOUN[shape][0], nom), (EN_NOUN[shape][0], gen), (EN_NOUN[shape][1], pl)]
        for key in self.ADJ:
            yield from ((EN_ADJ[key], self.adj(key, f)) for f in ("m", "f", "n", "pl", "gpl", "loc"))
        for phrase, gloss in self.POS.values():
            yield from _aligned(gloss, phrase)


# --- Arabic -----------------------------------------------------------------------------------


class Arabic(_Inflecting):
    """Noun then adjectives; agreement in gender and number; the dual for 2; non-human
    plurals take feminine singular adjectives; 3 has reversed gender (ثلاثة + masc. noun);
    و is written joined to the next word. Unvocalised; every noun phrase is nominative."""

    lang = "ar"
    # (gender, sg, dual (nom), pl)
    NOUN = {
        "circle": ("f", "دائرة", "دائرتان", "دوائر"),
        "square": ("m", "مربع", "مربعان", "مربعات"),
        "triangle": ("m", "مثلث", "مثلثان", "مثلثات"),
        "star": ("f", "نجمة", "نجمتان", "نجوم"),
        "cross": ("m", "صليب", "صليبان", "صلبان"),
        "ring": ("f", "حلقة", "حلقتان", "حلقات"),
    }
    # (m sg, f sg, m dual, f dual)
    ADJ = {
        "red": ("أحمر", "حمراء", "أحمران", "حمراوان"),
        "orange": ("برتقالي", "برتقالية", "برتقاليان", "برتقاليتان"),
        "yellow": ("أصفر", "صفراء", "أصفران", "صفراوان"),
        "green": ("أخضر", "خضراء", "أخضران", "خضراوان"),
        "blue": ("أزرق", "زرقاء", "أزرقان", "زرقاوان"),
        "purple": ("بنفسجي", "بنفسجية", "بنفسجيان", "بنفسجيتان"),
        "black": ("أسود", "سوداء", "أسودان", "سوداوان"),
        "white": ("أبيض", "بيضاء", "أبيضان", "بيضاوان"),
        "grey": ("رمادي", "رمادية", "رماديان", "رماديتان"),
        "brown": ("بني", "بنية", "بنيان", "بنيتان"),
        "small": ("صغير", "صغيرة", "صغيران", "صغيرتان"),
        "large": ("كبير", "كبيرة", "كبيران", "كبيرتان"),
    }
    TEXTURE = {"plain": "سادة", "stripes": "مخططة", "dots": "منقطة", "checker": "مربعة"}  # agree with خلفية (f)
    ONE = {"m": "واحد", "f": "واحدة"}
    THREE = {"m": "ثلاثة", "f": "ثلاث"}  # polarity: the numeral takes the other gender
    POS = {
        "left": ("على اليسار", "on left"),
        "right": ("على اليمين", "on right"),
        "top": ("في الأعلى", "at top"),
        "bottom": ("في الأسفل", "at bottom"),
        "centre": ("في الوسط", "in middle"),
    }
    FRAMES = {"exist": "هناك {items}", "show": "في الصورة {items}", "list": "{items}"}
    COMMA = "، "
    AND_PREFIX = "و"

    def join(self, parts: Sequence[str], clauses: bool) -> str:
        # و is repeated before every further item and written joined to it
        glue = "، " if clauses else " "
        return glue.join([parts[0]] + [self.AND_PREFIX + p for p in parts[1:]])

    SHADE = {"light": ("فاتح",), "dark": ("داكن", "غامق")}  # after the colour, uninflected ("plausible")
    KIND_PLACE = "after"

    def np(self, m: Mention, case: str) -> str:
        gender, *forms = self.NOUN[m.shape]
        sg, dual, pl = (self.with_kind(w, m) for w in forms)
        g = gender == "f"
        keys = [a for a in (m.colour, m.size) if a]
        shade = [self.shade_word(m)] if (m.colour and m.shade) else []
        if not m.plural:
            adjs = [self.ADJ[a][g] for a in keys]
            words = [sg] + adjs[:1] + shade + adjs[1:] + ([self.ONE[gender]] if m.say_count else [])
        elif m.say_count and m.count == 2:
            adjs = [self.ADJ[a][2 + g] for a in keys]
            words = [dual] + adjs[:1] + shade + adjs[1:]
        else:  # non-human plural: feminine singular adjectives
            adjs = [self.ADJ[a][1] for a in keys]
            words = ([self.THREE[gender]] if m.say_count else []) + [pl] + adjs[:1] + shade + adjs[1:]
        return " ".join(words)

    def bg(self, texture: str | None, colour: str | None) -> str:
        words = ([self.ADJ[colour][1]] if colour else []) + ([self.TEXTURE[texture]] if texture else [])
        return "على خلفية " + " ".join(words)

    def finish(self, text: str) -> str:
        return text + "."

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "واحد"),
            ("an", "واحد"),
            ("one", "واحد"),
            ("one", "واحدة"),
            ("three", "ثلاثة"),
            ("three", "ثلاث"),
            ("two", "اثنان"),
            ("there", "هناك"),
            ("is", "هناك"),
            ("are", "هناك"),
            ("in", "في"),
            ("at", "في"),
            ("on", "على"),
            ("picture", "الصورة"),
            ("the", "ال"),
            ("shows", "تظهر"),
            ("and", "و"),
            ("background", "خلفية"),
        ]
        for shape, (_, sg, dual, pl) in self.NOUN.items():
            yield from [(EN_NOUN[shape][0], sg), (EN_NOUN[shape][1], dual), (EN_NOUN[shape][1], pl)]
        for key, forms in self.ADJ.items():
            yield from ((EN_ADJ[key], f) for f in forms)
        for key, word in self.TEXTURE.items():
            yield EN_ADJ[key], word
        for phrase, gloss in self.POS.values():
            yield from _aligned(gloss, phrase)
        # forms with و joined: every word that can begin an item or a where-clause
        for shape, (_, sg, dual, pl) in self.NOUN.items():
            yield from [
                (EN_NOUN[shape][0], self.AND_PREFIX + sg),
                (EN_NOUN[shape][1], self.AND_PREFIX + dual),
                (EN_NOUN[shape][1], self.AND_PREFIX + pl),
            ]
        yield from [("three", self.AND_PREFIX + w) for w in self.THREE.values()]
        yield from [("on", "وعلى"), ("in", "وفي"), ("at", "وفي")]


# --- Afrikaans --------------------------------------------------------------------------------


class Afrikaans(_Inflecting):
    """No gender; colour and size adjectives uninflected, participle adjectives take -e."""

    lang = "af"
    NOUN = {
        "circle": ("sirkel", "sirkels"),
        "square": ("vierkant", "vierkante"),
        "triangle": ("driehoek", "driehoeke"),
        "star": ("ster", "sterre"),
        "cross": ("kruis", "kruise"),
        "ring": ("ring", "ringe"),
    }
    ADJ = {
        "red": "rooi",
        "orange": "oranje",
        "yellow": "geel",
        "green": "groen",
        "blue": "blou",
        "purple": "pers",
        "black": "swart",
        "white": "wit",
        "grey": "grys",
        "brown": "bruin",
        "small": "klein",
        "large": "groot",
        "plain": "effe",
        "stripes": "gestreepte",
        "dots": "gekolde",
        "checker": "geruite",
    }
    NUM = {1: "een", 2: "twee", 3: "drie"}
    POS = {
        "left": ("links", "left"),
        "right": ("regs", "right"),
        "top": ("bo", "top"),
        "bottom": ("onder", "bottom"),
        "centre": ("in die middel", "in the middle"),
    }
    FRAMES = {"exist": "daar is {items}", "show": "die prent wys {items}", "list": "{items}"}
    WHERE = "{pos} is {np}"
    AND = " en "

    NOUN_VARIANTS = {"circle": (("skyf", "skywe"),), "square": (("teël", "teëls"),), "ring": (("hoepel", "hoepels"),)}
    SHADE = {"light": ("lig", "bleek"), "dark": ("donker",)}  # compounds: ligblou, donkerrooi
    KIND_PLACE = "compound"  # 'n kobister

    def np(self, m: Mention, case: str) -> str:
        det = self.NUM[m.count] if m.say_count else ("" if m.plural else "'n")
        adjs = ([self.ADJ[m.size]] if m.size else []) + (
            [(self.shade_word(m) or "") + self.ADJ[m.colour]] if m.colour else []
        )
        words = adjs + [self.with_kind(self.noun_entry(m)[m.plural], m)]
        return " ".join(([det] if det else []) + words)

    def shade_forms(self, shade: str) -> Iterable[tuple[str, str]]:
        for word in self.SHADE[shade]:
            for c in CHROMATIC:
                yield from ((en, word + self.ADJ[c]) for en in (*EN_SHADE[shade], EN_ADJ[c]))

    def bg(self, texture: str | None, colour: str | None) -> str:
        adjs = _bg_order(texture and self.ADJ[texture], colour and self.ADJ[colour], texture)
        return "op 'n " + " ".join(adjs) + " agtergrond"

    def finish(self, text: str) -> str:
        # a sentence that starts with 'n capitalises the next word instead
        if text.startswith("'n "):
            return "'n " + _cap(text[3:]) + "."
        return _cap(text) + "."

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "'n"),
            ("an", "'n"),
            ("one", "een"),
            ("two", "twee"),
            ("three", "drie"),
            ("there", "daar"),
            ("is", "is"),
            ("are", "is"),
            ("the", "die"),
            ("picture", "prent"),
            ("shows", "wys"),
            ("and", "en"),
            ("on", "op"),
            ("at", "op"),
            ("background", "agtergrond"),
        ]
        yield from _noun_pairs(self.NOUN, 0, [1])
        yield from ((EN_ADJ[key], word) for key, word in self.ADJ.items())
        for phrase, gloss in self.POS.values():
            yield from _aligned(gloss, phrase)


# --- Hindi ------------------------------------------------------------------------------------


class Hindi(_Realiser):
    """SOV with a final copula है/हैं; -ā adjectives agree (m sg -ā, m pl -e, f -ī)."""

    lang = "hi"
    NOUN = {
        "circle": ("m", "गोला", "गोले"),
        "square": ("m", "वर्ग", "वर्ग"),
        "triangle": ("m", "त्रिभुज", "त्रिभुज"),
        "star": ("m", "तारा", "तारे"),
        "cross": ("m", "क्रॉस", "क्रॉस"),
        "ring": ("m", "छल्ला", "छल्ले"),
    }
    # (m sg, m pl, f); invariable adjectives repeat one form
    ADJ = {
        "red": ("लाल",) * 3,
        "orange": ("नारंगी",) * 3,
        "yellow": ("पीला", "पीले", "पीली"),
        "green": ("हरा", "हरे", "हरी"),
        "blue": ("नीला", "नीले", "नीली"),
        "purple": ("बैंगनी",) * 3,
        "black": ("काला", "काले", "काली"),
        "white": ("सफ़ेद",) * 3,
        "grey": ("स्लेटी",) * 3,
        "brown": ("भूरा", "भूरे", "भूरी"),
        "small": ("छोटा", "छोटे", "छोटी"),
        "large": ("बड़ा", "बड़े", "बड़ी"),
    }
    # predicative of पृष्ठभूमि (f)
    TEXTURE = {"plain": "सादी", "stripes": "धारीदार", "dots": "बिंदीदार", "checker": "चारखानेदार"}
    NUM = {1: "एक", 2: "दो", 3: "तीन"}
    POS = {
        "left": ("बाईं ओर", "left side"),
        "right": ("दाईं ओर", "right side"),
        "top": ("ऊपर", "top"),
        "bottom": ("नीचे", "bottom"),
        "centre": ("बीच में", "middle in"),
    }

    SHADE = {"light": ("हल्का",), "dark": ("गहरा",)}
    SHADE_FORMS = {"हल्का": ("हल्का", "हल्के", "हल्की"), "गहरा": ("गहरा", "गहरे", "गहरी")}  # agree like -ā adjectives

    def np(self, m: Mention) -> str:
        gender, sg, pl = self.NOUN[m.shape]
        form = 2 if gender == "f" else int(m.plural)
        det = self.NUM[m.count] if (m.say_count or not m.plural) else "कुछ"
        adjs = [self.ADJ[a][form] for a in (m.size, m.colour) if a]
        if m.colour and m.shade:
            adjs.insert(len(adjs) - 1, self.SHADE_FORMS[self.shade_word(m)][form])
        return " ".join([det] + adjs + [self.with_kind(pl if m.plural else sg, m)])

    def shade_forms(self, shade: str) -> Iterable[tuple[str, str]]:
        for word in self.SHADE[shade]:
            yield from ((en, f) for en in EN_SHADE[shade] for f in self.SHADE_FORMS[word])

    @staticmethod
    def be(plural: bool) -> str:
        return "हैं" if plural else "है"

    def realise(self, plan: CaptionPlan) -> str:
        ms = plan.mentions
        pos = {m: self.POS[m.position][0] for m in ms if m.position}
        if plan.template in ("exist", "where"):  # exist: subject, place, verb; where: place first
            clauses = []
            for m in ms:
                parts = [self.np(m)] + ([pos[m]] if m in pos else [])
                if plan.template == "where":
                    parts.reverse()
                clauses.append(" ".join(parts + [self.be(m.plural)]))
            text = _join(clauses, ", ", " और ")
        else:
            items = _join([" ".join(([pos[m]] if m in pos else []) + [self.np(m)]) for m in ms], ", ", " और ")
            if plan.template == "show":
                text = "तस्वीर में " + items + " " + self.be(len(ms) > 1 or ms[0].plural)
            else:
                text = items
        text += "।"
        if plan.texture or plan.bg_colour:
            words = _bg_order(
                plan.texture and self.TEXTURE[plan.texture],
                plan.bg_colour and self.ADJ[plan.bg_colour][2],
                plan.texture,
            )
            text += " पृष्ठभूमि " + " ".join(words) + " है।"
        return text

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "एक"),
            ("an", "एक"),
            ("one", "एक"),
            ("two", "दो"),
            ("three", "तीन"),
            ("some", "कुछ"),
            ("is", "है"),
            ("are", "हैं"),
            ("there", "वहाँ"),
            ("the", "यह"),
            ("and", "और"),
            ("picture", "तस्वीर"),
            ("shows", "दिखाती"),
            ("in", "में"),
            ("on", "पर"),
            ("at", "पर"),
            ("background", "पृष्ठभूमि"),
        ]
        yield from _noun_pairs({k: v[1:] for k, v in self.NOUN.items()}, 0, [1])
        for key, forms in self.ADJ.items():
            yield from ((EN_ADJ[key], f) for f in forms)
        yield from ((EN_ADJ[key], w) for key, w in self.TEXTURE.items())
        for phrase, gloss in self.POS.values():
            yield from _aligned(gloss, phrase)


# --- Korean -----------------------------------------------------------------------------------


def _has_final_consonant(word: str) -> bool:
    """Whether the last Hangul syllable of ``word`` has a final consonant (batchim)."""
    code = ord(word[-1]) - 0xAC00
    return 0 <= code < 11172 and code % 28 != 0


class Korean(_Realiser):
    """SOV; numeral + classifier 개 after the noun; particles chosen by the final consonant."""

    lang = "ko"
    NOUN = {"circle": "원", "square": "사각형", "triangle": "삼각형", "star": "별", "cross": "십자가", "ring": "고리"}
    COLOUR = {
        "red": "빨간",
        "orange": "주황색",
        "yellow": "노란",
        "green": "초록색",
        "blue": "파란",
        "purple": "보라색",
        "black": "검은",
        "white": "흰",
    }
    BG_COLOUR = {"grey": "회색", "brown": "갈색", "blue": "파란색", "green": "초록색"}
    SIZE = {"small": "작은", "large": "큰"}
    TEXTURE = {"plain": "단색", "stripes": "줄무늬", "dots": "물방울무늬", "checker": "체크무늬"}
    NUM = {1: "한", 2: "두", 3: "세"}
    POS = {"left": "왼쪽", "right": "오른쪽", "top": "위쪽", "bottom": "아래쪽", "centre": "가운데"}
    SUBJECT, OBJECT, WITH = ("이", "가"), ("을", "를"), ("과", "와")  # (after a consonant, after a vowel)

    @staticmethod
    def particle(word: str, pair: tuple[str, str]) -> str:
        return word + pair[0 if _has_final_consonant(word) else 1]

    SHADE = {"light": ("연한", "옅은"), "dark": ("진한", "짙은")}

    def np(self, m: Mention) -> str:
        colour = m.colour and " ".join(w for w in (self.shade_word(m), self.COLOUR[m.colour]) if w)
        core = " ".join(
            [w for w in (m.size and self.SIZE[m.size], colour) if w] + [self.with_kind(self.NOUN[m.shape], m)]
        )
        if m.say_count:
            return f"{core} {self.NUM[m.count]} 개"
        return f"여러 개의 {core}" if m.plural else core

    def realise(self, plan: CaptionPlan) -> str:
        ms = plan.mentions
        if plan.template == "exist":
            clauses = [
                (self.POS[m.position] + "에 " if m.position else "") + self.particle(self.np(m), self.SUBJECT)
                for m in ms
            ]
            text = " ".join(c + (" 있고," if i < len(ms) - 1 else " 있습니다.") for i, c in enumerate(clauses))
        elif plan.template == "where":
            text = (
                ", ".join(self.POS[m.position] + "에는 " + self.particle(self.np(m), self.SUBJECT) for m in ms)
                + " 있습니다."
            )
        else:
            items = [(self.POS[m.position] + "의 " if m.position else "") + self.np(m) for m in ms]
            if len(items) > 1:  # "A, B와 C"
                items = items[:-2] + [self.particle(items[-2], self.WITH) + " " + items[-1]]
            listed = ", ".join(items)
            text = (
                "이 그림은 " + self.particle(listed, self.OBJECT) + " 보여 줍니다."
                if plan.template == "show"
                else listed + "."
            )
        if plan.texture or plan.bg_colour:
            words = _bg_order(
                plan.texture and self.TEXTURE[plan.texture],
                plan.bg_colour and self.BG_COLOUR[plan.bg_colour],
                plan.texture,
            )
            text += " 배경은 " + " ".join(words) + "입니다."
        return text

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "한"),
            ("an", "한"),
            ("one", "한"),
            ("two", "두"),
            ("three", "세"),
            ("some", "여러"),
            ("piece", "개"),
            ("of", "개의"),
            ("there", "있습니다"),
            ("is", "있습니다"),
            ("are", "있습니다"),
            ("is", "있고"),
            ("are", "있고"),
            ("is", "입니다"),
            ("the", "이"),
            ("picture", "그림은"),
            ("shows", "보여"),
            ("shows", "줍니다"),
            ("on", "에"),
            ("at", "에"),
            ("in", "에"),
            ("and", "그리고"),
            ("background", "배경은"),
        ]
        for word in ("개", *self.NOUN.values()):
            shape = next((k for k, v in self.NOUN.items() if v == word), None)
            for gloss in EN_NOUN[shape] if shape else ("piece",):
                yield from [(gloss, word)] + [
                    (gloss, self.particle(word, p)) for p in (self.SUBJECT, self.OBJECT, self.WITH)
                ]
        yield from ((EN_ADJ[k], w) for k, w in {**self.COLOUR, **self.SIZE}.items())
        for key, word in {**self.BG_COLOUR, **self.TEXTURE}.items():
            yield from [(EN_ADJ[key], word), (EN_ADJ[key], word + "입니다")]
        pos_gloss = {"left": "left", "right": "right", "top": "top", "bottom": "bottom", "centre": "middle"}
        for key, word in self.POS.items():
            yield from [(pos_gloss[key], word + s) for s in ("에", "에는", "의")]


# --- Chinese ----------------------------------------------------------------------------------


class Chinese(_Realiser):
    """No spaces; numeral + classifier (个, 颗 for stars) before the noun; 的 after a colour;
    places are subjects of existential 有 / 是 clauses."""

    lang = "zh"
    NOUN = {
        "circle": ("圆形", "个"),
        "square": ("正方形", "个"),
        "triangle": ("三角形", "个"),
        "star": ("星星", "颗"),
        "cross": ("十字", "个"),
        "ring": ("圆环", "个"),
    }
    COLOUR = {
        "red": "红色",
        "orange": "橙色",
        "yellow": "黄色",
        "green": "绿色",
        "blue": "蓝色",
        "purple": "紫色",
        "black": "黑色",
        "white": "白色",
        "grey": "灰色",
        "brown": "棕色",
    }
    SIZE = {"small": "小", "large": "大"}
    TEXTURE = {"plain": "纯色", "stripes": "条纹", "dots": "圆点", "checker": "格子"}
    NUM = {1: "一", 2: "两", 3: "三"}
    POS = {"left": "左边", "right": "右边", "top": "上方", "bottom": "下方", "centre": "中间"}

    SHADE = {"light": ("浅", "淡"), "dark": ("深",)}  # compounds: 浅红色
    KIND_PLACE = "compound"  # 科比星星

    def np(self, m: Mention) -> str:
        noun, classifier = self.NOUN[m.shape]
        quantity = "一些" if (m.plural and not m.say_count) else self.NUM[m.count] + classifier
        return (
            quantity
            + ((self.shade_word(m) or "") + self.COLOUR[m.colour] + "的" if m.colour else "")
            + (self.SIZE[m.size] if m.size else "")
            + self.with_kind(noun, m)
        )

    def realise(self, plan: CaptionPlan) -> str:
        ms = plan.mentions
        if plan.template in ("exist", "where") and all(m.position for m in ms):
            verb = "有" if plan.template == "exist" else "是"
            text = "，".join(self.POS[m.position] + verb + self.np(m) for m in ms)
        else:
            items = _join([(self.POS[m.position] + "的" if m.position else "") + self.np(m) for m in ms], "、", "和")
            text = {"exist": "图中有", "show": "这张图片显示了"}.get(plan.template, "") + items
        if plan.texture or plan.bg_colour:
            if plan.texture == "plain" and plan.bg_colour:
                desc = "纯" + self.COLOUR[plan.bg_colour]
            else:
                desc = "".join(
                    _bg_order(
                        plan.texture and self.TEXTURE[plan.texture],
                        plan.bg_colour and self.COLOUR[plan.bg_colour],
                        plan.texture,
                    )
                )
            text += "，背景是" + desc + "的"
        return text + "。"

    def shade_forms(self, shade: str) -> Iterable[tuple[str, str]]:
        for word in self.SHADE[shade]:
            for en in EN_SHADE[shade]:
                yield en, word
                yield from ((en, word + self.COLOUR[c]) for c in CHROMATIC)
            yield from ((EN_ADJ[c], word + self.COLOUR[c]) for c in CHROMATIC)

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "一个"),
            ("an", "一个"),
            ("one", "一个"),
            ("two", "两个"),
            ("three", "三个"),
            ("some", "一些"),
            ("there", "有"),
            ("is", "有"),
            ("are", "有"),
            ("is", "是"),
            ("are", "是"),
            ("the", "这张"),
            ("picture", "图片"),
            ("picture", "图中"),
            ("shows", "显示了"),
            ("of", "的"),
            ("and", "和"),
            ("on", "在"),
            ("at", "在"),
            ("in", "在"),
            ("background", "背景"),
            ("plain", "纯"),
        ]
        for shape, (noun, classifier) in self.NOUN.items():
            yield from [(EN_NOUN[shape][0], noun), (EN_NOUN[shape][1], noun)]
            yield from [(EN_NUM[n], self.NUM[n] + classifier) for n in (1, 2, 3)]
        yield from ((EN_ADJ[k], w) for k, w in {**self.COLOUR, **self.SIZE, **self.TEXTURE}.items())
        pos_gloss = {"left": "left", "right": "right", "top": "top", "bottom": "bottom", "centre": "middle"}
        yield from ((pos_gloss[k], w) for k, w in self.POS.items())


# --- Japanese ---------------------------------------------------------------------------------


class Japanese(_Realiser):
    """Kana only, no spaces; SOV with あります last; quantifiers ひとつ/ふたつ/みっつ float
    after が; places marked with に (には in the where-template)."""

    lang = "ja"
    NOUN = {
        "circle": "まる",
        "square": "しかく",
        "triangle": "さんかく",
        "star": "ほし",
        "cross": "じゅうじ",
        "ring": "リング",
    }
    COLOUR = {
        "red": "あかい",
        "orange": "オレンジいろの",
        "yellow": "きいろい",
        "green": "みどりいろの",
        "blue": "あおい",
        "purple": "むらさきいろの",
        "black": "くろい",
        "white": "しろい",
    }
    BG_COLOUR = {"grey": "はいいろ", "brown": "ちゃいろ", "blue": "あおいろ", "green": "みどりいろ"}
    SIZE = {"small": "ちいさな", "large": "おおきな"}
    TEXTURE = {"plain": "むじ", "stripes": "しまもよう", "dots": "みずたまもよう", "checker": "チェックもよう"}
    NUM = {1: "ひとつ", 2: "ふたつ", 3: "みっつ"}
    SOME = "いくつか"
    POS = {"left": "ひだり", "right": "みぎ", "top": "うえ", "bottom": "した", "centre": "まんなか"}

    SHADE = {"light": ("うすい",), "dark": ("こい",)}
    KIND_PLACE = "compound"  # コビほし

    def core(self, m: Mention) -> str:
        return (
            (self.SIZE[m.size] if m.size else "")
            + (self.shade_word(m) or "")
            + (self.COLOUR[m.colour] if m.colour else "")
            + self.with_kind(self.NOUN[m.shape], m)
        )

    def quantity(self, m: Mention) -> str:
        return self.NUM[m.count] if m.say_count else (self.SOME if m.plural else "")

    def realise(self, plan: CaptionPlan) -> str:
        ms = plan.mentions
        if plan.template == "exist":
            clauses = [
                (self.POS[m.position] + "に" if m.position else "") + self.core(m) + "が" + self.quantity(m) for m in ms
            ]
            text = "あり、".join(clauses) + "あります。"
        elif plan.template == "where":
            text = "、".join(self.POS[m.position] + "には" + self.core(m) + "が" + self.quantity(m) for m in ms)
            text += "あります。"
        else:
            items = "と".join(
                (self.POS[m.position] + "の" if m.position else "")
                + (self.quantity(m) + "の" if self.quantity(m) else "")
                + self.core(m)
                for m in ms
            )
            text = ("このえには" + items + "がかいてあります。") if plan.template == "show" else items + "。"
        if plan.texture or plan.bg_colour:
            words = _bg_order(
                plan.texture and self.TEXTURE[plan.texture],
                plan.bg_colour and self.BG_COLOUR[plan.bg_colour],
                plan.texture,
            )
            text += "はいけいは" + "の".join(words) + "です。"
        return text

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "ひとつ"),
            ("an", "ひとつ"),
            ("one", "ひとつ"),
            ("two", "ふたつ"),
            ("three", "みっつ"),
            ("some", "いくつか"),
            ("there", "あります"),
            ("is", "あります"),
            ("are", "あります"),
            ("is", "あり"),
            ("is", "です"),
            ("the", "この"),
            ("picture", "え"),
            ("shows", "かいてあります"),
            ("on", "に"),
            ("at", "に"),
            ("in", "に"),
            ("in", "には"),
            ("of", "の"),
            ("and", "と"),
            ("is", "が"),
            ("is", "は"),
            ("background", "はいけい"),
        ]  # particles: the nearest English
        yield from _noun_pairs({k: (v, v) for k, v in self.NOUN.items()}, 0, [1])
        for key, word in {**self.COLOUR, **self.SIZE}.items():
            yield EN_ADJ[key], word
        yield from ((EN_ADJ[k], w.removesuffix("の")) for k, w in self.COLOUR.items() if w.endswith("の"))
        yield from ((EN_ADJ[k], w) for k, w in {**self.BG_COLOUR, **self.TEXTURE}.items())
        pos_gloss = {"left": "left", "right": "right", "top": "top", "bottom": "bottom", "centre": "middle"}
        yield from ((pos_gloss[k], w) for k, w in self.POS.items())


REALISERS: dict[str, _Realiser] = {
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
