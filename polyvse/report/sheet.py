"""A query and its results in one picture (``polyvse query --sheet``)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from polyvse.io import atomic_path

TILE = 192
PAD = 12
CAPTION = 44


def _font(size: int) -> ImageFont.ImageFont:
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default()


def _tile(path: str | Path) -> Image.Image:
    with Image.open(path) as img:
        img = img.convert("RGB")
        img.thumbnail((TILE, TILE))
        canvas = Image.new("RGB", (TILE, TILE), "white")
        canvas.paste(img, ((TILE - img.width) // 2, (TILE - img.height) // 2))
        return canvas


def query_sheet(out: str | Path, text: str | None, image: str | Path | None, hits: Sequence) -> None:
    """One row: the query (its text, or its image) then each hit's image (or caption) with rank, id and score."""
    n = 1 + len(hits)
    sheet = Image.new("RGB", (PAD + n * (TILE + PAD), PAD + TILE + CAPTION + PAD), "white")
    draw = ImageDraw.Draw(sheet)
    font, small = _font(15), _font(12)

    def cell(i: int) -> tuple[int, int]:
        return PAD + i * (TILE + PAD), PAD

    x, y = cell(0)
    draw.rectangle([x - 3, y - 3, x + TILE + 2, y + TILE + 2], outline=(200, 40, 40), width=3)
    if image is not None:
        sheet.paste(_tile(image), (x, y))
        label = Path(image).name
    else:
        draw.multiline_text((x + 6, y + 6), "\n".join(textwrap.wrap(text or "", 22)[:9]), fill="black", font=font)
        label = "query"
    draw.text((x, y + TILE + 6), label, fill=(200, 40, 40), font=font)
    for i, hit in enumerate(hits, start=1):
        x, y = cell(i)
        if hit.path:
            sheet.paste(_tile(hit.path), (x, y))
        else:
            draw.rectangle([x, y, x + TILE - 1, y + TILE - 1], outline=(180, 180, 180))
            draw.multiline_text((x + 6, y + 6), "\n".join(textwrap.wrap(hit.text, 22)[:9]), fill="black", font=font)
        draw.text((x, y + TILE + 4), f"#{hit.rank}  {hit.score:+.3f}", fill="black", font=font)
        draw.text((x, y + TILE + 24), hit.id[:30], fill=(90, 90, 90), font=small)
    with atomic_path(out) as tmp:
        sheet.save(tmp, format="PNG")
