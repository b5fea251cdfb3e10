"""The canonical tables every dataset adapter produces (docs/architecture.md, The DAG: dataset).

captions: ``image_id`` (str), ``split`` (train|val|test), ``lang`` (ISO 639-1, one of
``polyvse.LANGUAGES``), ``cap_idx`` (int64, >= 0), ``text`` (non-empty str), ``origin`` (human|mt).
One row per caption; ``(image_id, lang, cap_idx, origin)`` is unique and every image belongs to
exactly one split.

images: ``image_id`` (str, unique), ``split`` (train|val|test), ``path`` (str; empty when the
user brings pre-extracted features instead of image files).

Either table may carry extra columns after the canonical ones (MT rows, for one, say which
caption they translate); validation keeps them, unchecked.

The ``validate_*`` functions coerce dtypes, check every rule above with vectorised pandas
operations (a 300K-row table validates in well under a second) and raise
``InputError(where, reason)`` naming the first offending row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from polyvse import LANGUAGES
from polyvse.errors import InputError

CAPTION_COLUMNS: tuple[str, ...] = ("image_id", "split", "lang", "cap_idx", "text", "origin")
IMAGE_COLUMNS: tuple[str, ...] = ("image_id", "split", "path")
SPLITS: tuple[str, ...] = ("train", "val", "test")
ORIGINS: tuple[str, ...] = ("human", "mt")
CAPTION_KEY: tuple[str, ...] = ("image_id", "lang", "cap_idx", "origin")


def _show(value: object) -> str:
    """repr without numpy's ``np.int64(...)`` wrapper: messages are for people."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _describe_row(df: pd.DataFrame, pos: int) -> str:
    """``row 12 (image_id='123', lang='de')``: positional, 0-based, with the identifying values."""
    ids = [c for c in ("image_id", "split", "lang", "cap_idx", "origin") if c in df.columns]
    vals = ", ".join(f"{c}={_show(df[c].iat[pos])}" for c in ids)
    return f"row {pos} ({vals})" if vals else f"row {pos}"


def _first(mask: pd.Series | np.ndarray) -> int | None:
    hits = np.flatnonzero(np.asarray(mask, dtype=bool))
    return int(hits[0]) if hits.size else None


