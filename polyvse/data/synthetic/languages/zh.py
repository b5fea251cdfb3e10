"""The Chinese realiser (zh): how a caption plan is said in Chinese."""

from __future__ import annotations

from typing import Iterable


from polyvse.data.synthetic.lexicon import EN_SHADE
from polyvse.data.synthetic.plan import CaptionPlan, Mention
from polyvse.data.synthetic.scene import CHROMATIC
from polyvse.data.synthetic.languages.base import (
    _join,
    _bg_order,
    EN_NOUN,
    EN_ADJ,
    EN_NUM,
    Realiser,
)


class Chinese(Realiser):
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
