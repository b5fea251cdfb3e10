"""Caption sets encoded as padded tensors, and the image-grouped batch sampler."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
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
        return EncodedCaptions(self.tokens[rows_t, :width], self.lengths[rows_t], self.image_row[rows_t],
                               self.lang[rows_t], self.langs,
                               self.frame.iloc[rows_t.numpy()].reset_index(drop=True))


def encode_captions(captions: pd.DataFrame, vocab: Vocabulary, image_index: Mapping[str, int],
                    max_len: int) -> EncodedCaptions:
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


class ImageGroupedBatches:
    """Batches of ``images_per_batch`` distinct images × ``captions_per_image`` sentences.

    MULE's public code builds batches of 450 images × 2 captions: every batch
    then holds sentence pairs of the same image, which the neighbourhood
    constraints need. An epoch covers every caption about once: it has
    ``ceil(S / (images_per_batch * captions_per_image))`` batches.
    """

    def __init__(self, image_row: Tensor, images_per_batch: int, captions_per_image: int = 2):
        self.images_per_batch = images_per_batch
        self.captions_per_image = captions_per_image
        rows = image_row.numpy()
        order = np.argsort(rows, kind="stable")
        uniq, starts = np.unique(rows[order], return_index=True)
        self.images = uniq
        self.caption_rows: list[np.ndarray] = np.split(order, starts[1:])
        self.n_captions = len(rows)

    def __len__(self) -> int:
        per_batch = self.images_per_batch * self.captions_per_image
        return max(1, -(-self.n_captions // per_batch))

    def epoch(self, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """Yield caption row indices, one array per batch."""
        n_img = len(self.images)
        perm = rng.permutation(n_img)
        cursor = 0
        for _ in range(len(self)):
            if cursor + self.images_per_batch > n_img:
                perm, cursor = rng.permutation(n_img), 0
            chosen = perm[cursor: cursor + self.images_per_batch]
            cursor += self.images_per_batch
            batch = []
            for img in chosen:
                caps = self.caption_rows[img]
                k = min(self.captions_per_image, len(caps))
                batch.append(rng.choice(caps, size=k, replace=False))
            yield np.concatenate(batch)


def collate(encoded: EncodedCaptions, rows: np.ndarray, features: Tensor,
            device: torch.device) -> dict[str, Tensor]:
    """A training batch: unique image features, sentences, and who describes what.

    Returns images ``(B, F)``, tokens ``(S, T)``, lengths ``(S,)``, lang ``(S,)``,
    image_of_sentence ``(S,)`` indexing the batch's images.
    """
    sub = encoded.subset(rows)
    uniq, inverse = torch.unique(sub.image_row, return_inverse=True)
    return {
        "images": features[uniq].to(device),
        "tokens": sub.tokens.to(device),
        "lengths": sub.lengths,
        "lang": sub.lang.to(device),
        "image_of_sentence": inverse.to(device),
    }
