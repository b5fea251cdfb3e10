"""Multi30K adapter: the official multi30k/dataset layout → the canonical captions and images tables.

Multi30K extends Flickr30K: five independent English and five independent ("comparable") German
descriptions per image (task 2), and one English description per image with its professional
German, French and Czech translations (task 1). SMALR §4 "Datasets" and MULE "Experiments /
Datasets" use En ×5, De ×5, Fr ×1, Cs ×1 with the 29K/1K/1K Flickr30K splits; MLMME §3 uses the
comparable corpus M30k_C (task 2). The files this module reads, under ``root``::

    data/task1/image_splits/{train,val,test_2016_flickr}.txt        one image file name a line
    data/task1/raw/{train,val,test_2016_flickr}.{en,de,fr,cs}.gz     line i describes image i
    data/task2/image_splits/{train,val,test_2016}_images.txt
    data/task2/raw/{train,val,test_2016}.{1..5}.{en,de}.gz

Split names map to train / val / test (task 1's test is ``test_2016_flickr``, task 2's is
``test_2016``). A caption file may also be present uncompressed (the same name without ``.gz``).

Rows produced (all ``origin == "human"``):

* en, de: ``cap_idx`` 0..4 from task 2 files ``.1`` .. ``.5``;
* every language in ``task1_langs`` (default fr, cs): one caption from task 1, ``cap_idx`` 0 — or
  ``cap_idx`` 5 for en/de when they are asked from task 1 as well, so that the task-1 translation
  pair is (en, 5) ↔ (de, 5). Task 1's English sentence is one of the five Flickr30K sentences of
  task 2, so asking for "en" in ``task1_langs`` duplicates that text under a second ``cap_idx``.

Images shared by the two tasks must sit in the same split (the official lists hold the same images
in the same order). An image listed by only one task's list for a split is kept and simply lacks
the other task's languages; the count of such images is logged as a warning.
"""

from __future__ import annotations

import gzip
import logging
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from polyvse.data.tables import (
    CAPTION_COLUMNS,
    SPLITS,
    check_captions_match_images,
    validate_captions,
    validate_images,
)
from polyvse.errors import InputError

log = logging.getLogger(__name__)

TASK2_LANGS: tuple[str, ...] = ("en", "de")
TASK1_LANGS: tuple[str, ...] = ("en", "de", "fr", "cs")
TASK2_CAPTIONS_PER_IMAGE = 5
# Official file-name prefix of each canonical split, per task.
SPLIT_PREFIX: dict[str, dict[str, str]] = {
    "task1": {"train": "train", "val": "val", "test": "test_2016_flickr"},
    "task2": {"train": "train", "val": "val", "test": "test_2016"},
}


@dataclass(frozen=True)
class _CaptionFile:
    path: Path
    lang: str
    cap_idx: int
    why: str  # which task / split / language needs it, for the missing-file error


@dataclass
class _Source:
    """One (task, split): an image list and the caption files aligned with it line by line."""

    task: str
    split: str
    image_list: Path
    captions: list[_CaptionFile] = field(default_factory=list)

    @property
    def why(self) -> str:
        langs = sorted({c.lang for c in self.captions})
        return f"{self.task} {self.split} split image list, needed for the {', '.join(langs)} captions"


def _image_list_path(root: Path, task: str, split: str) -> Path:
    prefix = SPLIT_PREFIX[task][split]
    name = f"{prefix}.txt" if task == "task1" else f"{prefix}_images.txt"
    return root / "data" / task / "image_splits" / name


def _check_langs(langs: Sequence[str], task1_langs: Sequence[str]) -> tuple[list[str], list[str]]:
    if isinstance(langs, str) or isinstance(task1_langs, str):
        raise InputError("langs", "langs and task1_langs must be sequences of language codes, not one string")
    for lang in task1_langs:
        if lang not in TASK1_LANGS:
            raise InputError(
                "task1_langs", f"Multi30K task 1 has no {lang!r} captions; it has {', '.join(TASK1_LANGS)}"
            )
    wanted = list(dict.fromkeys(langs))  # de-duplicate, keep order
    if not wanted:
        raise InputError("langs", "no language requested")
    for lang in wanted:
        if lang not in TASK2_LANGS and lang not in task1_langs:
            raise InputError(
                "langs",
                f"Multi30K has no human {lang!r} captions with task1_langs="
                f"{list(task1_langs)}; available: {', '.join(TASK2_LANGS)} (task 2) and "
                f"{', '.join(TASK1_LANGS)} (task 1)",
            )
    return wanted, [lang for lang in dict.fromkeys(task1_langs) if lang in wanted]


