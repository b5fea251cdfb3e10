"""The synthetic default dataset: determinism, profiles, scripts, grammar, dictionaries, images."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from polyvse.data.synthetic import (
    CaptionPlan,
    Mention,
    ObjectGroup,
    Scene,
    build_dataset,
    caption,
    image_rng,
    make_scene,
    realise,
    render_scene,
    write_dataset,
    write_dictionaries,
)
from polyvse.data.tables import validate_captions, validate_images
from polyvse.errors import InputError
from polyvse.text.tokenize import tokenize
from polyvse.translate.dictionary import segment_greedy
from polyvse.text.muse import read_muse

ALL = ["en", "de", "fr", "cs", "zh", "ja", "ar", "af", "ko", "ru", "hi"]
SPACED = ["en", "de", "fr", "cs", "ar", "af", "ko", "ru", "hi"]


@pytest.fixture(scope="module")
def every_language() -> pd.DataFrame:
    return build_dataset("all", 60, 5, 5, seed=3, captions_per_image=5).captions


# --- determinism ------------------------------------------------------------------------------


def test_same_seed_gives_identical_tables_and_another_seed_differs():
    a = build_dataset("m30k", 12, 3, 3, seed=7)
    b = build_dataset("m30k", 12, 3, 3, seed=7)
    pd.testing.assert_frame_equal(a.captions, b.captions)
    pd.testing.assert_frame_equal(a.images, b.images)
    c = build_dataset("m30k", 12, 3, 3, seed=8)
    assert (a.captions.text != c.captions.text).mean() > 0.9
    assert a.scenes != c.scenes


def test_an_image_does_not_depend_on_the_others_or_on_other_languages():
    small = build_dataset("all", 5, 0, 0, seed=2, langs=["en"]).captions
    big = build_dataset("all", 20, 4, 4, seed=2, langs=["hi", "en", "ja"]).captions
    big_en = big[(big.lang == "en") & big.image_id.isin(small.image_id)].reset_index(drop=True)
    pd.testing.assert_frame_equal(small, big_en)
    # table order: image, then language as requested, then cap_idx
    assert list(big[big.image_id == "syn-000000"].lang.unique()) == ["hi", "en", "ja"]


# --- tables and profiles ----------------------------------------------------------------------


def test_tables_are_canonical():
    ds = build_dataset("coco", 10, 3, 4, seed=0)
    assert list(ds.captions.columns) == ["image_id", "split", "lang", "cap_idx", "text", "origin"]
    assert list(ds.images.columns) == ["image_id", "split", "path"]
    assert ds.captions.cap_idx.dtype == np.int64
    assert set(ds.captions.origin) == {"human"}
    validate_captions(ds.captions, "test")
    validate_images(ds.images, "test")
    assert ds.images.image_id.tolist()[:2] == ["syn-000000", "syn-000001"]
    assert ds.images.path.tolist()[12] == "images/00012.png"
    assert ds.images.split.value_counts().to_dict() == {"train": 10, "test": 4, "val": 3}
    assert ds.images.split.tolist()[9:11] == ["train", "val"]
    assert len(ds.scenes) == 17


def _counts(captions: pd.DataFrame) -> pd.DataFrame:
    return captions.groupby(["image_id", "lang"]).size().unstack(fill_value=0)


def test_m30k_profile_counts_and_fr_cs_realise_english_caption_one():
    ds = build_dataset("m30k", 15, 3, 3, seed=5)
    counts = _counts(ds.captions)
    assert sorted(counts.columns) == ["cs", "de", "en", "fr"]
    assert (counts.en == 5).all() and (counts.de == 5).all() and (counts.fr == 1).all() and (counts.cs == 1).all()
    assert len(counts) == 21
    caps = ds.captions.set_index(["image_id", "lang", "cap_idx"]).text
    for iid in ds.images.image_id:
        en_plan = ds.plans[iid, "en", 0]
        assert ds.plans[iid, "fr", 0] == en_plan == ds.plans[iid, "cs", 0]
        assert caps[iid, "en", 0] == realise(en_plan, "en")
        assert caps[iid, "fr", 0] == realise(en_plan, "fr")
        assert caps[iid, "cs", 0] == realise(en_plan, "cs")
    # German captions are independent of the English ones
    assert sum(ds.plans[iid, "de", 0] != ds.plans[iid, "en", 0] for iid in ds.images.image_id) >= 15
    # a restricted language list keeps the same fr captions
    only_fr = build_dataset("m30k", 15, 3, 3, seed=5, langs=["fr"]).captions
    assert only_fr.text.tolist() == ds.captions[ds.captions.lang == "fr"].text.tolist()


def test_coco_profile_fractions_and_complete_val_test():
    ds = build_dataset("coco", 500, 15, 15, seed=1)
    counts = _counts(ds.captions)
    split = ds.images.set_index("image_id").split
    train = counts[split[counts.index] == "train"]
    evaluation = counts[split[counts.index] != "train"]
    assert len(train) == 500 and (train.en == 5).all()
    assert set(train.ja) == {0, 5}
    assert 0.15 <= (train.ja == 5).mean() <= 0.25
    assert (train.zh == 1).all(), "a miniature gives every training image a Chinese caption (COCO_ZH_MIN_IMAGES)"
    assert len(evaluation) == 30
    assert (evaluation.en == 5).all() and (evaluation.ja == 5).all() and (evaluation.zh == 1).all()
    three = build_dataset("coco", 20, 2, 2, seed=1, captions_per_image=3).captions
    assert set(_counts(three).en) == {3} and set(_counts(three).ja) <= {0, 3}


def test_coco_profile_gives_chinese_coco_cn_share_above_its_floor():
    """COCO-CN's share (15 %) of a training set larger than COCO_ZH_MIN_IMAGES / 0.15 images."""
    ds = build_dataset("coco", 8000, 0, 0, seed=1, captions_per_image=1, langs=["zh"])
    train = _counts(ds.captions)
    share = len(train) / 8000
    assert 0.13 <= share <= 0.17, share
    assert set(train.zh) == {1}


