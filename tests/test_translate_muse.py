"""MUSE dictionary reading: pairs, normalisation, and errors that name file, line and reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from polyvse.errors import InputError
from polyvse.text.muse import MuseDictionary, discover_dictionaries, parse_pair_name, read_muse

LANGS = ["en", "de", "fr", "zh"]


def write(path: Path, data: bytes | str) -> Path:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def test_reads_space_and_tab_separated_pairs_in_order(tmp_path):
    p = write(tmp_path / "en-de.txt", "\ufeffdog hund\ncat\tkatze\n\n  dog  köter \r\nhouse haus\n")
    assert read_muse(p) == [("dog", "hund"), ("cat", "katze"), ("dog", "köter"), ("house", "haus")]


def test_first_listed_target_wins_and_sources_are_normalised(tmp_path):
    p = write(tmp_path / "en-de.txt", "Dog hund\ndog köter\ndog hund\nＣＡＴ katze\n")
    d = MuseDictionary.from_file(p, LANGS)
    assert (d.src, d.tgt) == ("en", "de")
    assert d.entries["dog"] == ["hund", "köter"]  # duplicate line dropped, file order kept
    assert d.first("dog") == "hund"
    assert d.first("cat") == "katze"  # NFKC folds full-width letters, then lower case
    assert d.first("bird") is None
    assert len(d) == 2 and d.max_source_chars == 3


def test_line_with_one_field_names_file_and_line(tmp_path):
    p = write(tmp_path / "en-de.txt", "dog hund\ncat katze\nbird\n")
    with pytest.raises(InputError) as err:
        read_muse(p)
    assert err.value.where == str(p) and err.value.line == 3
    assert "one field" in err.value.reason
    assert f"{p}:3:" in str(err.value)


def test_line_with_three_fields_fails(tmp_path):
    p = write(tmp_path / "en-de.txt", "dog hund\nred car rotes\n")
    with pytest.raises(InputError) as err:
        read_muse(p)
    assert err.value.line == 2 and "3 fields" in err.value.reason


def test_non_utf8_names_line_and_byte_offset(tmp_path):
    # "dog hund\n" is 9 bytes, "cat " 4 more: the bad byte is at offset 13, on line 2.
    p = write(tmp_path / "en-de.txt", b"dog hund\ncat \xff\xfe\nbird vogel\n")
    with pytest.raises(InputError) as err:
        read_muse(p)
    assert err.value.line == 2
    assert "UTF-8" in err.value.reason and "0xff" in err.value.reason and "offset 13" in err.value.reason


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(InputError, match="not found") as err:
        read_muse(tmp_path / "en-de.txt")
    assert err.value.where == str(tmp_path / "en-de.txt")
    with pytest.raises(InputError, match="no entries"):
        read_muse(write(tmp_path / "en-fr.txt", "\n\n"))


def test_pair_from_file_name_must_be_configured(tmp_path):
    assert parse_pair_name(tmp_path / "en-de.txt", LANGS) == ("en", "de")
    assert parse_pair_name(tmp_path / "de-en.0-5000.txt", LANGS) == ("de", "en")
    with pytest.raises(InputError) as err:
        parse_pair_name(tmp_path / "en-xx.txt", LANGS)
    assert err.value.where == str(tmp_path / "en-xx.txt") and "'xx'" in err.value.reason
    with pytest.raises(InputError, match="file name"):
        parse_pair_name(tmp_path / "english_german.txt", LANGS)
    with pytest.raises(InputError, match="both 'en'"):
        parse_pair_name(tmp_path / "en-en.txt", LANGS)
    # from_file applies the same check before reading
    p = write(tmp_path / "en-ru.txt", "dog собака\n")
    with pytest.raises(InputError, match="'ru'"):
        MuseDictionary.from_file(p, LANGS)


def test_discover_keeps_configured_full_dictionaries_only(tmp_path):
    for name in ["en-de.txt", "de-en.txt", "en-ru.txt", "en-de.0-5000.txt", "README.txt", "zh-en.txt"]:
        write(tmp_path / name, "a b\n")
    found = discover_dictionaries(tmp_path, LANGS)
    assert found == {
        ("en", "de"): tmp_path / "en-de.txt",
        ("de", "en"): tmp_path / "de-en.txt",
        ("zh", "en"): tmp_path / "zh-en.txt",
    }
    with pytest.raises(InputError, match="not found"):
        discover_dictionaries(tmp_path / "nope", LANGS)
