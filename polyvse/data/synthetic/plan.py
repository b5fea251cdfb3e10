"""A caption's plan: which facts of a scene one caption says, in which order, with which template.

The plan is language-independent and carries the values themselves, so that the same choice of facts can
be said in several languages (Multi30K's fr/cs captions translate English caption 1, MULE §Experiments
"Datasets"): :func:`caption_plan` draws it, :func:`polyvse.data.synthetic.languages.realise` says it.

Lexicon ``long_tail`` (:mod:`polyvse.data.synthetic.lexicon`, SMALR §1: real vocabularies are long-tailed):
the plan additionally carries variant *ranks* (a noun's synonym, a shade word's synonym), the shade of each
group whose colour is said, and :class:`~polyvse.data.synthetic.lexicon.Extras` (an evaluative sentence, a
photographer, a place). Ranks are drawn in the plan, so one plan says the same concept's rank-``r`` word in
every language. Every long-tail draw comes after the closed plan's draws, and a closed plan has none of the
new fields set, so closed captions are byte-identical to those of the closed-only generator.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from polyvse.data.synthetic import lexicon as lex
from polyvse.data.synthetic.lexicon import Extras
from polyvse.data.synthetic.scene import Scene

TEMPLATES: tuple[str, ...] = ("exist", "show", "list", "where")
"""exist: "there is X"; show: "the picture shows X"; list: a bare noun phrase;
where: one clause per group, position first ("on the left there is X")."""

# How often a caption says each attribute of its groups (drawn once per caption,
# so that one caption names colours, another counts and positions, ...).
ATTRIBUTE_P: dict[str, float] = {"colour": 0.7, "size": 0.4, "count": 0.45, "position": 0.5}
ALL_GROUPS_P = 0.7  # otherwise a random proper subset of the groups
TEXTURE_P = 0.35
BG_COLOUR_P = 0.3


@dataclass(frozen=True)
class Mention:
    """One object group as a caption says it; None means "not said".

    ``count`` is always the true count (it decides singular/plural);
    ``say_count`` says whether the numeral is spoken. Long-tail plans only:
    ``variant`` is the rank of the shape noun among its synonyms (0: the
    usual word), ``shade`` the said shade of the colour and ``shade_variant``
    the rank of its word, ``kind`` the said kind of the shape (its rank,
    :func:`~polyvse.data.synthetic.lexicon.kind_word`; None: the shape alone).
    """

    shape: str
    count: int
    colour: str | None = None
    size: str | None = None
    position: str | None = None
    say_count: bool = False
    variant: int = 0
    shade: str | None = None
    shade_variant: int = 0
    kind: int | None = None

    @property
    def plural(self) -> bool:
        return self.count > 1


@dataclass(frozen=True)
class CaptionPlan:
    """A language-independent choice of facts, their order and a template."""

    template: str
    mentions: tuple[Mention, ...]
    texture: str | None = None
    bg_colour: str | None = None
    extras: Extras | None = None  # long-tail plans only


def caption_plan(scene: Scene, rng: np.random.Generator, lexicon: str = "closed") -> CaptionPlan:
    """Choose which facts of ``scene`` one caption says, in which order, with which template.

    ``long_tail``: after the closed plan's draws, a variant rank per mention, the
    shade of each shaded group whose colour is said (with probability
    ``SAY_SHADE_P``), the kind of each group that is one (with probability
    ``SAY_KIND_P``) and the extras.
    """
    if lexicon not in lex.LEXICONS:
        raise ValueError(f"unknown lexicon {lexicon!r}; expected one of {lex.LEXICONS}")
    n = len(scene.groups)
    if n > 1 and rng.random() >= ALL_GROUPS_P:
        chosen = [int(i) for i in rng.choice(n, size=int(rng.integers(1, n)), replace=False)]
    else:
        chosen = list(range(n))
    order = [chosen[int(i)] for i in rng.permutation(len(chosen))]
    attrs: set[str] = set()
    while "colour" not in attrs and len(attrs) < 2:  # "one ring." is too little to tell scenes apart
        attrs = {a for a, p in ATTRIBUTE_P.items() if rng.random() < p}
    mentions = tuple(
        dict.fromkeys(  # two groups that differ only in unsaid attributes are said once
            Mention(
                shape=g.shape,
                count=g.count,
                colour=g.colour if "colour" in attrs else None,
                size=g.size if "size" in attrs else None,
                position=g.position if "position" in attrs else None,
                say_count="count" in attrs,
            )
            for g in (scene.groups[i] for i in order)
        )
    )
    texture = scene.texture if rng.random() < TEXTURE_P else None
    bg_colour = scene.bg_colour if rng.random() < BG_COLOUR_P else None
    templates = [t for t in TEMPLATES if t != "where" or "position" in attrs]
    plan = CaptionPlan(
        template=templates[int(rng.integers(len(templates)))], mentions=mentions, texture=texture, bg_colour=bg_colour
    )
    if lexicon == "closed":
        return plan
    return _long_tail_plan(plan, [scene.groups[i] for i in order], rng)


def _long_tail_plan(plan: CaptionPlan, groups: Sequence, rng: np.random.Generator) -> CaptionPlan:
    """``plan`` with variant ranks, shades, kinds and extras (a fixed number of draws per group)."""
    extended: dict[Mention, Mention] = {}
    for g in groups:
        variant = lex.zipf_rank(rng, lex.MAX_VARIANTS, lex.VARIANT_ZIPF)
        shade_variant = lex.zipf_rank(rng, 2, lex.VARIANT_ZIPF)
        say_shade = rng.random() < lex.SAY_SHADE_P
        say_kind = rng.random() < lex.SAY_KIND_P
        base = next(
            m
            for m in plan.mentions
            if m.shape == g.shape
            and m.count == g.count
            and m.colour in (None, g.colour)
            and m.size in (None, g.size)
            and m.position in (None, g.position)
        )
        if base in extended:  # a group said as the same mention as an earlier one
            continue
        shade = g.shade if (base.colour and say_shade) else None
        kind = g.kind if say_kind else None
        extended[base] = replace(
            base,
            variant=variant,
            shade=shade,
            shade_variant=shade_variant if shade else 0,
            kind=kind,
        )
    return replace(plan, mentions=tuple(extended[m] for m in plan.mentions), extras=lex.sample_extras(rng))
