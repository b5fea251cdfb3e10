"""The canonical utterances table of an audio dataset and its two sources.

``results/{dataset}/utterances.parquet`` (docs/architecture.md, The DAG): one row per
utterance with ``image_id``, ``split`` (train|val|test), ``lang``, ``path`` (a wav
file, relative to ``results/{dataset}`` or absolute), then optional extra columns
(voice, rate, pitch, duration_s for synthetic speech). ``(image_id, lang)`` is
unique: the thesis' datapoint is an image and one utterance per language (§2.1).

Sources:

* synthetic: one caption per image and language (``cap_idx`` 0 of the synthetic
  dataset, each language generated independently, as the Places spoken captions
  are independent descriptions, thesis §3.1.1) spoken by espeak-ng
  (:mod:`polyvse.speech.tts`) into ``wav/{lang}/{image_id}.wav``;
* a user's list (``places_speech`` adapter): a TSV or CSV with columns
  ``image_id, split, lang, wav`` and optionally ``image`` (the image file), for
  the Places audio captions (English: Harwath et al.; Hindi: Harwath et al. 2018;
  Japanese: Ohishi et al. 2020). Every wav is checked (missing, empty,
  truncated, not a wav → ``InputError`` with its path and the list's line).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from polyvse import LANGUAGES
from polyvse.data.places_speech import parse_utterance_list
from polyvse.data.tables import SPLITS
from polyvse.errors import InputError
from polyvse.speech.audio import check_wav
from polyvse.speech.tts import SpeechRequest, VoicePool

UTTERANCE_COLUMNS: tuple[str, ...] = ("image_id", "split", "lang", "path")


def wav_path(lang: str, image_id: str) -> str:
    """Where a synthetic utterance lives, relative to the dataset directory."""
    return f"wav/{lang}/{image_id}.wav"


def synthetic_requests(
    captions: pd.DataFrame, langs: Sequence[str], out_dir: str | Path, cap_idx: int = 0
) -> tuple[pd.DataFrame, list[SpeechRequest]]:
    """The utterances table and the TTS requests that fill it, from a captions table.

    One utterance per image and language: the human caption ``cap_idx`` of that
    language. Every image must have it in every language of ``langs`` (a
    synthetic dataset with profile ``all`` does). Rows are grouped by language,
    images in captions order; request keys (which seed each voice) are
    ``{lang}/{image_id}``.
    """
    out_dir = Path(out_dir)
    human = captions[(captions["origin"] == "human") & (captions["cap_idx"] == cap_idx)]
    images = list(dict.fromkeys(captions["image_id"]))
    frames, requests = [], []
    for lang in langs:
        sub = human[human["lang"] == lang].drop_duplicates("image_id")
        missing = sorted(set(images) - set(sub["image_id"]))
        if missing:
            raise InputError(
                "captions",
                f"{len(missing)} images have no {lang} caption {cap_idx}, e.g. "
                f"{missing[:3]}; spoken captions need one per image and language",
            )
        sub = sub.set_index("image_id").loc[images].reset_index()
        paths = [wav_path(lang, i) for i in sub["image_id"]]
        frames.append(
            pd.DataFrame(
                {
                    "image_id": sub["image_id"].astype(str),
                    "split": sub["split"].astype(str),
                    "lang": lang,
                    "path": paths,
                }
            )
        )
        requests += [
            SpeechRequest(text, lang, str(out_dir / p), key=f"{lang}/{iid}")
            for text, p, iid in zip(sub["text"], paths, sub["image_id"])
        ]
    return pd.concat(frames, ignore_index=True), requests


def validate_utterances(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """Check an utterances table: canonical columns first, str dtypes, splits, languages,
    one row per ``(image_id, lang)``, one split per image. Returns it with a 0..N-1 index."""
    missing = [c for c in UTTERANCE_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(where, f"utterances table: missing column(s) {', '.join(missing)}")
    extra = [c for c in df.columns if c not in UTTERANCE_COLUMNS]
    out = df.loc[:, [*UTTERANCE_COLUMNS, *extra]].reset_index(drop=True)
    for col in UTTERANCE_COLUMNS:
        if out[col].isna().any():
            pos = int(np.flatnonzero(out[col].isna().to_numpy())[0])
            raise InputError(where, f"utterances table row {pos}: {col} is missing")
        out[col] = out[col].astype(str)
    for col, allowed in (("split", SPLITS), ("lang", LANGUAGES)):
        bad = ~out[col].isin(allowed)
        if bad.any():
            pos = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(
                where, f"utterances table row {pos}: {col} {out[col].iat[pos]!r} is not one of {'|'.join(allowed)}"
            )
    dup = out.duplicated(["image_id", "lang"])
    if dup.any():
        pos = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(
            where,
            f"utterances table row {pos}: a second utterance of image "
            f"{out['image_id'].iat[pos]!r} in {out['lang'].iat[pos]!r}",
        )
    splits = out.groupby("image_id")["split"].nunique()
    if (splits > 1).any():
        raise InputError(where, f"utterances table: image {splits[splits > 1].index[0]!r} is in two splits")
    return out


def read_utterances(path: str | Path) -> pd.DataFrame:
    """Read and validate ``utterances.parquet``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "utterances table does not exist")
    return validate_utterances(pd.read_parquet(path), str(path))


def read_utterance_list(
    path: str | Path, langs: Sequence[str], images_dir: str | Path | None = None, check_audio: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
    """A user's utterance list → (utterances table, images table, counts): the list as
    :func:`polyvse.data.places_speech.parse_utterance_list` reads it, every wav checked
    (``check_audio``: a bad wav raises :class:`InputError` naming the wav and the list's line)."""
    listed, images, counts = parse_utterance_list(path, langs, images_dir)
    if check_audio:
        for wav, ln in zip(listed["path"], listed["line"]):
            try:
                check_wav(wav)
            except InputError as exc:
                raise InputError(wav, f"{exc.reason} (listed in {path}, line {ln})") from None
    return validate_utterances(listed.drop(columns="line"), str(path)), images, counts


def synthesize_utterances(
    captions: pd.DataFrame,
    langs: Sequence[str],
    out_dir: str | Path,
    *,
    cap_idx: int = 0,
    seed: int = 0,
    threads: int = 1,
    progress: bool = True,
    pool: VoicePool | None = None,
) -> tuple[pd.DataFrame, dict[str, float | int]]:
    """Speak caption ``cap_idx`` of every image in every language into ``out_dir/wav/{lang}/``,
    voices drawn from ``pool`` (default: the full pool of :mod:`polyvse.speech.tts`).

    Returns the utterances table (paths relative to ``out_dir``; voice, rate,
    pitch and duration_s as extra columns) and the batch summary (utterances/s).
    """
    from polyvse.speech.tts import DEFAULT_POOL, synthesize_batch

    table, requests = synthetic_requests(captions, langs, out_dir, cap_idx)
    batch = synthesize_batch(
        requests,
        seed=seed,
        threads=threads,
        progress=progress,
        desc="TTS",
        pool=pool if pool is not None else DEFAULT_POOL,
    )
    spoken = batch.table
    table = table.assign(
        voice=spoken["voice"].to_numpy(),
        rate=spoken["rate"].to_numpy(),
        pitch=spoken["pitch"].to_numpy(),
        duration_s=spoken["duration_s"].to_numpy(),
    )
    return validate_utterances(table, "synthetic utterances"), batch.summary()
