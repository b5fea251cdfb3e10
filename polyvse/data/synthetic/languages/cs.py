"""The Czech realiser (cs): how a caption plan is said in Czech."""

from __future__ import annotations

from typing import Iterable, Sequence


from polyvse.data.synthetic.plan import Mention
from polyvse.data.synthetic.languages.base import (
    _bg_order,
    _aligned,
    EN_NOUN,
    EN_ADJ,
    InflectingRealiser,
)


class Czech(InflectingRealiser):
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
