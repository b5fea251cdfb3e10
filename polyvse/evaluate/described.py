"""Short descriptions of what a synthetic image shows ("a red circle", "two blue stars") and the test
images each one describes, read from the scene plans, to ask whether a model finds what a query names.

The test split's retrieval scores (:mod:`polyvse.evaluate.run`) rank an image against its own long
captions. A user's first query is short and names one object group; an image is *relevant* to it when
one of its groups has that colour and shape (any shade, any named kind of the shape) and, for a
description with a number, that many objects. :func:`precision_at_k` reads a ranking against them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from polyvse.data.synthetic.languages.base import EN_NOUN
from polyvse.data.synthetic.scene import COLOURS, SHAPES, Scene

NUMBER_WORDS = {1: "a", 2: "two", 3: "three"}
"""English number words of the synthetic captions' counts."""


@dataclass(frozen=True)
class Description:
    """An English description of one object group: its colour, shape and, where given, its count."""

    colour: str
    shape: str
    count: int | None = None

    @property
    def text(self) -> str:
        """ "a red circle", "an orange star" (count None or 1), "two blue crosses": as the captions say it."""
        n = self.count or 1
        number = "an" if n == 1 and self.colour[0] in "aeiou" else NUMBER_WORDS[n]
        singular, plural = EN_NOUN[self.shape]
        return f"{number} {self.colour} {plural if n > 1 else singular}"

    def shown_in(self, scene: Scene) -> bool:
        """Whether a group of ``scene`` is what this describes."""
        return any(
            g.colour == self.colour and g.shape == self.shape and (self.count is None or g.count == self.count)
            for g in scene.groups
        )


def descriptions(counts: Sequence[int | None] = (None,)) -> list[Description]:
    """Every colour × shape of the synthetic scenes, once for each of ``counts`` (None: any number)."""
    if any(c is not None and c not in NUMBER_WORDS for c in counts):
        raise ValueError(f"counts must be None or one of {sorted(NUMBER_WORDS)}, got {list(counts)}")
    return [Description(colour, shape, count) for count in counts for colour in COLOURS for shape in SHAPES]


def relevant_images(description: Description, scenes: Mapping[str, Scene]) -> set[str]:
    """The ids of the images (``scenes``: image id → its scene plan) that show ``description``."""
    return {image for image, scene in scenes.items() if description.shown_in(scene)}


def precision_at_k(ranked: Iterable[str], relevant: set[str], k: int = 5) -> float:
    """The share of the first ``k`` ids of ``ranked`` that are relevant."""
    top = list(ranked)[:k]
    if len(top) < k:
        raise ValueError(f"precision at {k} needs {k} ranked images, got {len(top)}")
    return sum(image in relevant for image in top) / k


def scene_plans(image_ids: Iterable[str], seed: int, lexicon: str) -> dict[str, Scene]:
    """The scene plan of each synthetic image id (``syn-000042``: image 42 of the generator under ``seed``).

    Raises ValueError naming an id that no synthetic dataset writes (real data have no plans)."""
    from polyvse.data.synthetic import image_id, make_scene

    plans = {}
    for image in image_ids:
        index = int(image[4:]) if image.startswith("syn-") and image[4:].isdigit() else -1
        if index < 0 or image_id(index) != image:
            raise ValueError(f"{image!r} is not a synthetic image id: only the synthetic data have scene plans")
        plans[image] = make_scene(seed, index, lexicon)
    return plans


def mean_precision(found: Sequence[tuple[Description, int, float]], min_relevant: int) -> tuple[float, int]:
    """The mean precision over the descriptions of ``found`` (description, relevant images, precision) shown
    in ``min_relevant`` or more images (fewer cannot fill a top k), and how many those are."""
    kept = [p for _, n, p in found if n >= min_relevant]
    if not kept:
        raise ValueError(f"no description is shown in {min_relevant} or more images")
    return sum(kept) / len(kept), len(kept)
