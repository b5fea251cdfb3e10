"""Loading a speech dataset's workflow outputs into view sets (the train and evaluate rules)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from polyvse.features.image import read_ids
from polyvse.speech.data import ViewSet, view_set
from polyvse.speech.store import open_store
from polyvse.speech.utterances import read_utterances


def load_views(
    utterances_path: str | Path,
    logmel_paths: Sequence[str | Path],
    features_path: str | Path,
    ids_path: str | Path,
    langs: Sequence[str],
    splits: Sequence[str] = ("train", "val"),
) -> tuple[np.ndarray, dict[str, ViewSet]]:
    """Image features ``(N, F)`` (memory-mapped) and a :class:`ViewSet` per split.

    ``logmel_paths`` are the stores of ``langs``, in that order (memory-mapped too).
    """
    if len(logmel_paths) != len(langs):
        raise ValueError(f"{len(logmel_paths)} log-Mel stores for languages {list(langs)}")
    utterances = read_utterances(utterances_path)
    stores = {lang: open_store(p) for lang, p in zip(langs, logmel_paths)}
    ids = read_ids(ids_path)
    features = np.load(features_path, mmap_mode="r")
    if features.ndim != 2 or features.shape[0] != len(ids):
        raise ValueError(f"{features_path}: features {features.shape} do not match {len(ids)} ids in {ids_path}")
    index = {image_id: i for i, image_id in enumerate(ids)}
    return features, {split: view_set(utterances, split, stores, index, langs) for split in splits}
