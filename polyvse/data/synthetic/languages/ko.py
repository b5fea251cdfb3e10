"""The Korean realiser (ko): how a caption plan is said in Korean."""

from __future__ import annotations

from typing import Iterable


from polyvse.data.synthetic.plan import CaptionPlan, Mention
from polyvse.data.synthetic.languages.base import (
    _bg_order,
    EN_NOUN,
    EN_ADJ,
    Realiser,
)


def _has_final_consonant(word: str) -> bool:
    """Whether the last Hangul syllable of ``word`` has a final consonant (batchim)."""
    code = ord(word[-1]) - 0xAC00
    return 0 <= code < 11172 and code % 28 != 0


class Korean(Realiser):
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
