"""The French realiser (fr): how a caption plan is said in French."""

from __future__ import annotations

from typing import Iterable, Sequence


from polyvse.data.synthetic.plan import Mention
from polyvse.data.synthetic.languages.base import (
    _aligned,
    EN_ADJ,
    _noun_pairs,
    InflectingRealiser,
)


class French(InflectingRealiser):
    """Size before the noun, colour after it; both agree in gender and number."""

    lang = "fr"
    NOUN = {
        "circle": ("cercle", "cercles", "m"),
        "square": ("carré", "carrés", "m"),
        "triangle": ("triangle", "triangles", "m"),
        "star": ("étoile", "étoiles", "f"),
        "cross": ("croix", "croix", "f"),
        "ring": ("anneau", "anneaux", "m"),
    }
    # (m sg, f sg, m pl, f pl)
    ADJ = {
        "red": ("rouge", "rouge", "rouges", "rouges"),
        "orange": ("orange",) * 4,
        "yellow": ("jaune", "jaune", "jaunes", "jaunes"),
        "green": ("vert", "verte", "verts", "vertes"),
        "blue": ("bleu", "bleue", "bleus", "bleues"),
        "purple": ("violet", "violette", "violets", "violettes"),
        "black": ("noir", "noire", "noirs", "noires"),
        "white": ("blanc", "blanche", "blancs", "blanches"),
        "grey": ("gris", "grise", "gris", "grises"),
        "brown": ("marron",) * 4,
        "small": ("petit", "petite", "petits", "petites"),
        "large": ("grand", "grande", "grands", "grandes"),
    }
    TEXTURE = {
        "plain": ("uni", "plain"),
        "stripes": ("rayé", "striped"),
        "dots": ("à pois", "with dotted"),
        "checker": ("à carreaux", "with checkered"),
    }
    NUM = {2: "deux", 3: "trois"}
    POS = {
        "left": ("à gauche", "at left"),
        "right": ("à droite", "at right"),
        "top": ("en haut", "at top"),
        "bottom": ("en bas", "at bottom"),
        "centre": ("au centre", "in middle"),
    }
    FRAMES = {"exist": "il y a {items}", "show": "cette image montre {items}", "list": "{items}"}
    WHERE = "{pos} se {be} {np}"
    AND = " et "

    NOUN_VARIANTS = {
        "circle": (("disque", "disques", "m"),),
        "square": (("carreau", "carreaux", "m"),),
        "star": (("pentagramme", "pentagrammes", "m"),),
        "ring": (("cerceau", "cerceaux", "m"),),
    }
    SHADE = {"light": ("clair", "pâle"), "dark": ("foncé", "sombre")}  # "rouge clair": both invariable
    KIND_PLACE = "after"  # une étoile kobi

    def np(self, m: Mention, case: str) -> str:
        sg, pl, gender = self.noun_entry(m)
        i = (gender == "f") + 2 * m.plural
        pre = [self.ADJ[m.size][i]] if m.size else []
        post = [self.ADJ[m.colour][i]] if m.colour else []
        if m.colour and m.shade:
            post = [self.ADJ[m.colour][0], self.shade_word(m)]
        if m.plural:  # "des étoiles", but "de petites étoiles"
            det = self.NUM[m.count] if m.say_count else ("de" if pre else "des")
        elif m.say_count:
            det = "une seule" if gender == "f" else "un seul"
        else:
            det = "une" if gender == "f" else "un"
        return " ".join([det] + pre + [self.with_kind(pl if m.plural else sg, m)] + post)

    def bg(self, texture: str | None, colour: str | None) -> str:
        words = ([self.ADJ[colour][0]] if colour else []) + ([self.TEXTURE[texture][0]] if texture else [])
        return "sur un fond " + " ".join(words)

    def be(self, mentions: Sequence[Mention]) -> str:
        return "trouvent" if mentions[0].plural else "trouve"

    def glossary(self) -> Iterable[tuple[str, str]]:
        yield from [
            ("a", "un"),
            ("a", "une"),
            ("an", "un"),
            ("an", "une"),
            ("one", "un"),
            ("one", "une"),
            ("one", "seul"),
            ("one", "seule"),
            ("two", "deux"),
            ("three", "trois"),
            ("some", "des"),
            ("some", "de"),
            ("is", "est"),
            ("are", "sont"),
            ("there", "il"),
            ("there", "y"),
            ("is", "a"),
            ("are", "a"),
            ("is", "trouve"),
            ("are", "trouvent"),
            ("itself", "se"),
            ("the", "le"),
            ("the", "la"),
            ("this", "cette"),
            ("picture", "image"),
            ("shows", "montre"),
            ("and", "et"),
            ("on", "sur"),
            ("background", "fond"),
        ]
        yield from _noun_pairs(self.NOUN, 0, [1])
        for key, forms in self.ADJ.items():
            yield from ((EN_ADJ[key], f) for f in forms)
        for phrase, gloss in [*self.TEXTURE.values(), *self.POS.values()]:
            yield from _aligned(gloss, phrase)
