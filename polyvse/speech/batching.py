"""Truncation and padding of utterances for training (thesis §2.4.2.1).

* Truncation, once before training, per language: the ⌊5 % · N⌋ longest
  utterances are cut (keeping their beginning) to the length of the longest
  utterance among the other 95 %.
* Padding, per batch: every utterance is zero-padded to the longest one in the
  batch, and a lengths tensor records the valid frames (the encoders mask
  everything past it).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torch import Tensor

from polyvse.speech.store import LogMelStore


def truncation_length(lengths: Sequence[int] | np.ndarray, fraction: float = 0.05) -> int:
    """The cap of the truncation rule: with ``k = ⌊fraction · N⌋``, the length of the
    longest utterance outside the k longest (``max(lengths)`` when k = 0)."""
    arr = np.asarray(lengths, dtype=np.int64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("need a non-empty 1-D array of lengths")
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"fraction must be in [0, 1), got {fraction}")
    k = int(np.floor(fraction * arr.size))
    if k == 0:
        return int(arr.max())
    return int(np.sort(arr)[arr.size - k - 1])


def truncate_lengths(lengths: Sequence[int] | np.ndarray, fraction: float = 0.05) -> np.ndarray:
    """Lengths after the truncation rule: ``min(length, truncation_length(lengths))``, int64 ``(N,)``."""
    arr = np.asarray(lengths, dtype=np.int64)
    return np.minimum(arr, truncation_length(arr, fraction))


def pad_batch(
    features: Sequence[np.ndarray | Tensor], max_frames: int | None = None, pad_value: float = 0.0
) -> tuple[Tensor, Tensor]:
    """Stack ``(T_i, n_mels)`` utterances into ``(B, T_max, n_mels)`` float32 and lengths ``(B,)`` int64.

    Each utterance is first cut to ``max_frames`` (the truncation cap) when given;
    ``T_max`` is the longest remaining one.
    """
    if len(features) == 0:
        raise ValueError("cannot pad an empty batch")
    items = [torch.as_tensor(np.asarray(f) if not isinstance(f, Tensor) else f, dtype=torch.float32) for f in features]
    if max_frames is not None:
        if max_frames < 1:
            raise ValueError(f"max_frames must be >= 1, got {max_frames}")
        items = [f[:max_frames] for f in items]
    n_mels = items[0].shape[1]
    if any(f.dim() != 2 or f.shape[1] != n_mels or f.shape[0] < 1 for f in items):
        raise ValueError(f"expected (T >= 1, {n_mels}) utterances, got {[tuple(f.shape) for f in items]}")
    lengths = torch.tensor([f.shape[0] for f in items], dtype=torch.long)
    out = torch.full((len(items), int(lengths.max()), n_mels), pad_value, dtype=torch.float32)
    for i, f in enumerate(items):
        out[i, : f.shape[0]] = f
    return out, lengths


def store_batch(store: LogMelStore, rows: Sequence[int], max_frames: int | None = None) -> tuple[Tensor, Tensor]:
    """:func:`pad_batch` of the store's utterances ``rows`` (copied out of the memory map)."""
    return pad_batch([np.array(store[int(r)][:max_frames] if max_frames else store[int(r)]) for r in rows], max_frames)
