"""A retrieval gallery: the best model of a text table answering test captions in several of its
languages, each query beside its top-ranked test images, the image it describes outlined
(``results/gallery/{report}.png``, rule ``gallery``).

Which model: of the table's rows that read one model directly (a ``variant`` row, the ``direct``
protocol, a model of words — LIWE reads characters and has no word vocabulary to query), the
one evaluated on the most languages, then with the highest mean mR over its human-captioned test
languages (:func:`gallery_variant`). Which queries: human test captions of distinct images,
``per_lang`` in each of the model's first ``n_langs`` languages, drawn with a seeded generator
(:func:`gallery_queries`). Drawing (:func:`draw_gallery`) takes plain data: the search itself
is :mod:`polyvse.query`'s, done by the rule's script.

A grounded-speech table's gallery (rule ``speech_gallery``) draws the same picture for spoken
queries: its model with the best image retrieval (:func:`speech_gallery_variant`) hearing test
utterances in every language of the dataset (:func:`spoken_queries`), each shown by its transcript.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image, ImageDraw

from polyvse.io import atomic_path
from polyvse.report.sheet import PAD, TILE, font, text_font, tile, wrap

CHARACTER_FAMILIES = ("liwe",)
HIT = (40, 160, 60)  # outline of the described image among the results


@dataclass(frozen=True)
class GalleryQuery:
    lang: str
    text: str
    image_id: str


@dataclass(frozen=True)
class GalleryHit:
    rank: int
    image_id: str
    score: float
    path: str


def gallery_candidates(rows: Sequence[Mapping], variants: Mapping[str, Mapping]) -> list[str]:
    """Variants of the rows that read one word model directly, in row order, without repeats."""
    out = []
    for row in rows:
        v = row.get("variant")
        if (
            v
            and row.get("protocol", "direct") == "direct"
            and variants[v]["model"] not in CHARACTER_FAMILIES
            and v not in out
        ):
            out.append(v)
    return out


def evaluation_score(evaluation: pd.DataFrame) -> tuple[int, float]:
    """(languages evaluated, mean mR over the human-captioned ones) of one ``eval/{v}.direct.tsv``."""
    human = evaluation[evaluation["test_source"] == "human"]
    scored = human if len(human) else evaluation
    return int(evaluation["lang"].nunique()), float(pd.to_numeric(scored["mR"]).mean())


def gallery_variant(candidates: Sequence[str], evaluations: Mapping[str, pd.DataFrame]) -> str:
    """The candidate evaluated on the most languages, then with the highest mean mR (first on a tie)."""
    if not candidates:
        raise ValueError("no row of the table reads one word model directly: nothing to draw a gallery of")
    return max(candidates, key=lambda v: evaluation_score(evaluations[v]))


def gallery_queries(
    captions: pd.DataFrame,
    langs: Sequence[str],
    n_langs: int = 4,
    per_lang: int = 2,
    seed: int = 0,
    usable: Callable[[str, str], bool] = lambda text, lang: True,
) -> list[GalleryQuery]:
    """``per_lang`` human test captions (one per image, images distinct over the gallery) in each of the
    first ``n_langs`` of ``langs`` that have human test captions; ``usable(text, lang)`` filters out
    captions the model cannot read. Ordered by language, then by draw."""
    test = captions[(captions["split"] == "test") & (captions["origin"] == "human")]
    rng = np.random.default_rng(seed)
    taken: set[str] = set()
    out: list[GalleryQuery] = []
    for lang in [l for l in langs if (test["lang"] == l).any()][:n_langs]:
        own = test[test["lang"] == lang].drop_duplicates("image_id").reset_index(drop=True)
        found = 0
        for i in rng.permutation(len(own)):
            row = own.iloc[int(i)]
            if row["image_id"] in taken or not usable(str(row["text"]), lang):
                continue
            out.append(GalleryQuery(lang, str(row["text"]), str(row["image_id"])))
            taken.add(row["image_id"])
            found += 1
            if found == per_lang:
                break
    return out


def draw_gallery(
    out: str | Path, heading: str, rows: Sequence[tuple[GalleryQuery, Sequence[GalleryHit]]], n_images: int
) -> int:
    """One line per query: its language and text, then its hits (rank, score, id), the described image
    outlined in green; above, ``heading`` and how many of the queries found their image among the top
    hits of ``n_images``, which is returned. Written atomically as PNG."""
    if not rows:
        raise ValueError("a gallery needs at least one query")
    k = max(len(hits) for _, hits in rows)
    found = sum(any(h.image_id == q.image_id for h in hits) for q, hits in rows)
    title = f"{heading}, top {k} of {n_images} test images; the described image outlined ({found} found)"
    head = 40
    line = TILE + 44 + PAD
    width = PAD + (1 + k) * (TILE + PAD)
    sheet = Image.new("RGB", (width, head + len(rows) * line + PAD), "white")
    draw = ImageDraw.Draw(sheet)
    big, small = font(20), font(12)
    draw.text((PAD, PAD), title, fill="black", font=big)
    for r, (query, hits) in enumerate(rows):
        y = head + r * line
        draw.rectangle([PAD, y, PAD + TILE - 1, y + TILE - 1], outline=(120, 120, 120))
        draw.text((PAD + 6, y + 6), query.lang, fill=(200, 40, 40), font=big)
        wrapped = wrap(query.text, 22, 8)
        draw.multiline_text((PAD + 6, y + 34), wrapped, fill="black", font=text_font(query.text, 15))
        draw.text((PAD, y + TILE + 4), f"describes {query.image_id}"[:30], fill=(90, 90, 90), font=small)
        for i, hit in enumerate(hits, start=1):
            x = PAD + i * (TILE + PAD)
            sheet.paste(tile(hit.path), (x, y))
            if hit.image_id == query.image_id:
                draw.rectangle([x - 4, y - 4, x + TILE + 3, y + TILE + 3], outline=HIT, width=5)
            colour = HIT if hit.image_id == query.image_id else (0, 0, 0)
            draw.text((x, y + TILE + 4), f"#{hit.rank}  {hit.score:+.3f}", fill=colour, font=font(15))
            draw.text((x, y + TILE + 24), hit.image_id[:30], fill=(90, 90, 90), font=small)
    with atomic_path(out) as tmp:
        sheet.save(tmp, format="PNG")
    return found


def speech_gallery_variant(evaluations: Mapping[str, pd.DataFrame]) -> str:
    """The speech variant with the highest mean image-pair recall (R@1/5/10 of every language with the
    image, both directions, thesis §3.1.3; its ``eval.tsv``), the first on a tie."""
    from polyvse.evaluate.speech import mean_recall

    if not evaluations:
        raise ValueError("a speech gallery needs at least one evaluated model")
    return max(evaluations, key=lambda v: mean_recall(evaluations[v], "image"))


def spoken_queries(
    utterances: pd.DataFrame,
    captions: pd.DataFrame,
    langs: Sequence[str],
    per_lang: int = 2,
    seed: int = 0,
    cap_idx: int = 0,
) -> list[tuple[GalleryQuery, str]]:
    """``per_lang`` spoken test captions (distinct images) in each of ``langs``, as :func:`gallery_queries`
    draws written ones, each with its wav path (as ``utterances`` has it). A query's text is the
    transcript, the human caption ``cap_idx`` that was spoken, or the wav's name where the dataset
    has none (a user's list of recordings)."""
    test = utterances[utterances["split"] == "test"][["image_id", "split", "lang", "path"]]
    spoken = captions[(captions["origin"] == "human") & (captions["cap_idx"] == cap_idx)]
    frame = test.merge(spoken[["image_id", "lang", "text"]], on=["image_id", "lang"], how="left")
    frame["text"] = frame["text"].where(frame["text"].notna(), frame["path"].map(lambda p: Path(p).name))
    frame["origin"] = "human"
    wav = frame.set_index(["image_id", "lang"])["path"]
    queries = gallery_queries(frame, langs, len(langs), per_lang, seed)
    return [(q, str(wav[(q.image_id, q.lang)])) for q in queries]
