"""Scene graphs of the synthetic default data and their rendering with PIL.

A scene is 1–3 object groups on a textured background (docs/architecture.md, The embedded
default data). A group is ``count`` identical objects (shape, colour, size) placed
in one of five regions of the image; regions are far enough apart that groups do
not overlap much. The renderer adds small jitter (position, rotation, shade) from
its rng, so that images of equal scenes are not pixel-identical templates.

With ``lexicon="long_tail"`` (:mod:`polyvse.data.synthetic.lexicon`) a group can
also be a light or dark shade of its colour, drawn after every draw of the closed
sampler (so closed scenes are unchanged) and rendered as a tint or shade of the
base colour: the long-tail captions' shade words name something visible. A group can
also be a named *kind* of its shape (:data:`~polyvse.data.synthetic.lexicon.KIND_P`, its
rank Zipf-weighted), drawn with the kind's own geometry (:func:`kind_geometry`: an oval
or a flat rectangle, a star of four to eight points, a saltire...), so that the kinds'
words, most of them rare, name something the image shows.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, replace

import numpy as np
from PIL import Image, ImageDraw

from polyvse.data.synthetic.lexicon import KIND_P, KIND_SHAPES, KIND_ZIPF, KINDS_PER_SHAPE, LEXICON_SEED, SHADE_P
from polyvse.data.synthetic.lexicon import zipf_rank_of
from polyvse.data.synthetic.world import colour_kind, typical_group

SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "star", "cross", "ring")
COLOURS: tuple[str, ...] = ("red", "orange", "yellow", "green", "blue", "purple", "black", "white")
SIZES: tuple[str, ...] = ("small", "large")
POSITIONS: tuple[str, ...] = ("left", "right", "top", "bottom", "centre")
TEXTURES: tuple[str, ...] = ("plain", "stripes", "dots", "checker")
BG_COLOURS: tuple[str, ...] = ("grey", "brown", "blue", "green")
SHADES: tuple[str, ...] = ("light", "dark")
CHROMATIC: tuple[str, ...] = tuple(c for c in COLOURS if c not in ("black", "white"))  # colours with shades
MAX_GROUPS = 3
MAX_COUNT = 3
GROUP_COUNTS, GROUP_COUNT_P = (1, 2, 3), (0.3, 0.4, 0.3)


def _choice_cdf(p: tuple[float, ...]) -> list[float]:
    """The cumulative ``p`` as ``Generator.choice`` normalises it: ``bisect_right`` of one ``rng.random()``
    on it is ``rng.choice(len(p), p=p)``, without the checks that made that a fifth of a corpus line."""
    cdf = np.cumsum(p)
    return (cdf / cdf[-1]).tolist()


_GROUP_COUNT_CDF = _choice_cdf(GROUP_COUNT_P)


@dataclass(frozen=True)
class ObjectGroup:
    """``count`` identical objects of one shape, colour and size in one region."""

    shape: str
    colour: str
    size: str
    position: str
    count: int
    shade: str | None = None  # light/dark (long-tail scenes only); None: the base colour
    kind: int | None = None  # rank of the shape's kind (long-tail scenes only); None: the plain shape


@dataclass(frozen=True)
class Scene:
    """Object groups (distinct positions) on a background of one texture and colour family."""

    groups: tuple[ObjectGroup, ...]
    texture: str
    bg_colour: str


def sample_scene(rng: np.random.Generator, lexicon: str = "closed", typicality: float = 0.0) -> Scene:
    """Draw one scene: 1–3 groups at distinct positions with distinct (shape, colour) pairs.

    ``long_tail``: the same draws, then a shade per group (light or dark with
    probability ``SHADE_P`` each half, for chromatic colours only), then a kind per
    group (with probability ``KIND_P``, its rank Zipf-weighted).

    ``typicality`` > 0 draws the groups of the text corpus's world instead
    (:mod:`polyvse.data.synthetic.world`: each colour's usual shapes and place, each shape's usual size
    and number); 0, the images' scenes, draws every attribute uniformly.
    """
    if lexicon not in ("closed", "long_tail"):
        raise ValueError(f"unknown lexicon {lexicon!r}; expected 'closed' or 'long_tail'")
    if not 0.0 <= typicality <= 1.0:
        raise ValueError(f"typicality must be in [0, 1], got {typicality!r}")
    n_groups = GROUP_COUNTS[bisect_right(_GROUP_COUNT_CDF, rng.random())]
    if typicality > 0:
        groups = _typical_groups(rng, n_groups, typicality)
        scene = Scene(groups=groups, texture=_texture(rng), bg_colour=_bg_colour(rng))
        return _long_tail(rng, scene, lexicon, typicality)
    positions = [POSITIONS[i] for i in rng.permutation(len(POSITIONS))[:n_groups]]
    groups: list[ObjectGroup] = []
    seen: set[tuple[str, str]] = set()
    for position in positions:
        while True:  # two groups of the same shape and colour could not be told apart in a caption
            shape = SHAPES[int(rng.integers(len(SHAPES)))]
            colour = COLOURS[int(rng.integers(len(COLOURS)))]
            if (shape, colour) not in seen:
                break
        seen.add((shape, colour))
        groups.append(
            ObjectGroup(
                shape=shape,
                colour=colour,
                size=SIZES[int(rng.integers(len(SIZES)))],
                position=position,
                count=int(rng.integers(1, MAX_COUNT + 1)),
            )
        )
    return _long_tail(rng, Scene(groups=tuple(groups), texture=_texture(rng), bg_colour=_bg_colour(rng)), lexicon)


def _texture(rng: np.random.Generator) -> str:
    return TEXTURES[int(rng.integers(len(TEXTURES)))]


def _bg_colour(rng: np.random.Generator) -> str:
    return BG_COLOURS[int(rng.integers(len(BG_COLOURS)))]


def _typical_groups(rng: np.random.Generator, n_groups: int, typicality: float) -> tuple[ObjectGroup, ...]:
    """``n_groups`` groups of the corpus's world (:func:`polyvse.data.synthetic.world.typical_group`):
    each colour drawn uniformly, then its shape, size, place and number as usual with ``typicality``."""
    free, taken, groups = list(POSITIONS), set(), []
    for _ in range(n_groups):
        colour = COLOURS[int(rng.integers(len(COLOURS)))]
        shape, size, position, count = typical_group(rng, colour, free, taken, typicality, SHAPES, SIZES, MAX_COUNT)
        free.remove(position)
        taken.add((shape, colour))
        groups.append(ObjectGroup(shape=shape, colour=colour, size=size, position=position, count=count))
    return tuple(groups)


def _long_tail(rng: np.random.Generator, scene: Scene, lexicon: str, typicality: float = 0.0) -> Scene:
    """``scene`` as it is (``closed``), or with its groups' shades and kinds drawn (``long_tail``); with
    ``typicality`` > 0 a kind is, that often, one of its colour's own (:func:`~polyvse.data.synthetic.world.colour_kind`)."""
    if lexicon == "closed":
        return scene
    groups = scene.groups
    u = rng.random((len(groups), 2))  # drawn for every group, so that the draws do not depend on colours
    shaded = tuple(
        replace(g, shade=SHADES[int(b < 0.5)] if (a < SHADE_P and g.colour in CHROMATIC) else None)
        for g, (a, b) in zip(groups, u)
    )
    v = rng.random((len(groups), 2))  # likewise drawn for every group
    kinded = tuple(
        replace(g, kind=zipf_rank_of(b, KINDS_PER_SHAPE, KIND_ZIPF) if a < KIND_P else None)
        for g, (a, b) in zip(shaded, v)
    )
    if typicality > 0:
        own = rng.random(len(groups)) < typicality  # drawn after the images' draws: their scenes are unchanged
        per_colour = KINDS_PER_SHAPE // len(COLOURS)
        kinded = tuple(
            replace(g, kind=colour_kind(g.colour, zipf_rank_of(b, per_colour, KIND_ZIPF), COLOURS, KINDS_PER_SHAPE))
            if (mine and g.kind is not None)
            else g
            for g, mine, (_, b) in zip(kinded, own, v)
        )
    return replace(scene, groups=kinded)


