"""Embedding test sets with a trained model, and retrieval per language."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from polyvse.evaluate.retrieval import RetrievalResult, bidirectional_retrieval
from polyvse.text.encoded import EncodedCaptions


@torch.no_grad()
def embed_images(model: nn.Module, features: Tensor, batch_size: int = 1024) -> Tensor:
    """``(N, F) -> (N, J)`` on the model's device, eval mode."""
    device = next(model.parameters()).device
    model.eval()
    return torch.cat(
        [
            model.embed_images(features[i : i + batch_size].float().to(device))
            for i in range(0, len(features), batch_size)
        ]
    )


@torch.no_grad()
def embed_sentences(model: nn.Module, enc: EncodedCaptions, batch_size: int = 1024) -> Tensor:
    """``EncodedCaptions (S) -> (S, J)``."""
    device = next(model.parameters()).device
    model.eval()
    out = []
    for i in range(0, len(enc), batch_size):
        rows = torch.arange(i, min(i + batch_size, len(enc)))
        tokens, lengths = enc.take(rows)
        out.append(model.embed_sentences(tokens.to(device), lengths, enc.lang[rows].to(device)))
    return torch.cat(out)


def retrieval_for(model: nn.Module, features: Tensor, enc: EncodedCaptions) -> RetrievalResult:
    """Retrieval between the sentences of ``enc`` and the images they describe.

    The image pool is every image ``enc`` mentions (one test split, one language).
    """
    rows = torch.unique(enc.image_row)
    column = torch.full((int(features.shape[0]),), -1, dtype=torch.long)
    column[rows] = torch.arange(len(rows))
    img = embed_images(model, features[rows])
    txt = embed_sentences(model, enc)
    scores = (txt @ img.T).cpu().numpy()
    return bidirectional_retrieval(scores, column[enc.image_row].numpy())


def mean_validation_recall(model: nn.Module, features: Tensor, by_lang: dict[str, EncodedCaptions]) -> float:
    """Mean mR over languages: the model-selection score (best epoch by validation mR)."""
    return float(np.mean([retrieval_for(model, features, enc).mean_recall for enc in by_lang.values()]))
