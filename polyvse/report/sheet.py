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


def font(size: int) -> ImageFont.ImageFont:
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default()


def tile(path: str | Path) -> Image.Image:
    """The image scaled to fit a TILE x TILE square (small renders enlarged, pixels kept sharp), centred on white."""
    with Image.open(path) as img:
        img = img.convert("RGB")
        scale = TILE / max(img.width, img.height)
        size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
        img = img.resize(size, Image.NEAREST if scale > 1 else Image.LANCZOS)
        canvas = Image.new("RGB", (TILE, TILE), "white")
        canvas.paste(img, ((TILE - img.width) // 2, (TILE - img.height) // 2))
        return canvas


def query_sheet(out: str | Path, text: str | None, image: str | Path | None, hits: Sequence) -> None:
    """One row: the query (its text, or its image) then each hit's image (or caption) with rank, id and score."""
    n = 1 + len(hits)
    sheet = Image.new("RGB", (PAD + n * (TILE + PAD), PAD + TILE + CAPTION + PAD), "white")
    draw = ImageDraw.Draw(sheet)
    body, small = font(15), font(12)

    def cell(i: int) -> tuple[int, int]:
        return PAD + i * (TILE + PAD), PAD

    x, y = cell(0)
    draw.rectangle([x - 3, y - 3, x + TILE + 2, y + TILE + 2], outline=(200, 40, 40), width=3)
    if image is not None:
        sheet.paste(tile(image), (x, y))
        label = Path(image).name
    else:
        draw.multiline_text((x + 6, y + 6), "\n".join(textwrap.wrap(text or "", 22)[:9]), fill="black", font=body)
        label = "query"
    draw.text((x, y + TILE + 6), label, fill=(200, 40, 40), font=body)
    for i, hit in enumerate(hits, start=1):
        x, y = cell(i)
        if hit.path:
            sheet.paste(tile(hit.path), (x, y))
        else:
            draw.rectangle([x, y, x + TILE - 1, y + TILE - 1], outline=(180, 180, 180))
            draw.multiline_text((x + 6, y + 6), "\n".join(textwrap.wrap(hit.text, 22)[:9]), fill="black", font=body)
        draw.text((x, y + TILE + 4), f"#{hit.rank}  {hit.score:+.3f}", fill="black", font=body)
        draw.text((x, y + TILE + 24), hit.id[:30], fill=(90, 90, 90), font=small)
    with atomic_path(out) as tmp:
        sheet.save(tmp, format="PNG")