def _plan(root: Path, langs: Sequence[str], task1_langs: Sequence[str]) -> list[_Source]:
    """The files needed for ``langs``, grouped by (task, split), in output order."""
    wanted, from_task1 = _check_langs(langs, task1_langs)
    sources: list[_Source] = []
    for split in SPLITS:
        t2 = _Source("task2", split, _image_list_path(root, "task2", split))
        t1 = _Source("task1", split, _image_list_path(root, "task1", split))
        for lang in wanted:
            if lang in TASK2_LANGS:
                prefix = SPLIT_PREFIX["task2"][split]
                for k in range(1, TASK2_CAPTIONS_PER_IMAGE + 1):
                    path = root / "data" / "task2" / "raw" / f"{prefix}.{k}.{lang}.gz"
                    t2.captions.append(_CaptionFile(path, lang, k - 1, f"task2 {split} split, {lang} caption {k} of 5"))
            if lang in from_task1:
                prefix = SPLIT_PREFIX["task1"][split]
                path = root / "data" / "task1" / "raw" / f"{prefix}.{lang}.gz"
                cap_idx = TASK2_CAPTIONS_PER_IMAGE if lang in TASK2_LANGS else 0
                t1.captions.append(_CaptionFile(path, lang, cap_idx, f"task1 {split} split, {lang} caption"))
        sources += [s for s in (t2, t1) if s.captions]
    return sources


def _resolve(path: Path) -> Path | None:
    """``path`` if it exists, else its uncompressed twin (``x.gz`` → ``x``), else None."""
    if path.is_file():
        return path
    if path.suffix == ".gz" and path.with_suffix("").is_file():
        return path.with_suffix("")
    return None


def required_files(
    root: str | Path, langs: Sequence[str] = ("en", "de", "fr", "cs"), task1_langs: Sequence[str] = ("fr", "cs")
) -> list[Path]:
    """Every file ``load_multi30k`` reads for ``langs`` (official ``.gz`` names), e.g. for a rule's input."""
    files: list[Path] = []
    for src in _plan(Path(root), langs, task1_langs):
        files.append(src.image_list)
        files += [c.path for c in src.captions]
    return files


def present_files(
    root: str | Path, langs: Sequence[str] = ("en", "de", "fr", "cs"), task1_langs: Sequence[str] = ("fr", "cs")
) -> list[Path]:
    """:func:`required_files` as they are on disk: a caption file present uncompressed under its
    name without ``.gz`` is given by that name (a missing one keeps the official name)."""
    return [_resolve(p) or p for p in required_files(root, langs, task1_langs)]


def _check_present(root: Path, sources: list[_Source]) -> None:
    if not root.is_dir():
        raise InputError(root, "Multi30K root directory not found (expected a checkout of multi30k/dataset)")
    needed = [(s.image_list, s.why) for s in sources] + [(c.path, c.why) for s in sources for c in s.captions]
    missing = [(p, why) for p, why in needed if _resolve(p) is None]
    if missing:
        path, why = missing[0]
        more = f"; {len(missing) - 1} more file(s) missing, e.g. {missing[1][0]}" if len(missing) > 1 else ""
        raise InputError(path, f"missing file ({why}; official multi30k/dataset layout under {root}){more}")


def _read_lines(path: Path) -> list[str]:
    """Lines of a UTF-8 text file, gzipped or not, without line ends; streamed line by line.

    Raises ``InputError`` naming the 1-based line for undecodable bytes, and the file for a corrupt
    or truncated gzip stream.
    """
    opener = gzip.open if path.suffix == ".gz" else open
    lines: list[str] = []
    try:
        with opener(path, "rb") as fh:
            for n, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(
                        path,
                        f"not valid UTF-8 (byte {exc.start} of the line: {raw[exc.start : exc.start + 4]!r})",
                        line=n,
                    ) from exc
                lines.append(text.rstrip("\r\n"))
    except (OSError, EOFError, zlib.error) as exc:
        # gzip reports a cut-off stream as EOFError, a bad header/CRC as BadGzipFile (an OSError)
        # and damaged deflate data as zlib.error.
        what = "corrupt or truncated gzip file" if opener is gzip.open else "cannot read file"
        kind = "zlib.error" if isinstance(exc, zlib.error) else type(exc).__name__
        raise InputError(path, f"{what} ({kind}: {exc})") from exc
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]  # a byte-order mark from a Windows editor is not part of the text
    return lines


def _read_image_list(path: Path) -> list[str]:
    names = _read_lines(path)
    first_line: dict[str, int] = {}
    for n, name in enumerate(names, start=1):
        name = name.strip()
        if not name:
            raise InputError(path, "empty line in an image list (expected one image file name a line)", line=n)
        image_id = Path(name).stem
        if image_id in first_line:
            raise InputError(path, f"image {name} listed twice (first at line {first_line[image_id]})", line=n)
        first_line[image_id] = n
        names[n - 1] = name
    return names


