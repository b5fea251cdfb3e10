"""The Hindi realiser (hi): how a caption plan is said in Hindi."""

from __future__ import annotations

from typing import Iterable


from polyvse.data.synthetic.lexicon import EN_SHADE
from polyvse.data.synthetic.plan import CaptionPlan, Mention
from polyvse.data.synthetic.languages.base import (
    _join,
    _bg_order,
    _aligned,
    EN_ADJ,
    _noun_pairs,
    Realiser,
)


class Hindi(Realiser):
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
