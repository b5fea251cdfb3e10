"""Point labels that do not overlap: each label takes the first place around its point, nearest
first, where its text box stays clear of the labels already placed, of every marked point and of
the axes' edges (a greedy placement: the figures here have tens of labels, not thousands)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# Places around a point, nearest first: (dx, dy) offsets in points and the text's alignment there.
_DIRECTIONS: tuple[tuple[float, float, str, str], ...] = (
    (1, 1, "left", "bottom"),
    (1, -1, "left", "top"),
    (-1, 1, "right", "bottom"),
    (-1, -1, "right", "top"),
    (0, 1, "center", "bottom"),
    (0, -1, "center", "top"),
    (1, 0, "left", "center"),
    (-1, 0, "right", "center"),
)
_RADII: tuple[float, ...] = (4.0, 10.0, 18.0, 28.0, 40.0)
_MARKER_RADIUS = 3.0  # points: a labelled point whose marker size is not given keeps this much free of text
_LEADER_AFTER = 8.0  # points beyond its marker: a label further out gets a line to its point
_NEARER_BY = 2.0  # pixels: a label this much nearer another marker than its own is misplaced


def _overlap(a: Any, b: Any) -> float:
    """Area shared by two matplotlib ``Bbox`` es (0 when apart)."""
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0


def text_box(label: Any, renderer: Any) -> Any:
    """The display box of an annotation's text alone (its own extent includes its leader line)."""
    from matplotlib.text import Text

    label.update_positions(renderer)
    return Text.get_window_extent(label, renderer)


def _distance(box: Any, xy: tuple[float, float]) -> float:
    """Pixels from a ``Bbox`` to a display point (0 inside)."""
    dx = max(box.x0 - xy[0], 0.0, xy[0] - box.x1)
    dy = max(box.y0 - xy[1], 0.0, xy[1] - box.y1)
    return float((dx * dx + dy * dy) ** 0.5)


def place_labels(
    ax: Any,
    points: Sequence[tuple[float, float]],
    texts: Sequence[str],
    styles: Sequence[dict[str, Any]] | None = None,
    radii: Sequence[float] | None = None,
) -> list[Any]:
    """Annotate ``points`` (data coordinates) with ``texts``; returns the annotations.

    ``styles``: per label, keywords of ``ax.annotate`` (fontsize, color, fontweight). ``radii``: the
    points' marker radii (points); a label starts beyond its marker and covers no marker, nor the
    axes' legend. A label placed well away from its marker gets a thin line to it.
    Where no place is clear, the label takes the one that overlaps least. Call after the layout
    and the axes' limits are final: the boxes are measured in display coordinates.
    """
    styles = styles if styles is not None else [{}] * len(points)
    radii = radii if radii is not None else [_MARKER_RADIUS] * len(points)
    if not len(points) == len(texts) == len(styles) == len(radii):
        raise ValueError(f"{len(points)} points, {len(texts)} labels, {len(styles)} styles, {len(radii)} radii")
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    from matplotlib.transforms import Bbox

    px_per_point = fig.dpi / 72.0

    def marker_box(xy: tuple[float, float], radius: float) -> Bbox:
        x, y = ax.transData.transform(xy)
        h = radius * px_per_point
        return Bbox([[x - h, y - h], [x + h, y + h]])

    blocked = [marker_box(p, r) for p, r in zip(points, radii)]
    centres = [tuple(ax.transData.transform(p)) for p in points]
    legend = ax.get_legend()
    if legend is not None:
        blocked.append(legend.get_window_extent(renderer))
    placed: list[Any] = []
    for i, (xy, text, style, marker) in enumerate(zip(points, texts, styles, radii)):
        own = centres[i]
        others = [c for j, c in enumerate(centres) if j != i and c != own]
        best: tuple[float, float, tuple[float, float], str, str, Any] | None = None  # cost, step, offset, ha, va, box
        for step in _RADII:
            radius = marker + step
            for dx, dy, ha, va in _DIRECTIONS:
                offset = (dx * radius, dy * radius)
                label = ax.annotate(text, xy, textcoords="offset points", xytext=offset, ha=ha, va=va, **style)
                box = label.get_window_extent(renderer)
                label.remove()
                outside = box.width * box.height - _overlap(box, frame)
                cost = outside + sum(_overlap(box, other) for other in blocked)
                # a label nearer another marker than its own would name the wrong point
                if others and min(_distance(box, c) for c in others) < _distance(box, own) - _NEARER_BY:
                    cost += box.width * box.height
                if best is None or cost < best[0]:
                    best = (cost, step, offset, ha, va, box)
                if cost == 0.0:
                    break
            if best is not None and best[0] == 0.0:
                break
        assert best is not None
        _, step, offset, ha, va, box = best
        leader = (
            {"arrowprops": {"arrowstyle": "-", "lw": 0.5, "color": style.get("color", "dimgray"), "shrinkA": 1}}
            if step > _LEADER_AFTER
            else {}
        )
        placed.append(ax.annotate(text, xy, textcoords="offset points", xytext=offset, ha=ha, va=va, **leader, **style))
        blocked.append(box)
    return placed


def overlapping_labels(ax: Any, labels: Sequence[Any]) -> list[tuple[str, str]]:
    """Pairs of ``labels`` whose text boxes overlap (for tests and checks of a drawn figure; a
    label's box is measured without its leader line)."""
    renderer = ax.figure.canvas.get_renderer()
    boxes = [(label.get_text(), text_box(label, renderer)) for label in labels]
    return [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1 :] if _overlap(ba, bb) > 0]