def _check_columns(df: pd.DataFrame, expected: tuple[str, ...], where: str, table: str) -> pd.DataFrame:
    """The table with ``expected`` columns first, then any extra columns in their order, index 0..N-1.

    Extra columns are kept, not checked: later stages annotate rows (e.g. MT rows carry
    ``source_lang``, ``source_cap_idx``) and stay canonical tables.
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError(where, f"{table} table must be a pandas DataFrame, got {type(df).__name__}")
    if df.columns.duplicated().any():
        raise InputError(where, f"{table} table: duplicate column names {list(df.columns[df.columns.duplicated()])}")
    missing = [c for c in expected if c not in df.columns]
    if missing:
        raise InputError(
            where,
            f"{table} table: missing column(s) {', '.join(missing)}; "
            f"has {', '.join(map(str, df.columns))}; needs {', '.join(expected)}",
        )
    extra = [c for c in df.columns if c not in expected]
    # Positional row numbers in messages must match iloc: drop any index the caller had.
    return df.loc[:, [*expected, *extra]].reset_index(drop=True)


def _no_nulls(df: pd.DataFrame, columns: tuple[str, ...], where: str, table: str) -> None:
    for col in columns:
        pos = _first(df[col].isna())
        if pos is not None:
            raise InputError(where, f"{table} table {_describe_row(df, pos)}: {col} is missing (null)")


def _as_str(df: pd.DataFrame, col: str, where: str, table: str) -> pd.Series:
    s = df[col]
    if pd.api.types.is_float_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
        # 1.0e9 would become "1000000000.0": an id written as float is a bug upstream, not an id.
        raise InputError(where, f"{table} table: column {col} has dtype {s.dtype}; expected str")
    if pd.api.types.is_object_dtype(s.dtype):
        bad = ~s.map(lambda v: isinstance(v, (str, int, np.integer)) and not isinstance(v, bool))
        pos = _first(bad)
        if pos is not None:
            raise InputError(
                where,
                f"{table} table {_describe_row(df, pos)}: {col} value {_show(s.iat[pos])} "
                f"is a {type(s.iat[pos]).__name__}, expected str",
            )
    return s.astype(str)


def _check_allowed(df: pd.DataFrame, col: str, allowed: tuple[str, ...], where: str, table: str) -> None:
    pos = _first(~df[col].isin(allowed))
    if pos is not None:
        raise InputError(
            where,
            f"{table} table {_describe_row(df, pos)}: {col} {_show(df[col].iat[pos])} "
            f"is not one of {'|'.join(allowed)}",
        )


def _check_one_split_per_image(df: pd.DataFrame, where: str, table: str) -> None:
    first_split = df.groupby("image_id", sort=False)["split"].transform("first")
    pos = _first(df["split"] != first_split)
    if pos is not None:
        image_id = df["image_id"].iat[pos]
        first_pos = _first(df["image_id"] == image_id)
        raise InputError(
            where,
            f"{table} table {_describe_row(df, pos)}: image {image_id!r} is in split "
            f"{df['split'].iat[pos]!r} here but in {first_split.iat[pos]!r} at row "
            f"{first_pos}; an image belongs to exactly one split",
        )


def _as_int64(df: pd.DataFrame, col: str, where: str, table: str) -> pd.Series:
    s = df[col]
    if pd.api.types.is_bool_dtype(s.dtype):
        raise InputError(where, f"{table} table: column {col} is bool; expected int")
    if pd.api.types.is_integer_dtype(s.dtype):
        return s.astype(np.int64)
    num = pd.to_numeric(s, errors="coerce")
    bad = num.isna() | (num != np.floor(num)) | ~np.isfinite(num.astype(float))
    pos = _first(bad)
    if pos is not None:
        raise InputError(where, f"{table} table {_describe_row(df, pos)}: {col} {_show(s.iat[pos])} is not an integer")
    return num.astype(np.int64)


def validate_captions(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """Check and normalise a captions table; return it with canonical dtypes and a 0..N-1 index.

    The canonical columns come first; extra columns (MT provenance, say) follow unchanged.
    ``where`` names the source (file or stage) in every error. Coerces ``image_id``, ``split``,
    ``lang``, ``text`` and ``origin`` to str and ``cap_idx`` to int64; raises ``InputError`` on
    missing columns, nulls in a canonical column, a split outside train|val|test, a language outside
    ``polyvse.LANGUAGES``, an origin outside human|mt, a negative or non-integer ``cap_idx``, an empty
    or whitespace-only text, a text with a line break, a duplicate ``(image_id, lang, cap_idx,
    origin)`` key, or an image listed under two splits.
    """
    table = "captions"
    df = _check_columns(df, CAPTION_COLUMNS, where, table)
    _no_nulls(df, CAPTION_COLUMNS, where, table)
    out = df.copy()
    for col in ("image_id", "split", "lang", "text", "origin"):
        out[col] = _as_str(df, col, where, table)
    out["cap_idx"] = _as_int64(df, "cap_idx", where, table)
    _check_allowed(out, "split", SPLITS, where, table)
    _check_allowed(out, "origin", ORIGINS, where, table)
    _check_allowed(out, "lang", LANGUAGES, where, table)
    pos = _first(out["cap_idx"] < 0)
    if pos is not None:
        raise InputError(where, f"{table} table {_describe_row(out, pos)}: cap_idx must be >= 0")
    pos = _first(out["image_id"].str.strip() == "")
    if pos is not None:
        raise InputError(where, f"{table} table {_describe_row(out, pos)}: empty image_id")
    pos = _first(out["text"].str.strip() == "")
    if pos is not None:
        raise InputError(where, f"{table} table {_describe_row(out, pos)}: empty caption text")
    # Downstream corpora (FastText, MT caches) hold one caption per line.
    pos = _first(out["text"].str.contains(r"[\r\n]", regex=True))
    if pos is not None:
        raise InputError(where, f"{table} table {_describe_row(out, pos)}: caption text contains a line break")
    dup = out.duplicated(list(CAPTION_KEY), keep="first")
    pos = _first(dup)
    if pos is not None:
        key = out.loc[pos, list(CAPTION_KEY)]
        same = (out.loc[:, list(CAPTION_KEY)] == key).all(axis=1)
        raise InputError(
            where,
            f"{table} table {_describe_row(out, pos)}: duplicate key "
            f"({', '.join(CAPTION_KEY)}), first at row {_first(same)}",
        )
    _check_one_split_per_image(out, where, table)
    return out


def validate_images(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """Check and normalise an images table; return it with str dtypes and a 0..N-1 index.

    Canonical columns come first, extra columns follow unchanged. Raises ``InputError`` on missing
    columns, nulls in a canonical column, a split outside train|val|test, an empty
    ``image_id`` or a duplicate ``image_id``. ``path`` may be empty (features brought by the user).
    """
    table = "images"
    df = _check_columns(df, IMAGE_COLUMNS, where, table)
    _no_nulls(df, IMAGE_COLUMNS, where, table)
    out = df.copy()
    for col in IMAGE_COLUMNS:
        out[col] = _as_str(df, col, where, table)
    _check_allowed(out, "split", SPLITS, where, table)
    pos = _first(out["image_id"].str.strip() == "")
    if pos is not None:
        raise InputError(where, f"{table} table {_describe_row(out, pos)}: empty image_id")
    pos = _first(out["image_id"].duplicated(keep="first"))
    if pos is not None:
        first_pos = _first(out["image_id"] == out["image_id"].iat[pos])
        raise InputError(
            where, f"{table} table {_describe_row(out, pos)}: duplicate image_id, first at row {first_pos}"
        )
    return out


def check_captions_match_images(captions: pd.DataFrame, images: pd.DataFrame, where: str) -> None:
    """Every captioned image must be in the images table, under the same split.

    Both tables must already be validated. Raises ``InputError`` naming the first offending
    captions row.
    """
    split_of = pd.Series(images["split"].to_numpy(), index=images["image_id"].to_numpy())
    image_split = captions["image_id"].map(split_of)
    pos = _first(image_split.isna())
    if pos is not None:
        raise InputError(where, f"captions table {_describe_row(captions, pos)}: image not in the images table")
    pos = _first(image_split.to_numpy() != captions["split"].to_numpy())
    if pos is not None:
        raise InputError(
            where,
            f"captions table {_describe_row(captions, pos)}: images table puts this image "
            f"in split {image_split.iat[pos]!r}",
        )


def _read_parquet(path: str | Path, table: str) -> pd.DataFrame:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, f"{table} table not found" if not path.exists() else f"{table} table is not a file")
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a damaged file
        raise InputError(path, f"cannot read {table} table as parquet: {type(exc).__name__}: {exc}") from exc


def resolve_paths(paths: Iterable[str], root: str | Path) -> list[str]:
    """File paths as a table gives them (``images.path``, ``utterances.path``: relative to ``root``, the
    dataset's folder, or absolute) as this process reaches them."""
    root = Path(root)
    return [str(p if Path(p).is_absolute() else root / p) for p in paths]


def read_captions(path: str | Path) -> pd.DataFrame:
    """Read a captions parquet file and validate it; errors name ``path``."""
    return validate_captions(_read_parquet(path, "captions"), where=str(path))


def read_images(path: str | Path) -> pd.DataFrame:
    """Read an images parquet file and validate it; errors name ``path``."""
    return validate_images(_read_parquet(path, "images"), where=str(path))


def spoken_captions(captions: pd.DataFrame, split: str, langs: Sequence[str], cap_idx: int) -> pd.DataFrame:
    """One human caption per (image, language) of ``split``: the one at ``cap_idx`` (the spoken one),
    else the image's first. Columns of the captions table, ordered by image then language."""
    sub = select_captions(captions, split, langs)
    sub["_spoken"] = sub["cap_idx"] != cap_idx  # False sorts first: the spoken caption wins
    sub = sub.sort_values(["image_id", "lang", "_spoken", "cap_idx"], kind="stable")
    return sub.drop_duplicates(["image_id", "lang"]).drop(columns="_spoken").reset_index(drop=True)


def select_captions(captions: pd.DataFrame, split: str, langs: Sequence[str], which: str = "human") -> pd.DataFrame:
    """The captions a model sees of ``split`` in ``langs``: the human ones (``which="human"``), or every origin,
    machine translations included (``"augmented"``); in table order, indexed from 0."""
    keep = (captions["split"] == split) & captions["lang"].isin(list(langs))
    if which == "human":
        keep &= captions["origin"] == "human"
    return captions[keep].reset_index(drop=True)
