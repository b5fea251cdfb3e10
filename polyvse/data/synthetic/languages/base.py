"""What every language's realiser shares: the English glosses, the helpers that join, capitalise and
normalise words, and the two base classes (:class:`Realiser`; :class:`InflectingRealiser` for the
languages whose adjectives and nouns agree in gender, number or case)."""

from __future__ import annotations

import unicodedata
from typing import Iterable, Sequence


from polyvse.data.synthetic import lexicon as lex
from polyvse.data.synthetic.lexicon import EN_NOUN_VARIANTS, EN_SHADE
from polyvse.data.synthetic.plan import CaptionPlan, Mention
from polyvse.data.synthetic.scene import BG_COLOURS, COLOURS


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


class Realiser:
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


class InflectingRealiser(Realiser):
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
