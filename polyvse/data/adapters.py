"""Dispatch a dataset's config to its adapter and return the canonical tables."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from polyvse.data.tables import validate_captions, validate_images


def make_dataset(name: str, settings: Mapping, out_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Build (captions, images) for dataset ``name``; image paths are relative to
    ``out_dir`` or absolute. Synthetic images are rendered into ``out_dir``."""
    adapter = settings["adapter"]
    langs = list(settings.get("langs") or [])
    if adapter == "synthetic":
        from polyvse.data.synthetic import build_dataset, write_dataset

        s = settings["synthetic"]
        ds = build_dataset(s["profile"], s["n_train"], s["n_val"], s["n_test"], seed=s["seed"],
                           captions_per_image=s["captions_per_image"],
                           langs=langs if s["profile"] == "all" else None)
        write_dataset(ds, Path(out_dir), image_size=s["image_size"])
        captions, images = ds.captions, ds.images
    elif adapter == "multi30k":
        from polyvse.data.multi30k import load_multi30k

        m = settings["multi30k"]
        captions, images = load_multi30k(Path(m["root"]), langs=[l for l in langs if l in ("en", "de", "fr", "cs")],
                                         images_dir=Path(m["images_dir"]) if m.get("images_dir") else None)
    elif adapter == "places_speech":
        from polyvse.data.tables import CAPTION_COLUMNS
        from polyvse.speech.utterances import read_utterance_list

        p = settings["places_speech"]
        _, images, _ = read_utterance_list(p["utterances"], langs, p.get("images_dir"), check_audio=False)
        captions = pd.DataFrame({c: pd.Series([], dtype="int64" if c == "cap_idx" else "str")
                                 for c in CAPTION_COLUMNS})  # spoken captions only: no text
    else:
        raise ValueError(f"datasets.{name}.adapter: unknown adapter {adapter!r}")
    where = f"dataset {name} ({adapter})"
    return validate_captions(captions, where), validate_images(images, where)
