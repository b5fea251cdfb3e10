"""The Multi30K adapter on a tiny checkout in the official layout (tests/fixtures/multi30k)."""

from __future__ import annotations

import gzip
import importlib.util
import logging
import shutil
from pathlib import Path

import pandas as pd
import pytest

from polyvse.data.multi30k import load_multi30k, required_files
from polyvse.errors import InputError

FIXTURE_DIR = Path(__file__).parent / "fixtures" / "multi30k"
_spec = importlib.util.spec_from_file_location("make_multi30k_fixture", FIXTURE_DIR / "make_fixture.py")
make_fixture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_fixture)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_fixture.write_fixture(tmp_path / "multi30k")


def _raw(root: Path, task: str, name: str) -> Path:
    return root / "data" / task / "raw" / name


def _read_gz_lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()


def _write_gz_lines(path: Path, lines: list[str]) -> None:
    path.write_bytes(gzip.compress("".join(line + "\n" for line in lines).encode("utf-8")))


def _text(captions: pd.DataFrame, image_id: str, lang: str, cap_idx: int) -> str:
    rows = captions[(captions.image_id == image_id) & (captions.lang == lang) & (captions.cap_idx == cap_idx)]
    assert len(rows) == 1, (image_id, lang, cap_idx, rows)
    return rows.text.iat[0]


# --- what a good checkout gives --------------------------------------------------------------


def test_counts_per_split_and_language(root: Path) -> None:
    captions, images = load_multi30k(root)
    counts = captions.groupby(["split", "lang"]).size().to_dict()
    # train 3 images, val 2, test 2; en/de 5 captions each, fr/cs 1.
    assert counts == {
        ("train", "en"): 15,
        ("train", "de"): 15,
        ("train", "fr"): 3,
        ("train", "cs"): 3,
        ("val", "en"): 10,
        ("val", "de"): 10,
        ("val", "fr"): 2,
        ("val", "cs"): 2,
        ("test", "en"): 10,
        ("test", "de"): 10,
        ("test", "fr"): 2,
        ("test", "cs"): 2,
    }
    assert len(captions) == 7 * 12
    assert (captions.origin == "human").all()
    assert sorted(captions[captions.lang == "en"].cap_idx.unique()) == [0, 1, 2, 3, 4]
    assert sorted(captions[captions.lang == "fr"].cap_idx.unique()) == [0]
    assert images.split.value_counts().to_dict() == {"train": 3, "val": 2, "test": 2}
    assert images.image_id.tolist() == [
        "1000092795",
        "10002456",
        "1000268201",
        "1018148011",
        "1029450589",
        "1007129816",
        "1009434119",
    ]
    assert str(captions.cap_idx.dtype) == "int64"
    assert (images.path == "").all()  # no images_dir: features are brought by the user


def test_captions_are_aligned_with_image_lines(root: Path) -> None:
    captions, _ = load_multi30k(root)
    # Hand-written from the fixture literals: line i of each caption file describes image i.
    assert _text(captions, "10002456", "en", 0) == "A photo of several workers."
    assert _text(captions, "10002456", "en", 4) == "A picture showing several workers."
    assert _text(captions, "1000268201", "de", 1) == "Hier sieht man: ein kleines Mädchen."
    assert _text(captions, "1018148011", "fr", 0) == "Il y a un chien brun dehors."
    # Task 1 lists its test images in the reverse order of task 2; ids must follow each task's list.
    assert _text(captions, "1007129816", "cs", 0) == "Venku je muž s kloboukem."
    assert _text(captions, "1009434119", "cs", 0) == "Venku je černobílý pes."
    assert _text(captions, "1007129816", "en", 0) == "A photo of a man with a hat."
    # Every caption's split is its image's split.
    split_of = {name.removesuffix(".jpg"): split for name, (split, _) in make_fixture.IMAGES.items()}
    assert (captions.split == captions.image_id.map(split_of)).all()


def test_images_dir_gives_paths(root: Path) -> None:
    captions, images = load_multi30k(root, images_dir=root / "images")
    assert images.set_index("image_id").path["10002456"] == str(root / "images" / "10002456.jpg")
    assert all(Path(p).is_file() for p in images.path)


def test_image_missing_from_images_dir(root: Path) -> None:
    (root / "images" / "1029450589.jpg").unlink()
    with pytest.raises(InputError) as err:
        load_multi30k(root, images_dir=root / "images")
    assert "1029450589.jpg" in str(err.value) and "val_images.txt" in str(err.value)
    with pytest.raises(InputError, match="not a directory"):
        load_multi30k(root, images_dir=root / "no_such_dir")


