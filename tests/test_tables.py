"""Validation of the canonical captions and images tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from polyvse.data.tables import (
    CAPTION_COLUMNS,
    IMAGE_COLUMNS,
    check_captions_match_images,
    read_captions,
    read_images,
    validate_captions,
    validate_images,
)
from polyvse.errors import InputError
from polyvse.io import write_parquet


def _captions() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "image_id": ["1", "1", "1", "2", "2"],
            "split": ["train", "train", "train", "test", "test"],
            "lang": ["en", "en", "de", "en", "en"],
            "cap_idx": [0, 1, 0, 0, 0],
            "text": ["a dog", "a brown dog", "ein Hund", "a cat", "a cat"],
            "origin": ["human", "human", "human", "human", "mt"],
        }
    )


def _images() -> pd.DataFrame:
    return pd.DataFrame({"image_id": ["1", "2"], "split": ["train", "test"], "path": ["img/1.jpg", ""]})


def test_valid_tables_pass_and_are_normalised() -> None:
    raw = _captions()
    raw["image_id"] = [1, 1, 1, 2, 2]  # ints become str ids
    raw["cap_idx"] = [0.0, 1.0, 0.0, 0.0, 0.0]  # integral floats become int64
    raw = raw[list(reversed(CAPTION_COLUMNS))]
    raw.index = [10, 11, 12, 13, 14]
    out = validate_captions(raw, "t")
    assert tuple(out.columns) == CAPTION_COLUMNS
    assert out.index.tolist() == [0, 1, 2, 3, 4]
    assert out.image_id.tolist() == ["1", "1", "1", "2", "2"]
    assert out.cap_idx.dtype == np.int64 and out.cap_idx.tolist() == [0, 1, 0, 0, 0]
    assert pd.api.types.is_string_dtype(out.text.dtype)
    images = validate_images(_images(), "t")
    assert tuple(images.columns) == IMAGE_COLUMNS and images.path.tolist() == ["img/1.jpg", ""]
    check_captions_match_images(out, images, "t")


@pytest.mark.parametrize(
    "change, needle",
    [
        (lambda df: df.drop(columns=["origin"]), "missing column(s) origin"),
        (lambda df: df.assign(split=["train", "train", "train", "dev", "test"]), "row 3 (image_id='2', split='dev'"),
        (lambda df: df.assign(origin=["human"] * 4 + ["google"]), "origin 'google' is not one of human|mt"),
        (lambda df: df.assign(lang=["en", "en", "cz", "en", "en"]), "row 2 (image_id='1', split='train', lang='cz'"),
        (lambda df: df.assign(text=["a dog", "  ", "ein Hund", "a cat", "a cat"]), "row 1 ("),
        (lambda df: df.assign(text=["a dog", "a\nb", "ein Hund", "a cat", "a cat"]), "line break"),
        (lambda df: df.assign(text=["a dog", None, "ein Hund", "a cat", "a cat"]), "text is missing"),
        (lambda df: df.assign(cap_idx=[0, 1.5, 0, 0, 0]), "cap_idx 1.5 is not an integer"),
        (lambda df: df.assign(cap_idx=[0, -1, 0, 0, 0]), "cap_idx must be >= 0"),
        (lambda df: df.assign(image_id=[1.0, 1.0, 1.0, 2.0, 2.0]), "column image_id has dtype float64"),
        (
            lambda df: df.assign(origin=["human"] * 5),
            "row 4 (image_id='2', split='test', lang='en', cap_idx=0, origin='human'): duplicate key",
        ),
        (lambda df: df.assign(split=["train", "val", "train", "test", "test"]), "image '1' is in split 'val'"),
    ],
)
def test_bad_captions_are_rejected(change, needle: str) -> None:
    with pytest.raises(InputError) as err:
        validate_captions(change(_captions()), "captions.parquet")
    msg = str(err.value)
    assert msg.startswith("captions.parquet: ")
    assert needle in msg


def test_extra_columns_are_kept_after_the_canonical_ones() -> None:
    df = _captions().assign(source_lang=[None, None, None, None, "de"])
    df = df[["source_lang", *CAPTION_COLUMNS]]
    out = validate_captions(df, "x")
    assert list(out.columns) == [*CAPTION_COLUMNS, "source_lang"]
    assert out.source_lang.isna().sum() == 4 and out.source_lang.iat[4] == "de"  # nulls allowed there


def test_duplicate_key_names_first_row() -> None:
    df = _captions().assign(origin=["human"] * 5)
    with pytest.raises(InputError, match="first at row 3"):
        validate_captions(df, "x")


def test_empty_text_names_its_row() -> None:
    df = _captions().assign(text=["a dog", "a brown dog", "", "a cat", "a cat"])
    with pytest.raises(InputError, match=r"row 2 \(image_id='1'.*empty caption text"):
        validate_captions(df, "x")


@pytest.mark.parametrize(
    "change, needle",
    [
        (lambda df: df.rename(columns={"path": "file"}), "missing column(s) path"),
        (lambda df: df.assign(split=["train", "testing"]), "split 'testing' is not one of train|val|test"),
        (
            lambda df: df.assign(image_id=["1", "1"]),
            "row 1 (image_id='1', split='test'): duplicate image_id, first at row 0",
        ),
        (lambda df: df.assign(image_id=["1", " "]), "empty image_id"),
        (lambda df: df.assign(path=["a.jpg", None]), "path is missing"),
    ],
)
def test_bad_images_are_rejected(change, needle: str) -> None:
    with pytest.raises(InputError) as err:
        validate_images(change(_images()), "images.parquet")
    assert needle in str(err.value)


def test_captions_must_match_images() -> None:
    captions = validate_captions(_captions(), "c")
    only_one = validate_images(_images().iloc[:1], "i")
    with pytest.raises(InputError, match="row 3 .*not in the images table"):
        check_captions_match_images(captions, only_one, "x")
    moved = validate_images(_images().assign(split=["train", "val"]), "i")
    with pytest.raises(InputError, match="row 3 .*split 'val'"):
        check_captions_match_images(captions, moved, "x")


def test_read_round_trip_and_errors(tmp_path: Path) -> None:
    write_parquet(_captions(), tmp_path / "captions.parquet")
    write_parquet(_images(), tmp_path / "images.parquet")
    pd.testing.assert_frame_equal(read_captions(tmp_path / "captions.parquet"), validate_captions(_captions(), "x"))
    assert read_images(tmp_path / "images.parquet").image_id.tolist() == ["1", "2"]

    with pytest.raises(InputError) as err:
        read_captions(tmp_path / "absent.parquet")
    assert "absent.parquet" in str(err.value) and "not found" in str(err.value)

    (tmp_path / "junk.parquet").write_bytes(b"not a parquet file")
    with pytest.raises(InputError) as err:
        read_images(tmp_path / "junk.parquet")
    assert "junk.parquet" in str(err.value) and "cannot read images table" in str(err.value)

    # A readable file with bad content: the error names the file.
    write_parquet(_images().assign(split=["train", "dev"]), tmp_path / "bad.parquet")
    with pytest.raises(InputError, match=r"bad\.parquet: .*split 'dev'"):
        read_images(tmp_path / "bad.parquet")
