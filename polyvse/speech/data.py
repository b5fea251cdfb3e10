"""Multiview datapoints of one split: an image and one utterance per language (thesis §2.1).

A :class:`ViewSet` aligns, for the N images of a split, the image's row in the
feature matrix and each language's row in that language's log-Mel store (store
keys are image ids). :meth:`ViewSet.batch` assembles a batch of datapoints:
image features ``(B, F)`` and, per language, padded log-Mel ``(B, T, 40)`` with
lengths ``(B,)``, every utterance first cut to its language's truncation cap
(§2.4.2.1, :mod:`polyvse.speech.batching`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from polyvse.speech.batching import store_batch, truncation_length
from polyvse.speech.store import LogMelStore


@dataclass
class ViewSet:
    """The datapoints of one split.

    image_ids ``(N,)``; image_rows ``(N,)`` rows of the feature matrix; store_rows
    ``{lang: (N,)}`` rows of each language's store; max_frames ``{lang: cap or None}``.
    """

    langs: tuple[str, ...]
    image_ids: list[str]
    image_rows: np.ndarray
    stores: Mapping[str, LogMelStore]
    store_rows: dict[str, np.ndarray]
    max_frames: dict[str, int | None] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.image_ids)

    def lengths(self, lang: str) -> np.ndarray:
        """Frames of each datapoint's utterance in ``lang`` ``(N,)``, before truncation."""
        return np.asarray(self.stores[lang].lengths)[self.store_rows[lang]]

    def truncated(self, fraction: float) -> "ViewSet":
        """The same set with the truncation rule's cap per language (computed on this set)."""
        caps = {lang: truncation_length(self.lengths(lang), fraction) for lang in self.langs}
        return ViewSet(self.langs, self.image_ids, self.image_rows, self.stores, self.store_rows, caps)

    def batch(
        self, index: np.ndarray | Sequence[int], features: Tensor, device: torch.device | str = "cpu"
    ) -> dict[str, object]:
        """``{"image": (B, F), "speech": {lang: ((B, T, n_mels), lengths (B,))}}`` for datapoints ``index``."""
        index = np.asarray(index, dtype=np.int64)
        speech = {}
        for lang in self.langs:
            x, lengths = store_batch(self.stores[lang], self.store_rows[lang][index], self.max_frames.get(lang))
            speech[lang] = (x.to(device), lengths.to(device))
        rows = torch.as_tensor(self.image_rows[index], dtype=torch.long)
        return {"image": features[rows].to(device), "speech": speech}

    def batches(self, batch_size: int, rng: np.random.Generator | None = None) -> Iterator[np.ndarray]:
        """Index arrays of ``batch_size`` datapoints (the last one smaller): shuffled by ``rng``,
        else in order."""
        order = rng.permutation(len(self)) if rng is not None else np.arange(len(self))
        for lo in range(0, len(order), batch_size):
            yield order[lo : lo + batch_size]


def view_set(
    utterances: pd.DataFrame,
    split: str,
    stores: Mapping[str, LogMelStore],
    image_index: Mapping[str, int],
    langs: Sequence[str],
) -> ViewSet:
    """The datapoints of ``split``: images (in utterances-table order) that have an
    utterance in every language of ``langs``, each found in its store by image id."""
    sub = utterances[(utterances["split"] == split) & utterances["lang"].isin(list(langs))]
    per_image = sub.groupby("image_id", sort=False)["lang"].nunique()
    image_ids = [i for i in per_image.index if per_image[i] == len(langs)]
    if not image_ids:
        raise ValueError(f"no {split} image has an utterance in every language of {list(langs)}")
    missing = [i for i in image_ids if i not in image_index]
    if missing:
        raise KeyError(f"{len(missing)} {split} images have no image features, e.g. {missing[:3]}")
    store_rows = {}
    for lang in langs:
        store = stores[lang]
        try:
            store_rows[lang] = np.array([store.row(i) for i in image_ids], dtype=np.int64)
        except KeyError as exc:
            raise KeyError(f"the {lang} log-Mel store {store.path} lacks a {split} utterance: {exc}") from None
    return ViewSet(
        tuple(langs), image_ids, np.array([image_index[i] for i in image_ids], dtype=np.int64), stores, store_rows
    )
