"""The Japanese realiser (ja): how a caption plan is said in Japanese."""

from __future__ import annotations

from typing import Iterable


from polyvse.data.synthetic.plan import CaptionPlan, Mention
from polyvse.data.synthetic.languages.base import (
    _bg_order,
    EN_ADJ,
    _noun_pairs,
    Realiser,
)


class Japanese(Realiser):
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
