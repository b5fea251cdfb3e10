"""The retrieval gallery (polyvse.report.gallery): which model, which queries, and the picture."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from polyvse.report.gallery import (
    HIT,
    GalleryHit,
    GalleryQuery,
    draw_gallery,
    evaluation_score,
    gallery_candidates,
    gallery_queries,
    gallery_variant,
)

VARIANTS = {
    "embn_en": {"model": "embn"},
    "embn_de": {"model": "embn"},
    "liwe": {"model": "liwe"},
    "mule": {"model": "mule"},
    "smalr": {"model": "smalr"},
}


def test_candidates_are_rows_reading_one_word_model_directly():
    rows = [
        {"name": "Trans. to En", "variant": "embn_en", "protocol": "to_en"},
        {"name": "EmbN", "per_language": {"en": "embn_en", "de": "embn_de"}},
        {"name": "LIWE", "variant": "liwe"},
        {"name": "MULE", "variant": "mule"},
        {"name": "SMALR", "variant": "smalr"},
        {"name": "SMALR-CLC-A", "variant": "smalr", "protocol": "clc_a"},
    ]
    assert gallery_candidates(rows, VARIANTS) == ["mule", "smalr"]
    assert gallery_candidates(rows[:3], VARIANTS) == []


def evaluation(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"lang": lang, "test_source": source, "mR": m_r} for lang, source, m_r in rows])


def test_the_model_evaluated_on_most_languages_wins_then_the_best_mean():
    four = evaluation([(lang, "human", 30.0) for lang in ("en", "de", "fr", "cs")])
    ten_worse = evaluation(
        [(lang, "human", 10.0) for lang in ("en", "de", "fr", "cs")]
        + [(lang, "translated", 90.0) for lang in ("zh", "ja", "ar", "af", "ko", "ru")]
    )
    ten_better = evaluation(
        [(lang, "human", 12.0) for lang in ("en", "de", "fr", "cs")]
        + [(lang, "translated", 1.0) for lang in ("zh", "ja", "ar", "af", "ko", "ru")]
    )
    assert evaluation_score(ten_worse) == (10, 10.0)  # the mean is over the human-captioned languages
    evals = {"mule": four, "smalr": ten_worse, "hem": ten_better}
    assert gallery_variant(["mule", "smalr", "hem"], evals) == "hem"
    assert gallery_variant(["mule", "smalr"], evals) == "smalr"
    with pytest.raises(ValueError, match="nothing to draw"):
        gallery_variant([], evals)


def captions() -> pd.DataFrame:
    rows = []
    for img in range(6):
        for lang in ("en", "de", "fr"):
            for cap in range(2):
                rows.append(
                    {
                        "image_id": f"img{img}",
                        "split": "test",
                        "lang": lang,
                        "origin": "human",
                        "text": f"{lang} caption {cap} of img{img}",
                    }
                )
        rows.append({"image_id": f"img{img}", "split": "test", "lang": "zh", "origin": "translated", "text": "mt"})
        rows.append({"image_id": f"train{img}", "split": "train", "lang": "en", "origin": "human", "text": "t"})
    return pd.DataFrame(rows)


def test_queries_are_human_test_captions_of_distinct_images_drawn_by_the_seed():
    queries = gallery_queries(captions(), ["zh", "en", "de", "fr"], n_langs=2, per_lang=2, seed=0)
    assert [q.lang for q in queries] == ["en", "en", "de", "de"]  # zh has no human test caption
    assert len({q.image_id for q in queries}) == 4 and all(q.image_id.startswith("img") for q in queries)
    assert all(q.text.startswith(f"{q.lang} caption") and q.text.endswith(q.image_id) for q in queries)
    assert queries == gallery_queries(captions(), ["zh", "en", "de", "fr"], n_langs=2, per_lang=2, seed=0)
    assert queries != gallery_queries(captions(), ["zh", "en", "de", "fr"], n_langs=2, per_lang=2, seed=1)
    readable_de = gallery_queries(captions(), ["de"], per_lang=6, usable=lambda text, lang: "img3" not in text)
    assert len(readable_de) == 5 and "img3" not in {q.image_id for q in readable_de}


def test_the_picture_outlines_the_described_image_where_it_was_found(tmp_path):
    paths = []
    for i, colour in enumerate([(200, 30, 30), (30, 30, 200)]):
        path = tmp_path / f"img{i}.png"
        Image.new("RGB", (64, 48), colour).save(path)
        paths.append(str(path))
    found = (
        GalleryQuery("en", "a red picture", "img0"),
        [GalleryHit(1, "img0", 0.9, paths[0]), GalleryHit(2, "img1", 0.1, paths[1])],
    )
    missed = (
        GalleryQuery("de", "ein blaues Bild", "img9"),
        [GalleryHit(1, "img0", 0.5, paths[0]), GalleryHit(2, "img1", 0.4, paths[1])],
    )
    out = tmp_path / "gallery.png"
    draw_gallery(out, "test", [found, missed])
    picture = np.asarray(Image.open(out).convert("RGB"))
    assert picture.shape[1] > picture.shape[0] / 2 > 0  # three columns, two rows of tiles
    outline = np.all(picture == np.array(HIT), axis=2)
    top, bottom = outline[: picture.shape[0] // 2], outline[picture.shape[0] // 2 :]
    assert top.sum() > 500 and bottom.sum() == 0  # outlined in the first row only
    assert not list(tmp_path.glob(".*"))  # written atomically: no temporary file left
    with pytest.raises(ValueError, match="at least one query"):
        draw_gallery(tmp_path / "empty.png", "empty", [])
