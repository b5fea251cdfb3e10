"""Training augmentation, test-time translations and CLC translations on a tiny captions table."""

from __future__ import annotations

import pandas as pd
import pytest

from polyvse.errors import InputError
from polyvse.translate import augment
from polyvse.translate.cache import CachedTranslator, TranslationCache
from polyvse.translate.dictionary import DictionaryBackend
from polyvse.text.muse import MuseDictionary

TEN = ["en", "de", "fr", "cs", "zh", "ja", "ar", "af", "ko", "ru"]
ORDER = ["en", "de", "fr", "cs", "zh", "ja"]
COLS = augment.CAPTION_COLUMNS


class FakeTranslator:
    """Marks each text with its pair; records every call."""

    def __init__(self):
        self.calls: list[tuple[str, str, list[str]]] = []

    def translate(self, texts, src, tgt):
        self.calls.append((src, tgt, list(texts)))
        return [f"[{src}>{tgt}] {t}" for t in texts]


def captions_table() -> pd.DataFrame:
    """Multi30K-like: en 5, de 5, fr 1, cs 1; img2 has only 2 en and 2 de captions, img3 only 5 de."""
    rows = []

    def add(image, split, lang, n, start=0):
        for k in range(start, start + n):
            rows.append((image, split, lang, k, f"{image} {lang} caption {k}", "human"))

    for image, split in [("img0", "train"), ("img1", "train"), ("img4", "val")]:
        add(image, split, "en", 5)
        add(image, split, "de", 5)
        add(image, split, "fr", 1)
        add(image, split, "cs", 1)
    add("img2", "train", "en", 2)
    add("img2", "train", "de", 2)
    add("img3", "train", "de", 5)
    for image in ["t0", "t1"]:
        add(image, "test", "en", 5)
        add(image, "test", "de", 5)
        add(image, "test", "fr", 1)
    # pandas 3 string columns; shuffled so that output order does not come from input order
    df = pd.DataFrame(rows, columns=COLS).astype(
        {"image_id": "str", "split": "str", "lang": "str", "text": "str", "origin": "str", "cap_idx": "int64"}
    )
    return df.sample(frac=1.0, random_state=0).reset_index(drop=True)


def test_every_train_and_val_image_reaches_five_per_language_and_human_rows_unchanged():
    caps = captions_table()
    tr = FakeTranslator()
    out = augment.augment_training(caps, TEN, ORDER, tr)
    # human rows: first, unchanged, same order
    pd.testing.assert_frame_equal(out.iloc[: len(caps)][COLS], caps)
    assert out.iloc[: len(caps)]["source_lang"].isna().all()
    added = out.iloc[len(caps) :]
    assert (added["origin"] == "mt").all() and added["source_lang"].notna().all()
    trainval = out[out["split"].isin(["train", "val"])]
    counts = trainval.groupby(["image_id", "lang"]).size().unstack(fill_value=0).reindex(columns=TEN, fill_value=0)
    assert sorted(counts.index) == ["img0", "img1", "img2", "img3", "img4"]
    assert (counts == 5).all().all(), counts  # exactly filled up, never more than needed
    assert not (out[out["split"] == "test"]["origin"] == "mt").any()  # test images are not augmented here
    assert not out.duplicated(["image_id", "lang", "cap_idx"]).any()
    assert out["split"].tolist().count("val") == 5 * len(TEN)


def test_sources_follow_config_order_and_cycle_through_captions():
    out = augment.augment_training(captions_table(), TEN, ORDER, FakeTranslator())
    mt = out[out["origin"] == "mt"].set_index(["image_id", "lang", "cap_idx"])
    # fr has one human caption (cap_idx 0): four translations continue at 1..4, of en captions 0..3
    assert [mt.loc[("img0", "fr", k), "source_cap_idx"] for k in range(1, 5)] == [0, 1, 2, 3]
    assert mt.loc[("img0", "fr", 1), "text"] == "[en>fr] img0 en caption 0"
    # ko (no human captions) from the five distinct en captions
    assert [mt.loc[("img1", "ko", k), "text"] for k in range(5)] == [f"[en>ko] img1 en caption {k}" for k in range(5)]
    # img2: en 0, en 1, then de 0, de 1 (next source language), then back to en 0
    got = [(mt.loc[("img2", "zh", k), "source_lang"], mt.loc[("img2", "zh", k), "source_cap_idx"]) for k in range(5)]
    assert got == [("en", 0), ("en", 1), ("de", 0), ("de", 1), ("en", 0)]
    # en itself is filled from de for img2 (3 missing) and img3 (5 missing, from its five de captions)
    assert [mt.loc[("img2", "en", k), "text"] for k in (2, 3, 4)] == [
        "[de>en] img2 de caption 0",
        "[de>en] img2 de caption 1",
        "[de>en] img2 de caption 0",
    ]
    assert [mt.loc[("img3", "en", k), "source_cap_idx"] for k in range(5)] == [0, 1, 2, 3, 4]
    assert {mt.loc[("img3", "en", k), "source_lang"] for k in range(5)} == {"de"}


def test_other_source_order_changes_the_sources():
    out = augment.augment_training(captions_table(), ["en", "de", "ko"], ["de", "en"], FakeTranslator())
    mt = out[(out["origin"] == "mt") & (out["lang"] == "ko")].set_index(["image_id", "cap_idx"])
    assert set(mt.loc["img0", "source_lang"]) == {"de"}
    assert [(mt.loc[("img2", k), "source_lang"], mt.loc[("img2", k), "source_cap_idx"]) for k in range(5)] == [
        ("de", 0),
        ("de", 1),
        ("en", 0),
        ("en", 1),
        ("de", 0),
    ]