def test_all_profile_has_every_requested_language():
    ds = build_dataset("all", 6, 2, 2, seed=0, captions_per_image=2, langs=["en", "hi", "ja"])
    counts = _counts(ds.captions)
    assert sorted(counts.columns) == ["en", "hi", "ja"] and (counts == 2).all().all() and len(counts) == 10
    assert set(build_dataset("all", 2, 0, 0, seed=0, captions_per_image=1).captions.lang) == set(ALL)


def test_bad_arguments_name_the_argument():
    with pytest.raises(InputError, match="profile"):
        build_dataset("flickr", 2, 2, 2, seed=0)
    with pytest.raises(InputError, match="'ja'"):
        build_dataset("m30k", 2, 2, 2, seed=0, langs=["en", "ja"])
    with pytest.raises(InputError, match="captions_per_image"):
        build_dataset("all", 2, 2, 2, seed=0, captions_per_image=0)
    with pytest.raises(InputError, match="n_val"):
        build_dataset("all", 2, -1, 2, seed=0)
    with pytest.raises(InputError, match="'xx'"):
        write_dictionaries(Path("unused"), ["en", "xx"])


# --- captions ---------------------------------------------------------------------------------


def test_captions_of_one_image_differ(every_language):
    per_image = every_language.groupby(["image_id", "lang"]).text
    assert (per_image.nunique() == per_image.size()).all()


def _letters(text: str) -> list[str]:
    return [ch for ch in text if unicodedata.category(ch)[0] in "LM"]


SCRIPT = {  # every letter (and combining mark) of a caption is in one of these Unicode blocks
    "ru": [(0x0400, 0x04FF)],
    "ar": [(0x0600, 0x06FF)],
    "ko": [(0xAC00, 0xD7A3)],
    "hi": [(0x0900, 0x097F)],
    "ja": [(0x3040, 0x30FF)],
    "zh": [(0x4E00, 0x9FFF)],
    **{l: [(0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x17F)] for l in ("en", "de", "fr", "cs", "af")},
}


