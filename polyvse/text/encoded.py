"""Caption sets encoded as padded tensors: what a model reads, in training and in evaluation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from polyvse.text.vocab import Vocabulary


@dataclass
class EncodedCaptions:
    """Sentences ready for a model.

    tokens ``(S, T)`` int32, zero-padded (int32: at Multi30K's size with MT, 1.45M sentences,
    int64 held 464 MB more than the ids need; :meth:`take` hands a model long ids);
    lengths ``(S,)``; image_row ``(S,)`` row of each sentence's image in the feature matrix;
    lang ``(S,)`` index into ``langs``; frame: the captions these rows came from (same order),
    None where the caller did not keep them (a training set whose text is not read again).
    """

    tokens: Tensor
    lengths: Tensor
    image_row: Tensor
    lang: Tensor
    langs: list[str]
    frame: pd.DataFrame | None

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    def take(self, rows: Tensor | np.ndarray) -> tuple[Tensor, Tensor]:
        """The ``rows``' token ids ``(R, W)`` long, W the longest of them, and lengths ``(R,)``:
        what a batch needs, without :meth:`subset`'s copy of the caption frame."""
        rows_t = torch.as_tensor(rows, dtype=torch.long)
        lengths = self.lengths[rows_t]
        width = int(lengths.max()) if len(rows_t) else 1
        return self.tokens[rows_t, :width].long(), lengths

    def subset(self, rows: Tensor | np.ndarray) -> "EncodedCaptions":
        rows_t = torch.as_tensor(rows, dtype=torch.long)
        tokens, lengths = self.take(rows_t)
        return EncodedCaptions(
            tokens.int(),
            lengths,
            self.image_row[rows_t],
            self.lang[rows_t],
            self.langs,
            None if self.frame is None else self.frame.iloc[rows_t.numpy()].reset_index(drop=True),
        )


def encode_captions(
    captions: pd.DataFrame, vocab: Vocabulary, image_index: Mapping[str, int], max_len: int, keep_frame: bool = True
) -> EncodedCaptions:
    """Encode the ``text`` of a captions frame; ``image_index`` maps image_id → feature row.
    ``keep_frame=False``: the result's ``frame`` is None (the captions' memory can go)."""
    missing = sorted(set(captions["image_id"]) - set(image_index))
    if missing:
        raise KeyError(f"{len(missing)} captioned images have no features, e.g. {missing[:3]}")
    # plain lists: iterating (arrow-backed) columns and making a tensor per row is slow
    texts, langs, images = captions["text"].tolist(), captions["lang"].tolist(), captions["image_id"].tolist()
    # one pass into a preallocated int32 matrix: a list of every sentence's id list first
    # (Python ints) took ~1 GB transient at Multi30K's size
    if max_len < 1:
        raise ValueError(f"encode_captions: max_len must be at least 1, got {max_len}")
    tokens = np.zeros((len(texts), max_len), dtype=np.int32)
    lengths = np.zeros(len(texts), dtype=np.int64)
    for i, (t, l) in enumerate(zip(texts, langs)):
        x = vocab.encode(t, l, max_len)
        tokens[i, : len(x)] = x
        lengths[i] = len(x)
    tokens = tokens[:, : int(lengths.max()) if len(texts) else 1]
    lang_ix = {l: i for i, l in enumerate(vocab.langs)}
    return EncodedCaptions(
        tokens=torch.from_numpy(tokens),
        lengths=torch.from_numpy(lengths),
        image_row=torch.tensor([image_index[i] for i in images], dtype=torch.long),
        lang=torch.tensor([lang_ix[l] for l in langs], dtype=torch.long),
        langs=list(vocab.langs),
        frame=captions.reset_index(drop=True) if keep_frame else None,
    )