def test_language_subset_reads_only_its_files(root: Path) -> None:
    for path in (root / "data" / "task1" / "raw").glob("*.cs.gz"):
        path.unlink()
    captions, _ = load_multi30k(root, langs=("en", "de", "fr"))
    assert set(captions.lang) == {"en", "de", "fr"}
    assert len(captions) == 7 * 11
    # English alone needs no task-1 file at all.
    shutil.rmtree(root / "data" / "task1")
    captions, images = load_multi30k(root, langs=("en",))
    assert set(captions.lang) == {"en"} and len(captions) == 35 and len(images) == 7
    with pytest.raises(InputError) as err:
        load_multi30k(root, langs=("en", "cs"))
    msg = str(err.value)
    assert "data/task1/image_splits/train.txt" in msg and "task1" in msg and "cs" in msg


def test_required_files_follow_langs(root: Path) -> None:
    names = {p.relative_to(root).as_posix() for p in required_files(root, langs=("de", "fr"))}
    assert "data/task2/raw/test_2016.5.de.gz" in names
    assert "data/task1/raw/test_2016_flickr.fr.gz" in names
    assert "data/task1/image_splits/val.txt" in names
    assert not any(".en." in n or ".cs." in n for n in names)
    # 3 splits × (5 de files + 1 fr file + 2 image lists)
    assert len(names) == 3 * 8


def test_task1_english_and_german_get_cap_idx_5(root: Path) -> None:
    captions, _ = load_multi30k(root, langs=("en", "de"), task1_langs=("en", "de"))
    assert len(captions) == 7 * 12
    # The task-1 pair sits at cap_idx 5 in both languages; task-1 en repeats task-2 en caption 3.
    assert _text(captions, "10002456", "en", 5) == _text(captions, "10002456", "en", 2)
    assert _text(captions, "10002456", "de", 5) == "Draußen ist mehrere Arbeiter."


def test_unknown_languages_are_rejected(root: Path) -> None:
    with pytest.raises(InputError, match="langs.*'ja'"):
        load_multi30k(root, langs=("en", "ja"))
    with pytest.raises(InputError, match="task1_langs.*'ja'"):
        load_multi30k(root, task1_langs=("ja",))
    # fr is only in task 1: asking for it while excluding it from task1_langs is an error, not 0 rows.
    with pytest.raises(InputError, match="'fr'"):
        load_multi30k(root, langs=("fr",), task1_langs=("cs",))


def test_uncompressed_caption_file_is_accepted(root: Path) -> None:
    gz = _raw(root, "task2", "val.2.de.gz")
    gz.with_suffix("").write_bytes(gzip.decompress(gz.read_bytes()))
    gz.unlink()
    captions, _ = load_multi30k(root, langs=("de",))
    assert _text(captions, "1029450589", "de", 1) == "Hier sieht man: eine alte Frau."


def test_images_in_only_one_task_lack_those_languages(root: Path, caplog: pytest.LogCaptureFixture) -> None:
    # Drop test image 1007129816 (task-1 line 2) from task 1's list and its fr/cs/en/de files.
    lst = root / "data" / "task1" / "image_splits" / "test_2016_flickr.txt"
    assert lst.read_text().splitlines() == ["1009434119.jpg", "1007129816.jpg"]
    lst.write_text("1009434119.jpg\n")
    for lang in ("en", "de", "fr", "cs"):
        path = _raw(root, "task1", f"test_2016_flickr.{lang}.gz")
        _write_gz_lines(path, _read_gz_lines(path)[:1])
    with caplog.at_level(logging.WARNING, logger="polyvse.data.multi30k"):
        captions, images = load_multi30k(root)
    assert "0 images only in task 1" in caplog.text and "1 only in task 2" in caplog.text
    assert len(images) == 7
    langs = set(captions[captions.image_id == "1007129816"].lang)
    assert langs == {"en", "de"}
    assert _text(captions, "1009434119", "fr", 0) == "Il y a un chien noir et blanc dehors."


# --- failure modes: each names the file, and the line where one applies ----------------------


def test_missing_caption_file(root: Path) -> None:
    _raw(root, "task2", "val.4.en.gz").unlink()
    _raw(root, "task1", "train.cs.gz").unlink()
    with pytest.raises(InputError) as err:
        load_multi30k(root)
    msg = str(err.value)
    # The first missing file in reading order, with the task, split and language that need it.
    assert "train.cs.gz" in msg and "task1" in msg and "train" in msg and "cs" in msg
    assert "1 more file(s) missing" in msg and "val.4.en.gz" in msg


