"""MSCOCO adapter: English, Japanese and Chinese human captions → the canonical captions and images tables.

SMALR §4 "Datasets" and MULE "Experiments / Datasets" use MSCOCO's 123,287 images with five
English captions each, the YJ Captions 26K Japanese captions (five independent descriptions for
about 26K images; Miyazaki & Shimizu 2016) and COCO-CN's 22,218 human-written Chinese captions
for 20,341 images (Li et al. 2019). Files read:

* ``captions_json``: Karpathy's ``dataset_coco.json`` — ``{"images": [{"filepath": "val2014",
  "filename": "COCO_val2014_000000391895.jpg", "cocoid": 391895, "split": "train|val|test|restval",
  "sentences": [{"raw": "..."}, ...]}, ...]}``: every image and its English captions;
* ``ja_json`` (optional): YJ Captions (or STAIR Captions) in the COCO annotation format —
  ``{"annotations": [{"image_id": 391895, "caption": "..."}, ...]}``;
* ``zh_captions`` (optional): COCO-CN's ``imageid.human-written-caption.txt`` — one caption a
  line, ``COCO_val2014_000000391895#0<TAB>...``.

``image_id`` is the file name's stem (``COCO_val2014_000000391895``), as for Multi30K.

Splits (``split``): ``mule`` (MULE §Datasets, which SMALR follows): ``n_val`` and ``n_test``
images drawn at random (``seed``) from the images that have captions in every requested
language of en/ja/zh, the rest for training; ``karpathy``: Karpathy's splits, ``restval`` in
training. English keeps the first ``max_captions`` captions of an image (a few have 6 or 7).
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from polyvse.data.tables import CAPTION_COLUMNS, check_captions_match_images, validate_captions, validate_images
from polyvse.errors import InputError

log = logging.getLogger(__name__)

COCO_LANGS: tuple[str, ...] = ("en", "ja", "zh")
SPLIT_RULES: tuple[str, ...] = ("mule", "karpathy")
KARPATHY_SPLITS: dict[str, str] = {"train": "train", "restval": "train", "val": "val", "test": "test"}
_COCO_CN_LINE = re.compile(r"^(?P<stem>\S+?)#(?P<n>\d+)\s+(?P<text>.*\S)\s*$")


def _read_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise InputError(path, f"{what} not found")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not valid JSON ({exc.msg}, column {exc.colno})", line=exc.lineno) from exc
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc


def _entries(doc: Any, key: str, path: Path, what: str) -> list[dict]:
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        raise InputError(path, f"{what}: expected a JSON object with a list {key!r}")
    return doc[key]


def _field(entry: Any, key: str, kind: type | tuple[type, ...], path: Path, where: str) -> Any:
    if not isinstance(entry, dict) or key not in entry:
        raise InputError(path, f"{where}: missing key {key!r}")
    value = entry[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(path, f"{where}: {key} must be {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def read_karpathy(path: Path, max_captions: int = 5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``dataset_coco.json`` → (images: image_id, karpathy_split, cocoid, file; en captions: image_id, cap_idx, text)."""
    images = _entries(
        _read_json(path, "Karpathy captions JSON (dataset_coco.json)"), "images", path, "Karpathy captions JSON"
    )
    rows, caps, seen = [], [], {}
    for i, im in enumerate(images):
        where = f"images[{i}]"
        name = _field(im, "filename", str, path, where)
        cocoid = _field(im, "cocoid", int, path, where)
        split = _field(im, "split", str, path, where)
        if split not in KARPATHY_SPLITS:
            raise InputError(path, f"{where} ({name}): split {split!r} is not one of {', '.join(KARPATHY_SPLITS)}")
        image_id = Path(name).stem
        if cocoid in seen:
            raise InputError(path, f"{where} ({name}): cocoid {cocoid} already at images[{seen[cocoid]}]")
        seen[cocoid] = i
        folder = im.get("filepath", "")
        rows.append((image_id, KARPATHY_SPLITS[split], cocoid, str(Path(folder) / name) if folder else name))
        sentences = _field(im, "sentences", list, path, where)
        if not sentences:
            raise InputError(path, f"{where} ({name}): no English sentence")
        for k, sent in enumerate(sentences[:max_captions]):
            text = _field(sent, "raw", str, path, f"{where}.sentences[{k}]").strip()
            if not text:
                raise InputError(path, f"{where}.sentences[{k}] ({name}): empty caption")
            caps.append((image_id, k, text))
    table = pd.DataFrame(rows, columns=["image_id", "karpathy_split", "cocoid", "file"])
    return table, pd.DataFrame(caps, columns=["image_id", "cap_idx", "text"])


def read_coco_annotations(path: Path, stem_of: dict[int, str]) -> pd.DataFrame:
    """Captions in the COCO annotation format (YJ / STAIR Captions) → image_id, cap_idx, text.
    ``stem_of`` maps COCO ids to image ids; an annotation of an unknown image is an error."""
    annotations = _entries(
        _read_json(path, "COCO-format captions JSON"), "annotations", path, "COCO-format captions JSON"
    )
    rows = []
    for i, ann in enumerate(annotations):
        where = f"annotations[{i}]"
        cocoid = _field(ann, "image_id", int, path, where)
        text = _field(ann, "caption", str, path, where).strip()
        if cocoid not in stem_of:
            raise InputError(path, f"{where}: image_id {cocoid} is not an MSCOCO image of the captions JSON")
        if not text:
            raise InputError(path, f"{where} (image {cocoid}): empty caption")
        rows.append((stem_of[cocoid], text))
    df = pd.DataFrame(rows, columns=["image_id", "text"])
    df.insert(1, "cap_idx", df.groupby("image_id", sort=False).cumcount().astype("int64"))
    return df


