"""The Afrikaans realiser (af): how a caption plan is said in Afrikaans."""

from __future__ import annotations

from typing import Iterable


from polyvse.data.synthetic.lexicon import EN_SHADE
from polyvse.data.synthetic.plan import Mention
from polyvse.data.synthetic.scene import CHROMATIC
from polyvse.data.synthetic.languages.base import (
    _cap,
    _bg_order,
    _aligned,
    EN_ADJ,
    _noun_pairs,
    InflectingRealiser,
)


class Afrikaans(InflectingRealiser):
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