def test_translates_in_bulk_one_call_per_pair():
    tr = FakeTranslator()
    augment.augment_training(captions_table(), TEN, ORDER, tr)
    pairs = [(s, t) for s, t, _ in tr.calls]
    assert len(pairs) == len(set(pairs))
    for _, _, texts in tr.calls:
        assert len(texts) == len(set(texts))
    # every target language but en is filled from en; en of img2/img3 and zh.. of img3 from de
    assert ("en", "ko") in pairs and ("de", "en") in pairs and ("de", "ko") in pairs


def test_image_without_any_source_caption_fails():
    caps = pd.DataFrame([("x", "train", "ko", 0, "korean only", "human")], columns=COLS)
    with pytest.raises(InputError, match="image 'x'"):
        augment.augment_training(caps, ["en", "ko"], ["en", "de"], FakeTranslator())
    with pytest.raises(InputError, match="lacks columns"):
        augment.augment_training(caps.drop(columns="origin"), ["en"], ["en"], FakeTranslator())


def test_test_translations_fill_languages_without_human_test_captions():
    caps = captions_table()
    tr = FakeTranslator()
    out = augment.test_translations(caps, ["en", "de", "fr", "zh", "ja"], tr)
    pd.testing.assert_frame_equal(out.iloc[: len(caps)][COLS], caps)
    added = out.iloc[len(caps) :]
    # fr has human test captions (one per image): evaluated on those, not translated
    assert sorted(set(added["lang"])) == ["ja", "zh"]
    assert len(added) == 2 * 2 * 5 and (added["split"] == "test").all() and (added["source_lang"] == "en").all()
    row = added[(added["image_id"] == "t1") & (added["lang"] == "ja") & (added["cap_idx"] == 3)]
    assert row["text"].tolist() == ["[en>ja] t1 en caption 3"] and row["source_cap_idx"].tolist() == [3]
    assert sorted((s, t) for s, t, _ in tr.calls) == [("en", "ja"), ("en", "zh")]
    assert augment.mt_test_languages(out) == ["ja", "zh"]
    again = augment.test_translations(out, ["en", "de", "fr", "zh", "ja"], FakeTranslator())
    pd.testing.assert_frame_equal(again, out)  # idempotent


def test_augmentation_then_test_translations_compose():
    caps = captions_table()
    aug = augment.augment_training(caps, TEN, ORDER, FakeTranslator())
    full = augment.test_translations(aug, TEN, FakeTranslator())
    pd.testing.assert_frame_equal(full.iloc[: len(aug)], aug)
    assert augment.mt_test_languages(full) == sorted(set(TEN) - {"en", "de", "fr"})


def test_clc_translates_every_human_test_caption_into_every_other_language():
    caps = captions_table()
    langs = ["en", "de", "fr", "zh"]
    tr = FakeTranslator()
    clc = augment.clc_translations(caps, langs, tr)
    assert list(clc.columns) == augment.CLC_COLUMNS
    n_test_human = int(((caps["split"] == "test") & caps["lang"].isin(langs)).sum())
    assert len(clc) == n_test_human * (len(langs) - 1)
    assert not clc.duplicated(["image_id", "lang", "cap_idx", "tgt_lang"]).any()
    assert (clc["lang"] != clc["tgt_lang"]).all()
    row = clc[(clc["image_id"] == "t0") & (clc["lang"] == "de") & (clc["cap_idx"] == 2) & (clc["tgt_lang"] == "en")]
    assert row["text"].tolist() == ["[de>en] t0 de caption 2"]
    assert len(tr.calls) == 3 * 3  # one call per (src, tgt) pair of the three test languages
    # MT test rows are queries too when asked for
    with_mt = augment.test_translations(caps, langs, FakeTranslator())
    clc_all = augment.clc_translations(with_mt, langs, FakeTranslator(), origins=("human", "mt"))
    assert set(clc_all["lang"]) == {"en", "de", "fr", "zh"}


def test_dictionary_mt_end_to_end_and_rerun_sends_nothing(tmp_path):
    en_de = MuseDictionary.from_pairs([("a", "ein"), ("red", "rotes"), ("car", "auto")], "en", "de")
    de_en = MuseDictionary.from_pairs([("ein", "a"), ("rotes", "red"), ("auto", "car")], "de", "en")
    en_zh = MuseDictionary.from_pairs([("a", "一辆"), ("red", "红色"), ("car", "汽车")], "en", "zh")
    backend = DictionaryBackend.from_dictionaries([en_de, de_en, en_zh])
    caps = pd.DataFrame(
        [("i", "train", "en", k, "A red car.", "human") for k in range(5)]
        + [("i", "train", "de", 0, "Ein rotes Auto", "human")],
        columns=COLS,
    )
    with TranslationCache(tmp_path / "mt.sqlite") as cache:
        tr = CachedTranslator(backend, cache)
        out = augment.augment_training(caps, ["en", "de", "zh"], ["en", "de"], tr)
        assert tr.stats["sent"] == 2 and tr.stats["hits"] == 0  # "A red car." once per target
    zh = out[out["lang"] == "zh"]["text"].tolist()
    assert zh == ["一辆红色汽车"] * 5
    assert out[(out["lang"] == "de") & (out["origin"] == "mt")]["text"].tolist() == ["ein rotes auto"] * 4
    with TranslationCache(tmp_path / "mt.sqlite") as cache:
        tr = CachedTranslator(backend, cache)
        again = augment.augment_training(caps, ["en", "de", "zh"], ["en", "de"], tr)
        assert tr.stats["sent"] == 0 and tr.stats["hits"] == 2
    pd.testing.assert_frame_equal(again, out)