def test_each_language_is_written_in_its_own_script(every_language):
    for lang, texts in every_language.groupby("lang").text:
        for text in texts:
            bad = [ch for ch in _letters(text) if not any(lo <= ord(ch) <= hi for lo, hi in SCRIPT[lang])]
            assert not bad, (lang, text, bad)
            if lang in ("zh", "ja"):
                assert not re.search(r"\s|[A-Za-z]", text), text
            if lang == "ja":
                assert not any(0x4E00 <= ord(ch) <= 0x9FFF for ch in text), text
            if lang == "ko":  # Hangul words are separated by spaces
                assert len(text.split()) >= 2, text
    assert set(every_language.lang) == set(ALL)
    # accented Latin and katakana really occur
    assert every_language[every_language.lang == "cs"].text.str.contains("[ěščřžýáíéůú]").any()
    assert every_language[every_language.lang == "ja"].text.str.contains("[ァ-ヺ]").any()


def _say(lang: str, *mentions: Mention, template: str = "list", texture=None, bg_colour=None) -> str:
    return realise(CaptionPlan(template, tuple(mentions), texture, bg_colour), lang)


def test_adjectives_agree_with_the_noun():
    red_circle, red_square = Mention("circle", 1, colour="red"), Mention("square", 1, colour="red")
    # German: Kreis (m) vs Quadrat (n); nominative vs accusative after "es gibt"
    assert _say("de", red_circle) == "Ein roter Kreis."
    assert _say("de", red_square) == "Ein rotes Quadrat."
    assert _say("de", red_circle, template="exist") == "Es gibt einen roten Kreis."
    assert _say("de", Mention("star", 2, colour="blue", size="small", say_count=True)) == "Zwei kleine blaue Sterne."
    assert (
        _say("de", red_circle, texture="stripes", bg_colour="grey")
        == "Ein roter Kreis auf einem grauen gestreiften Hintergrund."
    )
    # French: colour after the noun, size before; des -> de before an adjective
    assert _say("fr", Mention("star", 1, colour="green")) == "Une étoile verte."
    assert _say("fr", Mention("circle", 1, colour="green")) == "Un cercle vert."
    assert _say("fr", Mention("star", 2, colour="green", size="small")) == "De petites étoiles vertes."
    assert _say("fr", Mention("circle", 3, colour="white", say_count=True)) == "Trois cercles blancs."
    # Czech: feminine accusative -ou/-u; dvě with feminine plural
    assert _say("cs", Mention("star", 1, colour="red"), template="show") == "Obrázek ukazuje červenou hvězdu."
    assert _say("cs", Mention("star", 1, colour="red")) == "Červená hvězda."
    assert _say("cs", red_circle, template="show") == "Obrázek ukazuje červený kruh."
    assert (
        _say("cs", Mention("star", 2, colour="blue", say_count=True), template="exist")
        == "Na obrázku jsou dvě modré hvězdy."
    )
    # Russian: два + genitive singular noun, genitive plural adjective (m); feminine: nominative plural
    assert _say("ru", Mention("star", 2, colour="blue", say_count=True)) == "Две синие звезды."
    assert _say("ru", Mention("circle", 2, colour="blue", say_count=True)) == "Два синих круга."
    assert _say("ru", Mention("ring", 1, colour="blue")) == "Синее кольцо."
    assert _say("ru", Mention("star", 1, colour="red"), template="show") == "Здесь изображена красная звезда."
    # Arabic: dual; non-human plural with feminine singular adjective; ثلاثة with a masculine noun
    assert _say("ar", Mention("circle", 2, colour="red", say_count=True)) == "دائرتان حمراوان."
    assert _say("ar", Mention("circle", 2, colour="red")) == "دوائر حمراء."
    assert _say("ar", red_square) == "مربع أحمر."
    assert _say("ar", Mention("square", 3, colour="red", say_count=True)) == "ثلاثة مربعات حمراء."
    assert _say("ar", Mention("circle", 3, colour="red", say_count=True)) == "ثلاث دوائر حمراء."
    # Hindi: -ā adjectives agree in number, and in gender with पृष्ठभूमि (f)
    assert _say("hi", Mention("star", 2, colour="blue", say_count=True), template="exist") == "दो नीले तारे हैं।"
    assert _say("hi", Mention("star", 1, colour="blue"), template="exist") == "एक नीला तारा है।"
    assert _say("hi", Mention("star", 1, colour="blue"), bg_colour="blue") == "एक नीला तारा। पृष्ठभूमि नीली है।"