def test_missing_root(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="root directory not found"):
        load_multi30k(tmp_path / "nowhere")


def test_line_count_mismatch(root: Path) -> None:
    path = _raw(root, "task2", "val.3.de.gz")
    _write_gz_lines(path, _read_gz_lines(path)[:1])
    with pytest.raises(InputError) as err:
        load_multi30k(root)
    msg = str(err.value)
    assert "val.3.de.gz" in msg and "val_images.txt" in msg
    assert "1 caption lines" in msg and "2 images" in msg


def test_empty_caption_names_line(root: Path) -> None:
    path = _raw(root, "task1", "train.fr.gz")
    lines = _read_gz_lines(path)
    lines[1] = "   "
    _write_gz_lines(path, lines)
    with pytest.raises(InputError) as err:
        load_multi30k(root)
    assert err.value.line == 2
    assert "train.fr.gz:2" in str(err.value) and "empty caption" in str(err.value)


def test_non_utf8_text_names_line(root: Path) -> None:
    path = _raw(root, "task2", "test_2016.1.de.gz")
    data = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    raw = (data[0] + "\n").encode("utf-8") + "Ein Foto von: Männer.\n".encode("latin-1")
    path.write_bytes(gzip.compress(raw))
    with pytest.raises(InputError) as err:
        load_multi30k(root)
    assert err.value.line == 2
    assert "test_2016.1.de.gz:2" in str(err.value) and "UTF-8" in str(err.value)


@pytest.mark.parametrize("damage", ["truncated", "corrupt", "not_gzip"])
def test_damaged_gzip_names_file(root: Path, damage: str) -> None:
    path = _raw(root, "task2", "train.2.en.gz")
    data = path.read_bytes()
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "corrupt":
        data = data[:12] + bytes(b ^ 0xFF for b in data[12:-8]) + data[-8:]
    else:
        data = b"A photo of two young men.\n"
    path.write_bytes(data)
    with pytest.raises(InputError) as err:
        load_multi30k(root)
    assert err.value.where == str(path)
    assert "gzip" in str(err.value)


def test_image_in_two_splits(root: Path) -> None:
    # Task 1 puts a training image into its val list (and keeps line counts aligned).
    lst = root / "data" / "task1" / "image_splits" / "val.txt"
    lst.write_text("1018148011.jpg\n10002456.jpg\n")
    with pytest.raises(InputError) as err:
        load_multi30k(root)
    msg = str(err.value)
    assert "val.txt:2" in msg and "10002456.jpg" in msg and "train_images.txt:2" in msg


def test_image_listed_twice(root: Path) -> None:
    lst = root / "data" / "task2" / "image_splits" / "train_images.txt"
    lst.write_text("1000092795.jpg\n10002456.jpg\n1000092795.jpg\n")
    with pytest.raises(InputError) as err:
        load_multi30k(root, langs=("en",))
    assert err.value.line == 3 and "listed twice" in str(err.value) and "first at line 1" in str(err.value)


def test_committed_fixture_matches_its_builder(tmp_path: Path) -> None:
    fresh = make_fixture.write_fixture(tmp_path / "fresh", with_images=False)
    committed_files = sorted(p.relative_to(FIXTURE_DIR) for p in (FIXTURE_DIR / "data").rglob("*") if p.is_file())
    fresh_files = sorted(p.relative_to(fresh) for p in (fresh / "data").rglob("*") if p.is_file())
    assert committed_files == fresh_files and len(fresh_files) == 48
    for rel in fresh_files:
        a, b = (FIXTURE_DIR / rel).read_bytes(), (fresh / rel).read_bytes()
        if rel.suffix == ".gz":
            a, b = gzip.decompress(a), gzip.decompress(b)
        assert a == b, rel
    assert sorted(p.name for p in (FIXTURE_DIR / "images").iterdir()) == sorted(make_fixture.IMAGES)
    captions, images = load_multi30k(FIXTURE_DIR, images_dir=FIXTURE_DIR / "images")
    assert len(captions) == 84 and len(images) == 7


def test_relative_images_dir_becomes_absolute(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root)
    _, images = load_multi30k(Path("."), langs=("fr",), images_dir=Path("images"))
    assert images.set_index("image_id").path["1007129816"] == str(root / "images" / "1007129816.jpg")
