"""The German realiser (de): how a caption plan is said in German."""

from __future__ import annotations

from typing import Iterable, Sequence


from polyvse.data.synthetic.lexicon import EN_SHADE
from polyvse.data.synthetic.plan import Mention
from polyvse.data.synthetic.scene import CHROMATIC
from polyvse.data.synthetic.languages.base import (
    _bg_order,
    _aligned,
    EN_ADJ,
    _noun_pairs,
    InflectingRealiser,
)


class German(InflectingRealiser):
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
