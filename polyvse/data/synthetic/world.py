"""What the synthetic world's objects usually are: the typical scenes its text-only corpus talks about.

Real text gives each colour word contexts of its own ("red" beside apples and fire, "blue" beside the sky),
and FastText's vectors of them differ. Scenes whose colour is drawn independently of everything else give
every colour word the same contexts, and FastText nearly one vector for all eight (rule attribute_words;
docs/learning.md, "Colour with shape"). In the world of the corpus (the stand-in for the papers' Wikipedia,
:mod:`polyvse.data.synthetic.corpus`) objects have typical shapes and places in the picture for their
colour, typical sizes and numbers for their shape, and (with the long-tail lexicon) named kinds of their own
for their colour, as real objects do; each attribute keeps its uniform draw with probability
``1 - typicality``. The rendered images (and so their captions) keep the uniform world: a caption says what
its image shows, and the described queries ask for every colour with every shape.

The tables are one fixed world, the same in every language: the corpus of each language realises the same
kind of plans, so its colour words differ from each other as the English ones do.
"""

from __future__ import annotations

import numpy as np

COLOUR_SHAPES: dict[str, tuple[str, str]] = {
    "red": ("circle", "cross"),
    "orange": ("triangle", "circle"),
    "yellow": ("star", "circle"),
    "green": ("triangle", "square"),
    "blue": ("square", "ring"),
    "purple": ("star", "ring"),
    "black": ("square", "cross"),
    "white": ("ring", "cross"),
}
"""Two shapes each colour's objects usually have; no two colours share both."""

COLOUR_POSITION: dict[str, str] = {
    "red": "centre",
    "orange": "right",
    "yellow": "top",
    "green": "bottom",
    "blue": "top",
    "purple": "left",
    "black": "bottom",
    "white": "left",
}
"""Where in the picture each colour's objects usually are (the sky's blue and the sun's yellow at the top)."""

SHAPE_SIZE: dict[str, str] = {
    "circle": "large",
    "square": "large",
    "triangle": "small",
    "star": "small",
    "cross": "large",
    "ring": "small",
}
"""Each shape's usual size."""

SHAPE_COUNT: dict[str, int] = {"circle": 1, "square": 2, "triangle": 3, "star": 3, "cross": 1, "ring": 2}
"""How many of each shape usually come together."""


def colour_kind(colour: str, rank: int, colours: tuple[str, ...], kinds_per_shape: int) -> int:
    """The ``rank``-th of ``colour``'s own kinds of a shape: every ``len(colours)``-th kind, starting at the
    colour's index, so that each colour's objects are usually kinds no other colour's are (red apples and
    yellow bananas: the long-tail lexicon's named kinds are the world's objects)."""
    kind = colours.index(colour) + len(colours) * int(rank)
    if not 0 <= kind < kinds_per_shape:
        raise ValueError(f"{colour}'s kind of rank {rank} is past the {kinds_per_shape} kinds of a shape")
    return kind


def typical_group(
    rng: np.random.Generator,
    colour: str,
    free_positions: list[str],
    taken: set[tuple[str, str]],
    typicality: float,
    shapes: tuple[str, ...],
    sizes: tuple[str, ...],
    max_count: int,
) -> tuple[str, str, str, int]:
    """One group of ``colour`` in the corpus's world: ``(shape, size, position, count)``.

    Each attribute is, with probability ``typicality``, the typical one (a shape drawn from the colour's
    :data:`COLOUR_SHAPES`, the colour's :data:`COLOUR_POSITION` when it is free, the shape's
    :data:`SHAPE_SIZE` and :data:`SHAPE_COUNT`), and otherwise drawn uniformly; the shape is never one of
    ``taken`` with this colour (two such groups could not be told apart in a caption).
    """
    u = rng.random(4)
    typical = [s for s in COLOUR_SHAPES[colour] if (s, colour) not in taken]
    if u[0] < typicality and typical:
        shape = typical[int(rng.integers(len(typical)))]
    else:
        shape = next(s for s in (shapes[int(i)] for i in rng.permutation(len(shapes))) if (s, colour) not in taken)
    size = SHAPE_SIZE[shape] if u[1] < typicality else sizes[int(rng.integers(len(sizes)))]
    usual = COLOUR_POSITION[colour]
    if u[2] < typicality and usual in free_positions:
        position = usual
    else:
        position = free_positions[int(rng.integers(len(free_positions)))]
    count = SHAPE_COUNT[shape] if u[3] < typicality else int(rng.integers(1, max_count + 1))
    return shape, size, position, count
