"""The ``places_speech`` adapter's utterance list: a user's spoken captions (the Places audio captions:
English, Harwath et al.; Hindi, Harwath et al. 2018; Japanese, Ohishi et al. 2020), a TSV or CSV with
columns ``image_id, split, lang, wav`` and optionally ``image`` (the image file). This module reads the
list as a table (its images are the dataset's); :func:`polyvse.speech.utterances.read_utterance_list`
checks every wav on top and makes the canonical utterances table.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from polyvse.data.tables import SPLITS, resolve_paths
from polyvse.errors import InputError

LIST_COLUMNS: tuple[str, ...] = ("image_id", "split", "lang", "wav")


def parse_utterance_list(
    path: str | Path, langs: Sequence[str], images_dir: str | Path | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
    """A user's utterance list → (utterances, images table, counts).

    The list is CSV when its name ends in ``.csv``, else TSV, with a header naming
    at least ``image_id, split, lang, wav`` (``path`` is accepted for ``wav``) and
    optionally ``image``. Relative wav paths are relative to the list's directory,
    relative image paths to ``images_dir`` (default: the list's directory); both
    come back absolute. Rows of languages outside ``langs`` are skipped, and so are
    images that lack an utterance in one of ``langs`` (a datapoint has every view,
    thesis §2.1); ``counts`` says how many of each. Utterances: ``image_id, split,
    lang, path, line`` (the list's line), grouped by language in ``langs`` order.
    Errors name the list and the line (1-based, the header is line 1).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "utterance list does not exist")
    sep = "," if path.suffix.lower() == ".csv" else "\t"
    try:
        df = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot parse the utterance list: {exc}") from exc
    if "wav" not in df.columns and "path" in df.columns:
        df = df.rename(columns={"path": "wav"})
    missing = [c for c in LIST_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(
            path, f"missing column(s) {', '.join(missing)}; the header has {', '.join(map(str, df.columns))}", line=1
        )
    base = path.parent
    image_base = Path(images_dir) if images_dir else base
    line = np.arange(len(df)) + 2
    for col in LIST_COLUMNS:
        empty = df[col].str.strip() == ""
        if empty.any():
            raise InputError(path, f"empty {col}", line=int(line[np.flatnonzero(empty.to_numpy())[0]]))
    bad_split = ~df["split"].isin(SPLITS)
    if bad_split.any():
        i = int(np.flatnonzero(bad_split.to_numpy())[0])
        raise InputError(path, f"split {df['split'].iat[i]!r} is not one of {'|'.join(SPLITS)}", line=int(line[i]))
    dup = df.duplicated(["image_id", "lang"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(
            path, f"a second utterance of image {df['image_id'].iat[i]!r} in {df['lang'].iat[i]!r}", line=int(line[i])
        )
    first_split = df.groupby("image_id", sort=False)["split"].transform("first")
    two = df["split"] != first_split
    if two.any():
        i = int(np.flatnonzero(two.to_numpy())[0])
        raise InputError(
            path,
            f"image {df['image_id'].iat[i]!r} is in split {df['split'].iat[i]!r} here "
            f"and in {first_split.iat[i]!r} on an earlier line",
            line=int(line[i]),
        )
    df = df.assign(_line=line)
    keep_lang = df["lang"].isin(list(langs))
    counts = {"rows": len(df), "other_language_rows": int((~keep_lang).sum())}
    df = df[keep_lang]
    n_langs = df.groupby("image_id")["lang"].transform("nunique")
    complete = n_langs == len(langs)
    counts["incomplete_images"] = int(df.loc[~complete, "image_id"].nunique())
    df = df[complete].reset_index(drop=True)
    if df.empty:
        raise InputError(path, f"no image has an utterance in every language of {list(langs)}")
    wavs = resolve_paths(df["wav"], base)
    order = {l: i for i, l in enumerate(langs)}
    utterances = pd.DataFrame(
        {"image_id": df["image_id"], "split": df["split"], "lang": df["lang"], "path": wavs, "line": df["_line"]}
    )
    utterances = utterances.iloc[np.lexsort((np.arange(len(df)), df["lang"].map(order).to_numpy()))]
    first = df.drop_duplicates("image_id")
    if "image" in df.columns:
        image_paths = [str(p if not p or Path(p).is_absolute() else image_base / p) for p in first["image"]]
    else:
        image_paths = [""] * len(first)
    images = pd.DataFrame({"image_id": first["image_id"], "split": first["split"], "path": image_paths})
    counts["images"] = len(images)
    return utterances.reset_index(drop=True), images.reset_index(drop=True), counts
