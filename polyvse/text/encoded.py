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

    tokens ``(S, T)`` long, zero-padded; lengths ``(S,)``; image_row ``(S,)``
    row of each sentence's image in the feature matrix; lang ``(S,)`` index
    into ``langs``; frame: the captions these rows came from (same order).
    """

    tokens: Tensor
    lengths: Tensor
    image_row: Tensor
    lang: Tensor
    langs: list[str]
    frame: pd.DataFrame

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    def subset(self, rows: Tensor | np.ndarray) -> "EncodedCaptions":
        rows_t = torch.as_tensor(rows, dtype=torch.long)
        width = int(self.lengths[rows_t].max()) if len(rows_t) else 1
        return EncodedCaptions(
            self.tokens[rows_t, :width],
            self.lengths[rows_t],
            self.image_row[rows_t],
            self.lang[rows_t],
            self.langs,
            self.frame.iloc[rows_t.numpy()].reset_index(drop=True),
        )


def encode_captions(
    captions: pd.DataFrame, vocab: Vocabulary, image_index: Mapping[str, int], max_len: int
) -> EncodedCaptions:
    """Encode the ``text`` of a captions frame; ``image_index`` maps image_id → feature row."""
    missing = sorted(set(captions["image_id"]) - set(image_index))
    if missing:
        raise KeyError(f"{len(missing)} captioned images have no features, e.g. {missing[:3]}")
    # plain lists: iterating (arrow-backed) columns and making a tensor per row is slow
    texts, langs, images = captions["text"].tolist(), captions["lang"].tolist(), captions["image_id"].tolist()
    ids = [vocab.encode(t, l, max_len) for t, l in zip(texts, langs)]
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    tokens = np.zeros((len(ids), int(lengths.max()) if len(ids) else 1), dtype=np.int64)
    for i, x in enumerate(ids):
        tokens[i, : len(x)] = x
    lang_ix = {l: i for i, l in enumerate(vocab.langs)}
    return EncodedCaptions(
        tokens=torch.from_numpy(tokens),
        lengths=torch.from_numpy(lengths),
        image_row=torch.tensor([image_index[i] for i in images], dtype=torch.long),
        lang=torch.tensor([lang_ix[l] for l in langs], dtype=torch.long),
        langs=list(vocab.langs),
        frame=captions.reset_index(drop=True),
    )