def test_classifiers_particles_and_word_order():
    two_red_stars = Mention("star", 2, colour="red", say_count=True)
    assert _say("zh", two_red_stars) == "两颗红色的星星。"
    assert _say("zh", Mention("circle", 2, colour="red", say_count=True)) == "两个红色的圆形。"
    assert _say("ja", two_red_stars, template="exist") == "あかいほしがふたつあります。"
    # Korean subject particle after a consonant (원이) and after a vowel (고리가, 개가)
    assert _say("ko", Mention("circle", 1, colour="red"), template="exist") == "빨간 원이 있습니다."
    assert _say("ko", Mention("ring", 1, colour="red"), template="exist") == "빨간 고리가 있습니다."
    assert (
        _say("ko", Mention("star", 2, colour="blue", say_count=True), template="exist") == "파란 별 두 개가 있습니다."
    )
    both = (Mention("circle", 1, colour="red", position="left"), Mention("star", 2, position="top"))
    assert _say("en", *both, template="where") == "On the left there is a red circle and at the top there are stars."
    assert (
        _say("en", *both, template="exist", texture="plain", bg_colour="grey")
        == "There is a red circle on the left and stars at the top on a plain grey background."
    )
    assert _say("af", Mention("ring", 1, colour="orange")) == "'n Oranje ring."
    assert _say("en", Mention("ring", 1, colour="orange")) == "An orange ring."
    assert _say("ar", *both, template="where") == "على اليسار دائرة حمراء، وفي الأعلى نجوم."


def test_caption_is_plan_then_realise_with_the_same_rng():
    scene = make_scene(0, 1)
    a = caption(scene, "de", np.random.default_rng(5))
    from polyvse.data.synthetic import caption_plan

    assert a == realise(caption_plan(scene, np.random.default_rng(5)), "de")
    with pytest.raises(ValueError, match="where"):
        _say("en", Mention("circle", 1), template="where")


# --- dictionaries -----------------------------------------------------------------------------


def test_dictionaries_are_muse_format_and_cover_every_caption_word(tmp_path, every_language):
    paths = write_dictionaries(tmp_path, ALL)
    assert sorted(p.name for p in paths) == sorted([f"en-{l}.txt" for l in ALL[1:]] + [f"{l}-en.txt" for l in ALL[1:]])
    sources: dict[str, set[str]] = {}
    for path in paths:
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines and all(len(line.split(" ")) == 2 and "\t" not in line for line in lines), path
        sources[path.stem] = {s for s, _ in read_muse(path)}
    for lang in SPACED:
        texts = every_language[every_language.lang == lang].text
        words = {w for t in texts for w in tokenize(t, lang)}
        if lang == "en":
            for other in ALL[1:]:
                assert words <= sources[f"en-{other}"], (other, words - sources[f"en-{other}"])
        else:
            assert words <= sources[f"{lang}-en"], (lang, words - sources[f"{lang}-en"])
    # zh/ja: whole words, and every caption segments into dictionary words
    for lang in ("zh", "ja"):
        words = sources[f"{lang}-en"]
        assert sum(len(w) > 1 for w in words) > 0.6 * len(words)
        for text in every_language[every_language.lang == lang].text:
            for chunk in tokenize(text, lang, segmenter="spaces"):
                pieces = segment_greedy(chunk, words, max(map(len, words)))
                assert set(pieces) <= words, (text, pieces)
    assert {"红色", "星星", "两颗"} <= sources["zh-en"] and {"あかい", "ほし", "ふたつ"} <= sources["ja-en"]
    de = read_muse(tmp_path / "de-en.txt")
    assert ("roter", "red") in de and ("kreise", "circles") in de
    assert dict(reversed(read_muse(tmp_path / "en-de.txt"))).get("a") == "ein"  # first listed target


