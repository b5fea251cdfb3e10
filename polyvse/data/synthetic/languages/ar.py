"""The Arabic realiser (ar): how a caption plan is said in Arabic."""

from __future__ import annotations

from typing import Iterable, Sequence


from polyvse.data.synthetic.plan import Mention
from polyvse.data.synthetic.languages.base import (
    _aligned,
    EN_NOUN,
    EN_ADJ,
    InflectingRealiser,
)


class Arabic(InflectingRealiser):
    """Noun then adjectives; agreement in gender and number; the dual for 2; non-human
    plurals take feminine singular adjectives; 3 has reversed gender (ثلاثة + masc. noun);
    و is written joined to the next word. Unvocalised; every noun phrase is nominative."""

    lang = "ar"
    # (gender, sg, dual (nom), pl)
    NOUN = {
        "circle": ("f", "دائرة", "دائرتان", "دوائر"),
        "square": ("m", "مربع", "مربعان", "مربعات"),
        "triangle": ("m", "مثلث", "مثلثان", "مثلثات"),
        "star": ("f", "نجمة", "نجمتان", "نجوم"),
        "cross": ("m", "صليب", "صليبان", "صلبان"),
        "ring": ("f", "حلقة", "حلقتان", "حلقات"),
    }
    # (m sg, f sg, m dual, f dual)
    ADJ = {
        "red": ("أحمر", "حمراء", "أحمران", "حمراوان"),
        "orange": ("برتقالي", "برتقالية", "برتقاليان", "برتقاليتان"),
        "yellow": ("أصفر", "صفراء", "أصفران", "صفراوان"),
        "green": ("أخضر", "خضراء", "أخضران", "خضراوان"),
        "blue": ("أزرق", "زرقاء", "أزرقان", "زرقاوان"),
        "purple": ("بنفسجي", "بنفسجية", "بنفسجيان", "بنفسجيتان"),
        "black": ("أسود", "سوداء", "أسودان", "سوداوان"),
        "white": ("أبيض", "بيضاء", "أبيضان", "بيضاوان"),
        "grey": ("رمادي", "رمادية", "رماديان", "رماديتان"),
        "brown": ("بني", "بنية", "بنيان", "بنيتان"),
        "small": ("صغير", "صغيرة", "صغيران", "صغيرتان"),
        "large": ("كبير", "كبيرة", "كبيران", "كبيرتان"),
    }
    TEXTURE = {"plain": "سادة", "stripes": "مخططة", "dots": "منقطة", "checker": "مربعة"}  # agree with خلفية (f)
    ONE = {"m": "واحد", "f": "واحدة"}
    THREE = {"m": "ثلاثة", "f": "ثلاث"}  # polarity: the numeral takes the other gender
    POS = {
        "left": ("على اليسار", "on left"),
        "right": ("على اليمين", "on right"),
        "top": ("في الأعلى", "at top"),
        "bottom": ("في الأسفل", "at bottom"),
        "centre": ("في الوسط", "in middle"),
    }
    FRAMES = {"exist": "هناك {items}", "show": "في الصورة {items}", "list": "{items}"}
    COMMA = "، "
    AND_PREFIX = "و"

    def join(self, parts: Sequence[str], clauses: bool) -> str:
        # و is repeated before every further item and written joined to it
        glue = "، " if clauses else " "
        return glue.join([parts[0]] + [self.AND_PREFIX + p for p in parts[1:]])

    SHADE = {"light": ("فاتح",), "dark": ("داكن", "غامق")}  # after the colour, uninflected ("plausible")
    KIND_PLACE = "after"

    def np(self, m: Mention, case: str) -> str:
        gender, *forms = self.NOUN[m.shape]
        sg, dual, pl = (self.with_kind(w, m) for w in forms)
        g = gender == "f"
        keys = [a for a in (m.colour, m.size) if a]
        shade = [self.shade_word(m)] if (m.colour and m.shade) else []
        if not m.plural:
            adjs = [self.ADJ[a][g] for a in keys]
            words = [sg] + adjs[:1] + shade + adjs[1:] + ([self.ONE[gender]] if m.say_count else [])
        elif m.say_count and m.count == 2:
            adjs = [self.ADJ[a][2 + g] for a in keys]
            words = [dual] + adjs[:1] + shade + adjs[1:]
        else:  # non-human plural: feminine singular adjectives
            adjs = [self.ADJ[a][1] for a in keys]
            words = ([self.THREE[gender]] if m.say_count else []) + [pl] + adjs[:1] + shade + adjs[1:]
        return " ".join(words)

    def bg(self, texture: str | None, colour: str | None) -> str:
        words = ([self.ADJ[colour][1]] if colour else []) + ([self.TEXTURE[texture]] if texture else [])
        return "على خلفية " + " ".join(words)

    def finish(self, text: str) -> str:
        return text + "."

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "واحد"),
            ("an", "واحد"),
            ("one", "واحد"),
            ("one", "واحدة"),
            ("three", "ثلاثة"),
            ("three", "ثلاث"),
            ("two", "اثنان"),
            ("there", "هناك"),
            ("is", "هناك"),
            ("are", "هناك"),
            ("in", "في"),
            ("at", "في"),
            ("on", "على"),
            ("picture", "الصورة"),
            ("the", "ال"),
            ("shows", "تظهر"),
            ("and", "و"),
            ("background", "خلفية"),
        ]
        for shape, (_, sg, dual, pl) in self.NOUN.items():
            yield from [(EN_NOUN[shape][0], sg), (EN_NOUN[shape][1], dual), (EN_NOUN[shape][1], pl)]
        for key, forms in self.ADJ.items():
            yield from ((EN_ADJ[key], f) for f in forms)
        for key, word in self.TEXTURE.items():
            yield EN_ADJ[key], word
        for phrase, gloss in self.POS.values():
            yield from _aligned(gloss, phrase)
        # forms with و joined: every word that can begin an item or a where-clause
        for shape, (_, sg, dual, pl) in self.NOUN.items():
            yield from [
                (EN_NOUN[shape][0], self.AND_PREFIX + sg),
                (EN_NOUN[shape][1], self.AND_PREFIX + dual),
                (EN_NOUN[shape][1], self.AND_PREFIX + pl),
            ]
        yield from [("three", self.AND_PREFIX + w) for w in self.THREE.values()]
        yield from [("on", "وعلى"), ("in", "وفي"), ("at", "وفي")]
