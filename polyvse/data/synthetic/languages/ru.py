"""The Russian realiser (ru): how a caption plan is said in Russian."""

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


class Russian(InflectingRealiser):
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
