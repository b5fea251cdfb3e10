"""Dispatch a dataset's config to its adapter and return the canonical tables."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from polyvse.data.tables import validate_captions, validate_images


def raw_files(settings: Mapping) -> list[str]:
    """The user's files a dataset's adapter reads (the dataset rule's inputs, so that a changed
    caption file re-runs what depends on it); none for synthetic data."""
    adapter = settings["adapter"]
    langs = list(settings.get("langs") or [])
    if adapter == "multi30k":
        from polyvse.data.multi30k import TASK1_LANGS, present_files

        return [str(p) for p in present_files(settings["multi30k"]["root"], [l for l in langs if l in TASK1_LANGS])]
    if adapter == "coco":
        c = settings["coco"]
        wanted = {"captions_json": True, "ja_json": "ja" in langs, "zh_captions": "zh" in langs}
        return [str(c[key]) for key, needed in wanted.items() if needed and c.get(key)]
    if adapter == "places_speech":
        return [str(settings["places_speech"]["utterances"])]
    return []


def dataset_settings(settings: Mapping) -> dict:
    """A dataset's settings but those only its text-only corpus reads (``synthetic.corpus_*``, rule
    corpus): what :func:`make_dataset` depends on, so that a corpus setting does not make the
    dataset, and everything after it, again."""
    settings = dict(settings)
    if "synthetic" in settings:
        settings["synthetic"] = {k: v for k, v in settings["synthetic"].items() if not k.startswith("corpus_")}
    return settings


def make_dataset(name: str, settings: Mapping, out_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Build (captions, images) for dataset ``name``; image paths are relative to
    ``out_dir`` or absolute. Synthetic images are rendered into ``out_dir``."""
    adapter = settings["adapter"]
    langs = list(settings.get("langs") or [])
    if adapter == "synthetic":
        from polyvse.data.synthetic import build_dataset, write_dataset

        s = settings["synthetic"]
        ds = build_dataset(
            s["profile"],
            s["n_train"],
            s["n_val"],
            s["n_test"],
            seed=s["seed"],
            captions_per_image=s["captions_per_image"],
            langs=langs if s["profile"] == "all" else None,
            lexicon=s.get("lexicon", "closed"),
        )
        write_dataset(ds, Path(out_dir), image_size=s["image_size"])
        captions, images = ds.captions, ds.images
    elif adapter == "multi30k":
        from polyvse.data.multi30k import load_multi30k

        m = settings["multi30k"]
        captions, images = load_multi30k(
            Path(m["root"]),
            langs=[l for l in langs if l in ("en", "de", "fr", "cs")],
            images_dir=Path(m["images_dir"]) if m.get("images_dir") else None,
        )
    elif adapter == "coco":
        from polyvse.data.coco import load_coco

        c = settings["coco"]
        captions, images = load_coco(
            c["captions_json"],
            langs,
            ja_json=c.get("ja_json"),
            zh_captions=c.get("zh_captions"),
            images_dir=c.get("images_dir"),
            split=c["split"],
            n_val=c["n_val"],
            n_test=c["n_test"],
            seed=c["seed"],
            max_captions=c["max_captions"],
        )
    elif adapter == "places_speech":
        from polyvse.data.tables import CAPTION_COLUMNS
        from polyvse.data.places_speech import parse_utterance_list

        p = settings["places_speech"]
        _, images, _ = parse_utterance_list(p["utterances"], langs, p.get("images_dir"))
        captions = pd.DataFrame(
            {c: pd.Series([], dtype="int64" if c == "cap_idx" else "str") for c in CAPTION_COLUMNS}
        )  # spoken captions only: no text
    else:
        raise ValueError(f"datasets.{name}.adapter: unknown adapter {adapter!r}")
    where = f"dataset {name} ({adapter})"
    return validate_captions(captions, where), validate_images(images, where)
