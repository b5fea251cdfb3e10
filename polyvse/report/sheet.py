"""A query and its results in one picture (``polyvse query --sheet``)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from polyvse.io import atomic_path

TILE = 192
PAD = 12
CAPTION = 44


# The first installed font of a text's script (setup.sh installs the Debian packages): DejaVu has no
# Devanagari and no Chinese, Japanese or Korean glyphs, which it would draw as empty boxes.
FONTS: dict[str, tuple[str, ...]] = {
    "latin": ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    "devanagari": ("/usr/share/fonts/truetype/lohit-devanagari/Lohit-Devanagari.ttf",),
    "cjk": ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",),
}
_SCRIPT_RANGES = (
    ("devanagari", 0x0900, 0x097F),
    ("cjk", 0x3040, 0x30FF),  # kana
    ("cjk", 0x3400, 0x4DBF),
    ("cjk", 0x4E00, 0x9FFF),
    ("cjk", 0xAC00, 0xD7AF),  # Hangul
)


def script_of(text: str) -> str:
    """The script whose font draws ``text``: the first non-Latin script found in it, else ``latin``."""
    for ch in text:
        code = ord(ch)
        for script, lo, hi in _SCRIPT_RANGES:
            if lo <= code <= hi:
                return script
    return "latin"


@lru_cache(maxsize=32)
def font(size: int, script: str = "latin") -> ImageFont.ImageFont:
    """A font of ``script`` (falling back to DejaVu, then PIL's default) at ``size`` pixels."""
    for name in (*FONTS.get(script, ()), *FONTS["latin"]):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default()


def text_font(text: str, size: int) -> ImageFont.ImageFont:
    return font(size, script_of(text))


def wrap(text: str, width: int, max_lines: int) -> str:
    """``text`` in lines of at most ``width`` columns (a Chinese, Japanese or Korean character takes two,
    and a line may break between two of them, as those scripts break without spaces), at most
    ``max_lines`` lines."""
    pieces = []  # words, and wide characters one by one
    for word in text.split():
        run = ""
        for ch in word:
            if unicodedata.east_asian_width(ch) in "WF":
                if run:
                    pieces.append((run, False))
                    run = ""
                pieces.append((ch, True))
            else:
                run += ch
        if run:
            pieces.append((run, False))
        pieces.append((" ", False))
    lines, line, used = [], "", 0
    for piece, wide in pieces:
        cost = 2 if wide else len(piece)
        if piece == " ":
            if line:
                line, used = line + " ", used + 1
            continue
        if used + cost > width and line.strip():
            lines.append(line.rstrip())
            line, used = "", 0
        line, used = line + piece, used + cost
    if line.strip():
        lines.append(line.rstrip())
    return "\n".join(lines[:max_lines])


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
        draw.multiline_text((x + 6, y + 6), wrap(text or "", 22, 9), fill="black", font=text_font(text or "", 15))
        label = "query"
    draw.text((x, y + TILE + 6), label, fill=(200, 40, 40), font=body)
    for i, hit in enumerate(hits, start=1):
        x, y = cell(i)
        if hit.path:
            sheet.paste(tile(hit.path), (x, y))
        else:
            draw.rectangle([x, y, x + TILE - 1, y + TILE - 1], outline=(180, 180, 180))
            draw.multiline_text((x + 6, y + 6), wrap(hit.text, 22, 9), fill="black", font=text_font(hit.text, 15))
        draw.text((x, y + TILE + 4), f"#{hit.rank}  {hit.score:+.3f}", fill="black", font=body)
        draw.text((x, y + TILE + 24), hit.id[:30], fill=(90, 90, 90), font=small)
    with atomic_path(out) as tmp:
        sheet.save(tmp, format="PNG")