@dataclass(frozen=True)
class KindGeometry:
    """How a kind of a shape differs from the shape: a fixed draw per kind (:func:`kind_geometry`).

    ``aspect``: height over width (circle, square, ring; 1 = the shape's own);
    ``cut``: corners cut off a square, as a share of its half-side; ``points``: a
    star's; ``inner``: a star's inner radius over its outer one, a cross's arm width
    over its arm length, a ring's band over its radius, a triangle's apex offset
    (-0.5..0.5 of its base); ``tilt``: a fixed rotation in radians (a cross at 45°
    is a saltire).
    """

    aspect: float = 1.0
    cut: float = 0.0
    points: int = 5
    inner: float = 0.0
    tilt: float = 0.0


def kind_geometry(shape: str, kind: int) -> KindGeometry:
    """The geometry of kind ``kind`` of ``shape``: deterministic, the same in every dataset."""
    if shape not in KIND_SHAPES or not 0 <= kind < KINDS_PER_SHAPE:
        raise ValueError(f"no kind {kind} of shape {shape!r}")
    rng = np.random.default_rng([LEXICON_SEED, 4, KIND_SHAPES.index(shape), kind])
    a, b, c = (float(x) for x in rng.random(3))
    if shape == "circle":  # an oval
        return KindGeometry(aspect=0.45 + 0.4 * a, tilt=math.pi * b)
    if shape == "square":  # a rectangle, its corners cut
        return KindGeometry(aspect=0.4 + 0.55 * a, cut=0.45 * b, tilt=0.5 * math.pi * c)
    if shape == "triangle":  # flat or tall, its apex off centre
        return KindGeometry(aspect=0.5 + 1.0 * a, inner=b - 0.5, tilt=2 * math.pi * c)
    if shape == "star":  # 4 or 6-8 points, thin or fat
        return KindGeometry(points=(4, 6, 7, 8)[int(a * 4)], inner=0.25 + 0.3 * b, tilt=2 * math.pi * c)
    if shape == "cross":  # thin or thick arms, upright or a saltire
        return KindGeometry(aspect=0.7 + 0.3 * c, inner=0.12 + 0.3 * a, tilt=(math.pi / 4) * (b < 0.5))
    return KindGeometry(aspect=0.55 + 0.45 * a, inner=0.15 + 0.5 * b, tilt=math.pi * c)  # ring: oval, any band


