"""Caption sets encoded as token ids: what a model reads, in training and in evaluation."""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from polyvse.text.vocab import Vocabulary


def valid_mask(lengths: Tensor, width: int) -> Tensor:
    """``(S,)`` lengths → ``(S, T)`` bool, True on the first ``lengths[s]`` steps (the tokens of a padded batch)."""
    steps = torch.arange(width, device=lengths.device)
    return steps.unsqueeze(0) < lengths.unsqueeze(1)


@dataclass
class EncodedCaptions:
    """Sentences ready for a model.

    ids: every sentence's token ids one after another, int32 (ragged: at Multi30K's size with
    MT, 1.45M sentences of 18 ids on average, a matrix padded to 40 ids held 232 MB where the ids
    need 104; int64 would double either); offsets ``(S + 1,)``: sentence i is
    ``ids[offsets[i]:offsets[i + 1]]``; lengths ``(S,)``; image_row ``(S,)`` row of each
    sentence's image in the feature matrix; lang ``(S,)`` index into ``langs``; frame: the
    captions these rows came from (same order), None where the caller did not keep them (a
    training set whose text is not read again). :meth:`take` hands a model zero-padded long ids.
    """

    ids: Tensor
    offsets: Tensor
    lengths: Tensor
    image_row: Tensor
    lang: Tensor
    langs: list[str]
    frame: pd.DataFrame | None

    @classmethod
    def from_padded(
        cls,
        tokens: Tensor,
        lengths: Tensor,
        image_row: Tensor,
        lang: Tensor,
        langs: list[str],
        frame: pd.DataFrame | None,
    ) -> "EncodedCaptions":
        """From zero-padded ids ``(S, T)`` and their lengths ``(S,)``."""
        lengths = torch.as_tensor(lengths, dtype=torch.long)
        inside = torch.arange(tokens.shape[1]) < lengths[:, None]
        return cls(tokens[inside].int(), _offsets(lengths), lengths, image_row, lang, langs, frame)

    def __len__(self) -> int:
        return int(self.lengths.shape[0])

    def take(self, rows: Tensor | np.ndarray) -> tuple[Tensor, Tensor]:
        """The ``rows``' token ids ``(R, W)`` long, zero-padded, W the longest of them, and
        lengths ``(R,)``: what a batch needs, without :meth:`subset`'s copy of the caption frame."""
        rows_t = torch.as_tensor(rows, dtype=torch.long)
        lengths = self.lengths[rows_t]
        width = int(lengths.max()) if len(rows_t) else 1
        if self.ids.numel() == 0:
            return torch.zeros(len(rows_t), width, dtype=torch.long), lengths
        inside = torch.arange(width) < lengths[:, None]
        where = (self.offsets[rows_t][:, None] + torch.arange(width)).masked_fill_(~inside, 0)
        return self.ids[where].long().masked_fill_(~inside, 0), lengths

    def subset(self, rows: Tensor | np.ndarray) -> "EncodedCaptions":
        rows_t = torch.as_tensor(rows, dtype=torch.long)
        tokens, lengths = self.take(rows_t)
        return EncodedCaptions.from_padded(
            tokens,
            lengths,
            self.image_row[rows_t],
            self.lang[rows_t],
            self.langs,
            None if self.frame is None else self.frame.iloc[rows_t.numpy()].reset_index(drop=True),
        )


def _offsets(lengths: Tensor) -> Tensor:
    """``(S + 1,)``: where each sentence's ids start in the flat ids, and their end."""
    return torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(lengths, 0)])


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
    if max_len < 1:
        raise ValueError(f"encode_captions: max_len must be at least 1, got {max_len}")
    # one pass into a growing C int32 buffer: a list of every sentence's id list first (Python
    # ints) took ~1 GB transient at Multi30K's size
    ids = array("i")
    lengths = np.zeros(len(texts), dtype=np.int64)
    for i, (t, l) in enumerate(zip(texts, langs)):
        x = vocab.encode(t, l, max_len)
        ids.extend(x)
        lengths[i] = len(x)
    lang_ix = {l: i for i, l in enumerate(vocab.langs)}
    lengths_t = torch.from_numpy(lengths)
    return EncodedCaptions(
        ids=torch.from_numpy(np.frombuffer(ids, dtype=np.int32).copy()),
        offsets=_offsets(lengths_t),
        lengths=lengths_t,
        image_row=torch.tensor([image_index[i] for i in images], dtype=torch.long),
        lang=torch.tensor([lang_ix[l] for l in langs], dtype=torch.long),
        langs=list(vocab.langs),
        frame=captions.reset_index(drop=True) if keep_frame else None,
    )


def padded_tokens(ids: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids of S sentences → ``tokens (S, L_max)`` right-padded with 0 and ``lengths (S,)``."""
    lengths = torch.tensor([len(x) for x in ids], dtype=torch.long)
    tokens = torch.zeros((len(ids), int(lengths.max())), dtype=torch.long)
    for row, x in enumerate(ids):
        tokens[row, : len(x)] = torch.tensor(x, dtype=torch.long)
    return tokens, lengths
