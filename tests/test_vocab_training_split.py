"""Vocabularies come from the training split only: no test word leaks in.

The vocab rule's script calls :func:`polyvse.text.vocab.training_counts`; these
tests run it on captions tables where some words appear only outside training.
"""

from __future__ import annotations

import pandas as pd
import pytest

from polyvse.data.synthetic import build_dataset
from polyvse.errors import InputError
from polyvse.text.vocab import count_tokens, training_counts


def _captions() -> pd.DataFrame:
    rows = [
        ("i1", "train", "en", "A red dog runs."),
        ("i1", "train", "de", "Ein roter Hund läuft."),
        ("i2", "train", "en", "A red cat sleeps"),
        ("i3", "val", "en", "A purple valword"),
        ("i4", "test", "en", "A green testword!"),
        ("i4", "test", "de", "Ein grünes Testwort"),
    ]
    return pd.DataFrame(rows, columns=["image_id", "split", "lang", "text"])


def test_training_counts_by_hand():
    assert training_counts(_captions(), "en") == {"a": 2, "red": 2, "dog": 1, "runs": 1, "cat": 1, "sleeps": 1}
    assert training_counts(_captions(), "de") == {"ein": 1, "roter": 1, "hund": 1, "läuft": 1}


def test_no_validation_or_test_word_in_the_vocabulary():
    counts = training_counts(_captions(), "en")
    for word in ("purple", "valword", "green", "testword"):
        assert word not in counts
    assert "testwort" not in training_counts(_captions(), "de")


def test_no_held_out_word_leaks_on_a_synthetic_captions_table():
    # The synthetic grammar's words all occur in training, so mark held-out captions
    # with words of their own, in every language, and look for them.
    captions = build_dataset("m30k", 40, 10, 30, seed=3).captions.copy()
    held_out = captions["split"] != "train"
    captions.loc[held_out, "text"] = captions.loc[held_out, "text"] + " zz" + captions.loc[held_out, "split"]
    for lang in ("en", "de", "fr", "cs"):
        vocab = training_counts(captions, lang)
        assert "zzval" not in vocab and "zztest" not in vocab
        assert vocab == count_tokens(captions.loc[~held_out & (captions["lang"] == lang), "text"], lang)
        # the same table without the split filter does hold them
        everything = count_tokens(captions.loc[captions["lang"] == lang, "text"], lang)
        assert everything["zzval"] > 0 and everything["zztest"] > 0


def test_a_language_without_training_captions_fails_naming_the_file():
    with pytest.raises(InputError, match=r"captions\.parquet: no training captions in language 'fr'"):
        training_counts(_captions(), "fr", where="results/m30k/captions.parquet")