# --- rendering --------------------------------------------------------------------------------

_OBJECT_RGB = {
    "red": (215, 35, 35),
    "orange": (245, 135, 20),
    "yellow": (240, 215, 25),
    "green": (35, 160, 60),
    "blue": (35, 75, 215),
    "purple": (135, 45, 175),
    "black": (25, 25, 25),
    "white": (250, 250, 250),
}
# Pale tints, so that every object colour stands out on every background.
_BG_RGB = {"grey": (200, 200, 200), "brown": (212, 188, 158), "blue": (185, 205, 232), "green": (192, 222, 192)}
# Region centres (fractions of the side): far enough apart that two groups of three
# large objects (half-extent ~0.16) barely touch.
_REGION = {"left": (0.19, 0.5), "right": (0.81, 0.5), "top": (0.5, 0.19), "bottom": (0.5, 0.81), "centre": (0.5, 0.5)}
_SHADE_MIX = {"light": (1.0, 0.5), "dark": (0.0, 0.5)}  # (blend target: white/black, weight)
_RADIUS = {"small": 0.045, "large": 0.075}
_SUPERSAMPLE = 2  # draw at 2x and reduce: cheap anti-aliasing


def _jitter_rgb(rgb: tuple[int, int, int], rng: np.random.Generator, amount: int) -> tuple[int, int, int]:
    # mostly lighter/darker, a little hue: black and white must stay black and white
    shift = rng.integers(-amount, amount + 1) + rng.integers(-(amount // 3), amount // 3 + 1, size=3)
    return tuple(int(v) for v in np.clip(np.asarray(rgb) + shift, 0, 255))


def _shaded_rgb(colour: str, shade: str | None) -> tuple[int, int, int]:
    """The base colour, or its tint (halfway to white) / shade (halfway to black)."""
    rgb = _OBJECT_RGB[colour]
    if shade is None:
        return rgb
    target, weight = _SHADE_MIX[shade]
    return tuple(int(round(v + (255 * target - v) * weight)) for v in rgb)


def _darker(rgb: tuple[int, ...], factor: float) -> tuple[int, int, int]:
    return tuple(int(v * factor) for v in rgb)


def _draw_background(
    draw: ImageDraw.ImageDraw, side: int, texture: str, base: tuple[int, int, int], rng: np.random.Generator
) -> None:
    draw.rectangle([0, 0, side, side], fill=base)
    ink = _darker(base, 0.82)
    if texture == "plain":
        return
    if texture == "stripes":
        period = side * rng.uniform(0.07, 0.11)
        width = max(1, int(period / 2))
        orientation = int(rng.integers(3))  # horizontal, vertical, diagonal
        offset = rng.uniform(0, period)
        k = -period + offset
        while k < 2 * side:
            if orientation == 0:
                draw.line([(0, k), (side, k)], fill=ink, width=width)
            elif orientation == 1:
                draw.line([(k, 0), (k, side)], fill=ink, width=width)
            else:
                draw.line([(k, 0), (k - side, side)], fill=ink, width=width)
            k += period
    elif texture == "dots":
        step = side * rng.uniform(0.08, 0.11)
        r = step * 0.22
        ox, oy = rng.uniform(0, step, size=2)
        y = oy - step
        while y < side + step:
            x = ox - step
            while x < side + step:
                draw.ellipse([x - r, y - r, x + r, y + r], fill=ink)
                x += step
            y += step
    elif texture == "checker":
        cell = side * rng.uniform(0.1, 0.14)
        ox, oy = rng.uniform(0, cell, size=2)
        n = int(side / cell) + 3
        for i in range(-1, n):
            for j in range(-1, n):
                if (i + j) % 2 == 0:
                    x0, y0 = ox + i * cell, oy + j * cell
                    draw.rectangle([x0, y0, x0 + cell, y0 + cell], fill=ink)
    else:
        raise ValueError(f"unknown texture {texture!r}; expected one of {TEXTURES}")


def _star(points: int, outer: float, inner: float) -> list[tuple[float, float]]:
    """A star's vertices around the origin, its first point up: ``points`` tips at radius ``outer``."""
    return [
        (
            (outer if k % 2 == 0 else inner) * math.cos(-math.pi / 2 + k * math.pi / points),
            (outer if k % 2 == 0 else inner) * math.sin(-math.pi / 2 + k * math.pi / points),
        )
        for k in range(2 * points)
    ]


def _cross(a: float, b: float, w: float) -> list[tuple[float, float]]:
    """A cross's vertices around the origin: arms of half-length ``a`` across, ``b`` up and down, half-width ``w``."""
    return [(-w, -b), (w, -b), (w, -w), (a, -w), (a, w), (w, w), (w, b), (-w, b), (-w, w), (-a, w), (-a, -w), (-w, -w)]


def _placed(local: list[tuple[float, float]], cx: float, cy: float, angle: float) -> list[tuple[float, float]]:
    """``local`` vertices rotated by ``angle`` (rad) and moved to (cx, cy)."""
    c, s = math.cos(angle), math.sin(angle)
    return [(cx + x * c - y * s, cy + x * s + y * c) for x, y in local]


def _polygon(shape: str, cx: float, cy: float, r: float, angle: float) -> list[tuple[float, float]]:
    """Vertices of ``shape`` of nominal radius ``r`` centred on (cx, cy), rotated by ``angle`` (rad)."""
    if shape == "square":
        local = [
            (1.15 * r * math.cos(math.pi / 4 + k * math.pi / 2), 1.15 * r * math.sin(math.pi / 4 + k * math.pi / 2))
            for k in range(4)
        ]
    elif shape == "triangle":
        local = [
            (
                1.3 * r * math.cos(-math.pi / 2 + k * 2 * math.pi / 3),
                1.3 * r * math.sin(-math.pi / 2 + k * 2 * math.pi / 3),
            )
            for k in range(3)
        ]
    elif shape == "star":
        local = _star(5, 1.3 * r, 0.55 * r)
    elif shape == "cross":
        local = _cross(1.15 * r, 1.15 * r, 0.36 * r)
    else:
        raise ValueError(f"shape {shape!r} is not a polygon")
    return _placed(local, cx, cy, angle)


def _kind_polygon(
    shape: str, geometry: KindGeometry, cx: float, cy: float, r: float, angle: float
) -> list[tuple[float, float]]:
    """Vertices of a kind of ``shape`` (not ring) of nominal radius ``r``, rotated by ``angle`` + its tilt."""
    g = geometry
    if shape == "circle":
        local = [(1.15 * r * math.cos(t), 1.15 * r * g.aspect * math.sin(t)) for t in np.linspace(0, 2 * math.pi, 48)]
    elif shape == "square":
        w, h = 1.1 * r, 1.1 * r * g.aspect
        k = g.cut * min(w, h)
        local = [(-w + k, -h), (w - k, -h), (w, -h + k), (w, h - k), (w - k, h), (-w + k, h), (-w, h - k), (-w, -h + k)]
    elif shape == "triangle":
        half = 1.25 * r
        local = [(2 * g.inner * half, -half * g.aspect), (half, half * g.aspect), (-half, half * g.aspect)]
    elif shape == "star":
        local = _star(g.points, 1.3 * r, 1.3 * g.inner * r)
    elif shape == "cross":
        local = _cross(1.2 * r, 1.2 * r * g.aspect, 1.2 * r * g.inner)
    else:
        raise ValueError(f"shape {shape!r} has no kind polygon")
    return _placed(local, cx, cy, angle + g.tilt)


def _object_centres(
    position: str, count: int, r: float, side: int, rng: np.random.Generator
) -> list[tuple[float, float]]:
    """Centres of ``count`` objects of radius ``r`` clustered in the region ``position``."""
    fx, fy = _REGION[position]
    cx, cy = (fx + rng.uniform(-0.02, 0.02)) * side, (fy + rng.uniform(-0.02, 0.02)) * side
    d = 1.15 * r
    if count == 1:
        offsets = [(0.0, 0.0)]
    elif count == 2:  # along the image edge the region touches, to stay inside its band
        offsets = [(0.0, -d), (0.0, d)] if position in ("left", "right") else [(-d, 0.0), (d, 0.0)]
    else:  # a triangle: more compact than a row of three
        offsets = [
            (
                1.2 * d * math.cos(-math.pi / 2 + k * 2 * math.pi / 3),
                1.2 * d * math.sin(-math.pi / 2 + k * 2 * math.pi / 3),
            )
            for k in range(count)
        ]
    return [(cx + ox + rng.uniform(-0.05, 0.05) * r, cy + oy + rng.uniform(-0.05, 0.05) * r) for ox, oy in offsets]


def _draw_kind(
    draw: ImageDraw.ImageDraw,
    shape: str,
    geometry: KindGeometry,
    cx: float,
    cy: float,
    r: float,
    fill: tuple[int, int, int],
    edge: tuple[int, int, int],
    line: int,
    rng: np.random.Generator,
) -> None:
    angle = math.radians(rng.uniform(-18, 18))
    if shape == "ring":  # an oval band: a thick closed line along the band's middle
        band = max(2.0, geometry.inner * r)
        mid = r - band / 2
        ring = [(mid * math.cos(t), mid * geometry.aspect * math.sin(t)) for t in np.linspace(0, 2 * math.pi, 49)]
        c, s = math.cos(angle + geometry.tilt), math.sin(angle + geometry.tilt)
        points = [(cx + x * c - y * s, cy + x * s + y * c) for x, y in ring]
        draw.line(points, fill=fill, width=max(2, round(band)), joint="curve")
        return
    draw.polygon(_kind_polygon(shape, geometry, cx, cy, r, angle), fill=fill, outline=edge, width=line)


def render_scene(scene: Scene, size: int, rng: np.random.Generator) -> Image.Image:
    """Render ``scene`` as an RGB image of ``size`` x ``size`` pixels.

    Jitter (region offset, object rotation, shade, radius, texture phase) comes from
    ``rng``: the same scene and rng state give the same pixels.
    """
    if size < 8:
        raise ValueError(f"image size must be at least 8 pixels, got {size}")
    side = size * _SUPERSAMPLE
    img = Image.new("RGB", (side, side))
    draw = ImageDraw.Draw(img)
    _draw_background(draw, side, scene.texture, _jitter_rgb(_BG_RGB[scene.bg_colour], rng, 8), rng)
    line = max(1, round(side / 120))
    for group in scene.groups:
        r = _RADIUS[group.size] * side * rng.uniform(0.93, 1.07)
        for cx, cy in _object_centres(group.position, group.count, r, side, rng):
            fill = _jitter_rgb(_shaded_rgb(group.colour, group.shade), rng, 14)
            edge = _darker(fill, 0.5) if group.colour != "black" else (90, 90, 90)
            if group.kind is not None:
                _draw_kind(draw, group.shape, kind_geometry(group.shape, group.kind), cx, cy, r, fill, edge, line, rng)
            elif group.shape == "circle":
                draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=fill, outline=edge, width=line)
            elif group.shape == "ring":
                band = max(2, round(0.38 * r))
                draw.ellipse([cx - r, cy - r, cx + r, cy + r], outline=fill, width=band)
                draw.ellipse([cx - r, cy - r, cx + r, cy + r], outline=edge, width=line)
                ri = r - band
                draw.ellipse([cx - ri, cy - ri, cx + ri, cy + ri], outline=edge, width=line)
            else:
                angle = math.radians(rng.uniform(-18, 18))
                draw.polygon(_polygon(group.shape, cx, cy, r, angle), fill=fill, outline=edge, width=line)
    return img.reduce(_SUPERSAMPLE)
