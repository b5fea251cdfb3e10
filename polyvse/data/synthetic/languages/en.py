"""The English realiser (en): how a caption plan is said in English."""

from __future__ import annotations

from typing import Iterable, Sequence


from polyvse.data.synthetic.lexicon import EN_NOUN_VARIANTS, EN_SHADE
from polyvse.data.synthetic.plan import Mention
from polyvse.data.synthetic.languages.base import (
    _bg_order,
    EN_NOUN,
    EN_ADJ,
    EN_NUM,
    InflectingRealiser,
)


class English(InflectingRealiser):
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