# --- images -----------------------------------------------------------------------------------


def test_images_render_at_size_differ_and_are_reproducible(tmp_path):
    ds = build_dataset("all", 4, 1, 1, seed=0, captions_per_image=1, langs=["en"])
    write_dataset(ds, tmp_path / "a", image_size=64)
    write_dataset(ds, tmp_path / "b", image_size=64)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["images"]
    arrays = []
    for path in ds.images.path:
        a, b = (tmp_path / d / path for d in "ab")
        assert a.read_bytes() == b.read_bytes()
        with Image.open(a) as img:
            assert img.size == (64, 64) and img.mode == "RGB"
            arrays.append(np.asarray(img))
    assert all(not np.array_equal(arrays[i], arrays[j]) for i in range(6) for j in range(i))
    assert render_scene(ds.scenes[0], 224, image_rng(0, 0, 2)).size == (224, 224)


def test_rendered_objects_have_their_colour_and_position():
    scene = Scene(
        groups=(ObjectGroup("circle", "red", "large", "left", 1), ObjectGroup("square", "blue", "large", "right", 1)),
        texture="plain",
        bg_colour="grey",
    )
    px = np.asarray(render_scene(scene, 100, np.random.default_rng(0))).astype(int)
    assert np.abs(px[50, 19] - [215, 35, 35]).max() < 40  # red at the left region's centre
    assert np.abs(px[50, 81] - [35, 75, 215]).max() < 40  # blue at the right
    assert np.abs(px[5, 50] - [200, 200, 200]).max() < 30  # grey background at the top
    # same scene, other jitter: close but not pixel-identical
    other = np.asarray(render_scene(scene, 100, np.random.default_rng(1))).astype(int)
    assert not np.array_equal(px, other)


# --- the closed lexicon is frozen -------------------------------------------------------------


def test_closed_lexicon_output_is_byte_identical_to_the_closed_only_generator():
    """Fingerprints computed with the generator before the long-tail lexicon existed, which gave
    Chinese COCO-CN's share of any training set (no floor)."""
    import hashlib

    from polyvse.data.synthetic import glossary

    h = hashlib.sha256()
    for profile, sizes in (("all", (20, 3, 3)), ("m30k", (20, 3, 3)), ("coco", (30, 3, 3))):
        ds = build_dataset(profile, *sizes, seed=11, zh_min_images=0)
        h.update(ds.captions.to_csv(index=False).encode())
        h.update(ds.images.to_csv(index=False).encode())
    assert h.hexdigest() == "b1b3b5616cfd0edf98b943153a47561194868fe3265224a7968156cfae25292f"
    g = hashlib.sha256()
    for lang in ALL[1:]:
        g.update(repr(glossary(lang)).encode())
    assert g.hexdigest() == "4efb801ae6abe08bc7ce884808f9793575954ac1ad4b68ca117b29506e7b8492"
    ds = build_dataset("all", 6, 0, 0, seed=11, langs=["en"])
    im = hashlib.sha256()
    for i, scene in enumerate(ds.scenes):
        im.update(np.asarray(render_scene(scene, 48, image_rng(11, i, 2))).tobytes())
    assert im.hexdigest() == "71c59185bb30a1e1368790e712687e40b3149ff52f77d4022c01fd5c782c9477"


def test_group_count_draw_is_generator_choice():
    """sample_scene draws its number of groups as rng.choice(GROUP_COUNTS, p=GROUP_COUNT_P) did (the
    datasets and corpora of earlier runs), consuming the same one uniform draw."""
    from polyvse.data.synthetic.scene import GROUP_COUNT_P, GROUP_COUNTS, sample_scene

    for seed in range(3000):
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        n = len(sample_scene(ours).groups)
        assert n == int(theirs.choice(GROUP_COUNTS, p=GROUP_COUNT_P)), seed