def _read_captions(cap: _CaptionFile, n_images: int, image_list: Path) -> list[str]:
    path = _resolve(cap.path)
    assert path is not None  # _check_present ran first
    texts = [t.strip() for t in _read_lines(path)]
    for n, text in enumerate(texts, start=1):
        if not text:
            raise InputError(path, f"empty caption (line {n} must describe line {n} of {image_list})", line=n)
    if len(texts) != n_images:
        raise InputError(
            path,
            f"{len(texts)} caption lines but {image_list} lists {n_images} images; "
            f"line i of a caption file must describe image i of its image list",
        )
    return texts


@dataclass(frozen=True)
class _Seen:
    split: str
    name: str
    image_list: Path
    line: int


def load_multi30k(
    root: Path,
    langs: Sequence[str] = ("en", "de", "fr", "cs"),
    images_dir: Path | None = None,
    task1_langs: Sequence[str] = ("fr", "cs"),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a multi30k/dataset checkout into validated ``(captions, images)`` tables.

    Only the files the requested ``langs`` need are read (and required): a checkout without Czech
    files loads fine with ``langs=("en", "de", "fr")``. ``images_dir`` is the user's Flickr30K
    image directory; when given it must hold every listed image and ``images.path`` is the
    absolute ``images_dir / <file name>``; when None (features brought by the user) ``path`` is "".
    ``image_id`` is the file name's stem (``1000092795.jpg`` → ``1000092795``).

    Raises ``InputError`` naming the file (and the 1-based line where one applies) for a missing
    file, a caption file whose line count differs from its image list, an empty caption or image
    name, non-UTF-8 text, a corrupt or truncated gzip file, an image listed twice, or an image
    that two lists put in different splits.
    """
    root = Path(root)
    sources = _plan(root, langs, task1_langs)
    _check_present(root, sources)
    if images_dir is not None:
        # Absolute, so that the table means the same thing from any working directory.
        images_dir = Path(images_dir).absolute()
        if not images_dir.is_dir():
            raise InputError(images_dir, "images_dir is not a directory (the Flickr30K images)")
        on_disk = set(os.listdir(images_dir))

    seen: dict[str, _Seen] = {}  # image_id → where it was first listed
    ids_by_source: dict[tuple[str, str], set[str]] = {}
    frames: list[pd.DataFrame] = []
    for src in sources:
        names = _read_image_list(_resolve(src.image_list) or src.image_list)
        ids = [Path(name).stem for name in names]
        for n, (image_id, name) in enumerate(zip(ids, names), start=1):
            prev = seen.get(image_id)
            if prev is None:
                seen[image_id] = _Seen(src.split, name, src.image_list, n)
                if images_dir is not None and name not in on_disk:
                    raise InputError(
                        images_dir / name, f"image listed in {src.image_list} line {n} not found in images_dir"
                    )
            elif prev.split != src.split:
                raise InputError(
                    src.image_list,
                    f"image {name} is in split {src.split} here but in split "
                    f"{prev.split} in {prev.image_list}:{prev.line}",
                    line=n,
                )
            elif prev.name != name:
                raise InputError(
                    src.image_list,
                    f"image file {name} here but {prev.name} in {prev.image_list}:{prev.line} for the same image id",
                    line=n,
                )
        ids_by_source[(src.task, src.split)] = set(ids)
        for cap in src.captions:
            texts = _read_captions(cap, len(ids), src.image_list)
            frames.append(
                pd.DataFrame(
                    {
                        "image_id": ids,
                        "split": src.split,
                        "lang": cap.lang,
                        "cap_idx": cap.cap_idx,
                        "text": texts,
                        "origin": "human",
                    },
                    columns=list(CAPTION_COLUMNS),
                )
            )

    for split in SPLITS:
        t1, t2 = ids_by_source.get(("task1", split)), ids_by_source.get(("task2", split))
        if t1 is not None and t2 is not None and t1 != t2:
            log.warning(
                "Multi30K %s split: %d images only in task 1 (no en/de task-2 captions), "
                "%d only in task 2 (no task-1 captions)",
                split,
                len(t1 - t2),
                len(t2 - t1),
            )

    where = f"multi30k:{root}"
    captions = validate_captions(pd.concat(frames, ignore_index=True), where)
    images = validate_images(
        pd.DataFrame(
            {
                "image_id": list(seen),
                "split": [s.split for s in seen.values()],
                "path": [str(images_dir / s.name) if images_dir is not None else "" for s in seen.values()],
            }
        ),
        where,
    )
    check_captions_match_images(captions, images, where)
    return captions, images
