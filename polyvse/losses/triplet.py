"""Hinge triplet loss with cosine distance over the K most violated negatives.

SMALR §3.1 eq. (1): ``L = max(0, m + d(x, y+) - d(x, y-))`` with cosine distance
and m = 0.05; MULE eq. (3) and SMALR eq. (3) use it in both directions, and
MULE eq. (1) / SMALR §3.3 use it between sentences (neighbourhood constraints).
Following the two-branch network of Wang et al. (TPAMI 2019) that both papers
build on, every positive pair in the batch is a constraint row, every other item
that is not a positive of the anchor is a negative, and each row keeps its K
most violated negatives (K = 10); the loss is the mean over the kept terms.
"""

from __future__ import annotations

import torch
from torch import Tensor


def cosine_distance(a: Tensor, b: Tensor) -> Tensor:
    """Pairwise cosine distance ``1 - cos``: ``(A, D), (C, D) -> (A, C)``."""
    a = torch.nn.functional.normalize(a, dim=-1)
    b = torch.nn.functional.normalize(b, dim=-1)
    return 1.0 - a @ b.T


def top_k_hinge(dist: Tensor, positive: Tensor, negative: Tensor, margin: float = 0.05,
                top_k: int = 10) -> Tensor:
    """The mining and averaging on a distance matrix.

    dist ``(A, C)``; positive, negative ``(A, C)`` bool. Every positive pair is
    a row; its ``top_k`` most violated negatives are kept; the loss is the mean
    over the kept terms. Scalar; zero without a positive pair or a negative.
    """
    a_idx, p_idx = positive.nonzero(as_tuple=True)
    if a_idx.numel() == 0:
        return dist.sum() * 0.0
    # (P, C): violation of every negative for every positive pair
    violation = margin + dist[a_idx, p_idx].unsqueeze(1) - dist[a_idx]
    violation = violation.masked_fill(~negative[a_idx], float("-inf"))
    k = min(top_k, int(negative.sum(dim=1).max()))
    if k == 0:
        return dist.sum() * 0.0
    worst = violation.topk(k, dim=1).values
    valid = torch.isfinite(worst)
    return worst.clamp(min=0.0)[valid].sum() / valid.sum().clamp(min=1)


def top_k_triplet(anchors: Tensor, candidates: Tensor, positive: Tensor,
                  margin: float = 0.05, top_k: int = 10, ignore: Tensor | None = None) -> Tensor:
    """Mean hinge over the ``top_k`` most violated negatives of every positive pair.

    anchors: ``(A, D)``; candidates: ``(C, D)``; positive: ``(A, C)`` bool, True
    where candidate c is a positive of anchor a. ``ignore`` ``(A, C)`` bool marks
    pairs that are neither positive nor negative (an item paired with itself).
    Returns a scalar; zero when the batch has no positive pair or no negative.
    """
    if positive.shape != (anchors.shape[0], candidates.shape[0]):
        raise ValueError(f"positive mask {tuple(positive.shape)} does not match "
                         f"({anchors.shape[0]}, {candidates.shape[0]})")
    negative = ~positive if ignore is None else ~(positive | ignore)
    return top_k_hinge(cosine_distance(anchors, candidates), positive, negative, margin, top_k)


def multimodal_triplet(images: Tensor, sentences: Tensor, image_of_sentence: Tensor,
                       margin: float = 0.05, top_k: int = 10, sentence_weight: float = 1.5) -> Tensor:
    """SMALR eq. (3): ``L_triplet(I, Q+, Q-) + λ1 · L_triplet(Q, I+, I-)``.

    images: ``(B, D)`` unique images of the batch; sentences: ``(S, D)``;
    image_of_sentence: ``(S,)`` long, the row of ``images`` each sentence describes.
    λ1 = ``sentence_weight`` = 1.5 weights the sentence-anchored term.
    """
    pos = image_of_sentence.unsqueeze(0) == torch.arange(images.shape[0], device=images.device).unsqueeze(1)
    image_anchored = top_k_triplet(images, sentences, pos, margin, top_k)
    sentence_anchored = top_k_triplet(sentences, images, pos.T, margin, top_k)
    return image_anchored + sentence_weight * sentence_anchored


def neighbourhood_triplet(sentences: Tensor, image_of_sentence: Tensor,
                          margin: float = 0.05, top_k: int = 10) -> Tensor:
    """Neighbourhood constraints (MULE eq. 1, SMALR §3.3): sentences of the same
    image, in any language, are positives; sentences of other images negatives.

    sentences: ``(S, D)``; image_of_sentence: ``(S,)``.
    """
    same = image_of_sentence.unsqueeze(0) == image_of_sentence.unsqueeze(1)
    self_pair = torch.eye(len(image_of_sentence), dtype=torch.bool, device=sentences.device)
    return top_k_triplet(sentences, sentences, same & ~self_pair, margin, top_k, ignore=self_pair)
