"""Offline dictionary MT: word by word, zh/ja segmentation and joining, English pivot."""

from __future__ import annotations

import pytest

from polyvse.errors import InputError
from polyvse.translate.backend import make_backend
from polyvse.translate.dictionary import DictionaryBackend, join_tokens, segment_greedy
from polyvse.text.muse import MuseDictionary

EN_DE = [("a", "ein"), ("red", "rotes"), ("red", "rote"), ("car", "auto"), ("dog", "hund")]
DE_EN = [("ein", "a"), ("rotes", "red"), ("auto", "car"), ("hund", "dog")]
EN_FR = [("a", "une"), ("red", "rouge"), ("car", "voiture"), ("dog", "chien")]
ZH_EN = [
    ("红色", "red"),
    ("红", "crimson"),
    ("汽车", "car"),
    ("车", "vehicle"),
    ("很", "very"),
    ("大", "big"),
    ("一辆", "a"),
]
EN_ZH = [("a", "一辆"), ("red", "红色"), ("car", "汽车"), ("big", "大")]
EN_JA = [("red", "赤い"), ("car", "車"), ("a", "一台の")]


def backend(**extra_pairs) -> DictionaryBackend:
    tables = {
        ("en", "de"): EN_DE,
        ("de", "en"): DE_EN,
        ("en", "fr"): EN_FR,
        ("zh", "en"): ZH_EN,
        ("en", "zh"): EN_ZH,
        ("en", "ja"): EN_JA,
    }
    tables.update({tuple(k.split("_")): v for k, v in extra_pairs.items()})
    return DictionaryBackend.from_dictionaries([MuseDictionary.from_pairs(v, *k) for k, v in tables.items()])


def test_word_by_word_keeps_unknown_words_and_first_target_wins():
    out = backend().translate_batch(["A red Car, parked!", "dog"], "en", "de")
    # tokenised (lower case, punctuation gone); "parked" is unknown and kept; red -> rotes (first listed)
    assert out == ["ein rotes auto parked", "hund"]


def test_greedy_longest_match_segments_chinese():
    words = {w for w, _ in ZH_EN}
    assert segment_greedy("一辆红色汽车很大", words, 2) == ["一辆", "红色", "汽车", "很", "大"]
    # no dictionary word: one character, or a whole run of Latin letters/digits
    assert segment_greedy("红x光iphone13车", words, 2) == ["红", "x", "光", "iphone13", "车"]
    # the character split of the default tokenizer would give crimson/vehicle here:
    assert backend().translate_batch(["一辆红色汽车很大。"], "zh", "en") == ["a red car very big"]


def test_target_zh_ja_joined_without_spaces():
    b = backend()
    assert b.translate_batch(["A red car"], "en", "zh") == ["一辆红色汽车"]
    assert b.translate_batch(["a red car"], "en", "ja") == ["一台の赤い車"]
    # unknown Latin words kept, and kept apart from each other
    assert b.translate_batch(["big iphone case"], "en", "zh") == ["大iphone case"]
    assert join_tokens(["a", "b"], "de") == "a b"


def test_pivot_through_english_when_no_direct_dictionary():
    b = backend()
    assert b.route("de", "fr") == [("de", "en"), ("en", "fr")]
    assert b.translate_batch(["Ein rotes Auto"], "de", "fr") == ["une rouge voiture"]
    # zh -> ja: segmented with the zh-en dictionary, then en -> ja
    assert b.translate_batch(["红色汽车"], "zh", "ja") == ["赤い車"]


def test_direct_dictionary_preferred_over_pivot():
    b = backend(de_fr=[("auto", "bagnole"), ("rotes", "rouge")])
    assert b.route("de", "fr") == [("de", "fr")]
    assert b.translate_batch(["rotes auto"], "de", "fr") == ["rouge bagnole"]


def test_missing_route_names_the_needed_files():
    with pytest.raises(InputError) as err:
        backend().translate_batch(["x"], "fr", "de")
    assert "fr-de.txt" in err.value.reason and "fr-en.txt" in err.value.reason


def test_same_language_is_identity():
    assert backend().translate_batch(["Ein Auto!"], "de", "de") == ["Ein Auto!"]


def test_from_directory_via_registry_and_cache_key_tracks_file_content(tmp_path):
    (tmp_path / "en-de.txt").write_text("".join(f"{s} {t}\n" for s, t in EN_DE), encoding="utf-8")
    (tmp_path / "de-en.txt").write_text("".join(f"{s}\t{t}\n" for s, t in DE_EN), encoding="utf-8")
    (tmp_path / "en-ru.txt").write_text("dog собака\n", encoding="utf-8")  # not configured: ignored
    b = make_backend("dictionary", directory=tmp_path, languages=["en", "de", "fr"])
    assert b.name == "dictionary"
    assert b.translate_batch(["a red dog"], "en", "de") == ["ein rotes hund"]
    key = b.cache_key("en", "de")
    assert key.startswith("dictionary:") and key != b.cache_key("de", "en")
    (tmp_path / "en-de.txt").write_text("dog köter\n", encoding="utf-8")
    b2 = make_backend("dictionary", directory=tmp_path, languages=["en", "de", "fr"])
    assert b2.cache_key("en", "de") != key  # edited dictionary: old cache entries are not reused
    assert b2.cache_key("de", "en") == b.cache_key("de", "en")


def test_explicit_files_must_name_configured_languages(tmp_path):
    p = tmp_path / "en-xx.txt"
    p.write_text("dog hund\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        DictionaryBackend(files=[p], languages=["en", "de"])
    assert err.value.where == str(p) and "'xx'" in err.value.reason


def test_bad_dictionary_line_surfaces_on_first_use(tmp_path):
    (tmp_path / "en-de.txt").write_text("dog hund\ncat\n", encoding="utf-8")
    b = DictionaryBackend(directory=tmp_path, languages=["en", "de"])
    with pytest.raises(InputError) as err:
        b.translate_batch(["dog"], "en", "de")
    assert err.value.where == str(tmp_path / "en-de.txt") and err.value.line == 2


def test_unknown_backend_name():
    with pytest.raises(ValueError, match="unknown translation backend 'nope'"):
        make_backend("nope")
