"""Vocabulary-reduction baselines of SMALR §4 (polyvse.text.reduction)."""

from __future__ import annotations

import pytest

from polyvse.text.reduction import map_rare_to_english, rare_word_map, threshold_vocabulary
from polyvse.text.vocab import Vocabulary
from polyvse.text.muse import MuseDictionary

DE_COUNTS = {"der": 50, "hund": 12, "läuft": 5, "dackel": 2, "wiese": 4, "zebra": 1}
DE_EN = MuseDictionary.from_pairs(
    [
        ("Dackel", "dachshund"),
        ("dackel", "sausage-dog"),
        ("wiese", "meadow"),
        ("hund", "dog"),
        ("läuft", "runs"),
        ("Eiscreme", "ice cream"),
    ],
    "de",
    "en",
)


def test_threshold_keeps_words_seen_at_least_t_times_most_frequent_first():
    assert threshold_vocabulary(DE_COUNTS, 5) == {"der": 50, "hund": 12, "läuft": 5}
    assert list(threshold_vocabulary(DE_COUNTS, 1)) == ["der", "hund", "läuft", "wiese", "dackel", "zebra"]
    assert threshold_vocabulary(DE_COUNTS, 51) == {}
    with pytest.raises(ValueError, match="positive integer"):
        threshold_vocabulary(DE_COUNTS, 0)


def test_thresholded_words_read_as_the_languages_unk():
    vocab = Vocabulary(["de"], {"de": list(threshold_vocabulary(DE_COUNTS, 5))})
    unk = vocab.stoi[("de", "<unk>")]
    ids = vocab.encode("Der Dackel läuft", "de")
    assert ids == [vocab.stoi[("de", "der")], unk, vocab.stoi[("de", "läuft")]]
    assert len(vocab) == 1 + 1 + 3  # pad, <unk>, three kept words


def test_rare_word_map_translates_only_rare_words_with_an_entry():
    # t=5: dackel (2), wiese (4), zebra (1) are rare; zebra has no entry; läuft (5) is not rare
    assert rare_word_map(DE_COUNTS, 5, DE_EN, "de") == {"dackel": ["dachshund"], "wiese": ["meadow"]}
    assert rare_word_map(DE_COUNTS, 13, DE_EN, "de") == {
        "hund": ["dog"],
        "läuft": ["runs"],
        "dackel": ["dachshund"],
        "wiese": ["meadow"],
    }
    assert rare_word_map({"en_word": 1}, 5, DE_EN, "en") == {}


def test_map_rare_to_english_by_hand():
    tokens = ["der", "dackel", "läuft", "über", "die", "wiese", "zebra"]
    out = map_rare_to_english(tokens, "de", DE_COUNTS, 5, DE_EN)
    assert out == [
        ("de", "der"),
        ("en", "dachshund"),
        ("de", "läuft"),
        ("de", "über"),  # unseen (count 0) and untranslated: stays German, later <unk>
        ("de", "die"),
        ("en", "meadow"),
        ("de", "zebra"),
    ]


def test_multiword_translation_becomes_several_english_tokens():
    out = map_rare_to_english(["eiscreme"], "de", {}, 5, DE_EN)
    assert out == [("en", "ice"), ("en", "cream")]


def test_english_is_unchanged_and_wrong_dictionaries_fail():
    assert map_rare_to_english(["a", "dog"], "en", {}, 5, None) == [("en", "a"), ("en", "dog")]
    with pytest.raises(ValueError, match="needs a fr-en dictionary, got de-en"):
        map_rare_to_english(["chien"], "fr", {}, 5, DE_EN)
    with pytest.raises(ValueError, match="needs a fr-en dictionary, got None"):
        map_rare_to_english(["chien"], "fr", {}, 5, None)