def read_coco_cn(path: Path, known: set[str]) -> pd.DataFrame:
    """COCO-CN ``imageid.human-written-caption.txt`` → image_id, cap_idx, text."""
    if not path.is_file():
        raise InputError(path, "COCO-CN caption file not found")
    rows, n = [], 0
    with open(path, encoding="utf-8-sig") as fh:
        try:
            for n, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                m = _COCO_CN_LINE.match(line.rstrip("\r\n"))
                if m is None:
                    raise InputError(path, "expected 'COCO_<split>2014_<id>#<n><TAB><caption>'", line=n)
                if m["stem"] not in known:
                    raise InputError(path, f"image {m['stem']} is not an MSCOCO image of the captions JSON", line=n)
                rows.append((m["stem"], int(m["n"]), m["text"]))
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not valid UTF-8 after line {n}") from exc
    df = pd.DataFrame(rows, columns=["image_id", "n", "text"]).sort_values(["image_id", "n"], kind="stable")
    df["cap_idx"] = df.groupby("image_id", sort=False).cumcount().astype("int64")
    return df[["image_id", "cap_idx", "text"]]


def assign_splits(images: pd.DataFrame, covered: set[str], rule: str, n_val: int, n_test: int, seed: int) -> pd.Series:
    """Each image's split: MULE's (val and test drawn from ``covered``, the images with every
    language) or Karpathy's."""
    if rule == "karpathy":
        return images["karpathy_split"]
    if rule != "mule":
        raise ValueError(f"unknown split rule {rule!r}; expected one of {SPLIT_RULES}")
    pool = np.array(sorted(covered))
    if len(pool) < n_val + n_test:
        raise InputError(
            "coco",
            f"{len(pool)} images have captions in every language; split mule needs "
            f"n_val + n_test = {n_val + n_test} of them",
        )
    chosen = np.random.default_rng(seed).permutation(pool)
    split = {i: "val" for i in chosen[:n_val]} | {i: "test" for i in chosen[n_val : n_val + n_test]}
    return images["image_id"].map(split).fillna("train")


def load_coco(
    captions_json: str | Path,
    langs: Sequence[str] = COCO_LANGS,
    ja_json: str | Path | None = None,
    zh_captions: str | Path | None = None,
    images_dir: str | Path | None = None,
    split: str = "mule",
    n_val: int = 1000,
    n_test: int = 1000,
    seed: int = 0,
    max_captions: int = 5,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read MSCOCO and its Japanese and Chinese captions into validated ``(captions, images)`` tables.

    Only the languages of ``langs`` that MSCOCO has (en, ja, zh) are read; ja needs ``ja_json``
    and zh ``zh_captions``. ``images_dir`` holds ``train2014/`` and ``val2014/``; when given,
    every image must be there and ``images.path`` is absolute, else ``path`` is "" (features
    brought by the user). Errors name the file and the JSON entry or line.
    """
    wanted = [l for l in dict.fromkeys(langs) if l in COCO_LANGS]
    if "en" not in wanted:
        raise InputError("langs", "the coco adapter needs en: the Karpathy JSON defines the images")
    sources = {"ja": ja_json, "zh": zh_captions}
    for lang in ("ja", "zh"):
        if lang in wanted and not sources[lang]:
            raise InputError(
                f"coco.{'ja_json' if lang == 'ja' else 'zh_captions'}",
                f"language {lang} is in the dataset's langs but no caption file is given",
            )
    images, en = read_karpathy(Path(captions_json), max_captions)
    per_lang = {"en": en}
    if "ja" in wanted:
        per_lang["ja"] = read_coco_annotations(Path(ja_json), dict(zip(images["cocoid"], images["image_id"])))
    if "zh" in wanted:
        per_lang["zh"] = read_coco_cn(Path(zh_captions), set(images["image_id"]))
    covered = set(images["image_id"])
    for lang, df in per_lang.items():
        covered &= set(df["image_id"])
        log.info("MSCOCO %s: %d captions of %d images", lang, len(df), df["image_id"].nunique())
    images = images.assign(split=assign_splits(images, covered, split, n_val, n_test, seed))
    if images_dir is not None:
        images_dir = Path(images_dir).absolute()
        if not images_dir.is_dir():
            raise InputError(images_dir, "images_dir is not a directory (MSCOCO's train2014/ and val2014/)")
        folders: dict[str, set[str]] = {}
        for file in images["file"]:
            folder = str(Path(file).parent)
            if folder not in folders:
                folders[folder] = set(os.listdir(images_dir / folder)) if (images_dir / folder).is_dir() else set()
            if Path(file).name not in folders[folder]:
                raise InputError(images_dir / file, f"image of {captions_json} not found in images_dir")
        paths = [str(images_dir / f) for f in images["file"]]
    else:
        paths = [""] * len(images)
    split_of = dict(zip(images["image_id"], images["split"]))
    frames = [
        df.assign(split=df["image_id"].map(split_of), lang=lang, origin="human")[list(CAPTION_COLUMNS)]
        for lang, df in per_lang.items()
    ]
    where = f"coco:{captions_json}"
    captions = validate_captions(pd.concat(frames, ignore_index=True), where)
    table = validate_images(
        pd.DataFrame({"image_id": images["image_id"], "split": images["split"], "path": paths}), where
    )
    check_captions_match_images(captions, table, where)
    return captions, table
