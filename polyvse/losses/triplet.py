"""Hinge triplet loss with cosine distance over the K most violated negatives.

SMALR §3.1 eq. (1): ``L = max(0, m + d(x, y+) - d(x, y-))`` with cosine distance
and m = 0.05; MULE eq. (3) and SMALR eq. (3) use it in both directions, and
MULE eq. (1) / SMALR §3.3 use it between sentences (neighbourhood constraints).
Following the two-branch network of Wang et al. (TPAMI 2019) that both papers
build on, every positive pair in the batch is a constraint row, every other item
that is not a positive of the anchor is a negative, and each row keeps its K
most violated negatives (K = 10); the loss is the mean over the kept terms.

Which items are negatives differs between the papers' image–sentence losses:
SMALR eq. (3) (:func:`multimodal_triplet`) compares an anchor with every other
item of the batch, of any language; MULE eq. (3) samples the negative "in the
same language" as the positive (:func:`same_language_triplet`). Both papers'
neighbourhood constraints (:func:`neighbourhood_triplet`) take positives and
negatives of any language.
"""

from __future__ import annotations

import torch
from torch import Tensor


def cosine_distance(a: Tensor, b: Tensor) -> Tensor:
    """Pairwise cosine distance ``1 - cos``: ``(A, D), (C, D) -> (A, C)``."""
    a = torch.nn.functional.normalize(a, dim=-1)
    b = torch.nn.functional.normalize(b, dim=-1)
    return 1.0 - a @ b.T


def top_k_hinge(dist: Tensor, positive: Tensor, negative: Tensor, margin: float = 0.05, top_k: int = 10) -> Tensor:
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


def top_k_triplet(
    anchors: Tensor,
    candidates: Tensor,
    positive: Tensor,
    margin: float = 0.05,
    top_k: int = 10,
    ignore: Tensor | None = None,
) -> Tensor:
    """Mean hinge over the ``top_k`` most violated negatives of every positive pair.

    anchors: ``(A, D)``; candidates: ``(C, D)``; positive: ``(A, C)`` bool, True
    where candidate c is a positive of anchor a. ``ignore`` ``(A, C)`` bool marks
    pairs that are neither positive nor negative (an item paired with itself).
    Returns a scalar; zero when the batch has no positive pair or no negative.
    """
    if positive.shape != (anchors.shape[0], candidates.shape[0]):
        raise ValueError(
            f"positive mask {tuple(positive.shape)} does not match ({anchors.shape[0]}, {candidates.shape[0]})"
        )
    negative = ~positive if ignore is None else ~(positive | ignore)
    return top_k_hinge(cosine_distance(anchors, candidates), positive, negative, margin, top_k)


def multimodal_triplet(
    images: Tensor,
    sentences: Tensor,
    image_of_sentence: Tensor,
    margin: float = 0.05,
    top_k: int = 10,
    sentence_weight: float = 1.5,
) -> Tensor:
    """SMALR eq. (3): ``L_triplet(I, Q+, Q-) + λ1 · L_triplet(Q, I+, I-)``.

    images: ``(B, D)`` unique images of the batch; sentences: ``(S, D)``;
    image_of_sentence: ``(S,)`` long, the row of ``images`` each sentence describes.
    λ1 = ``sentence_weight`` = 1.5 weights the sentence-anchored term.
    """
    pos = image_of_sentence.unsqueeze(0) == torch.arange(images.shape[0], device=images.device).unsqueeze(1)
    image_anchored = top_k_triplet(images, sentences, pos, margin, top_k)
    sentence_anchored = top_k_triplet(sentences, images, pos.T, margin, top_k)
    return image_anchored + sentence_weight * sentence_anchored


def same_language_triplet(
    images: Tensor,
    sentences: Tensor,
    image_of_sentence: Tensor,
    lang_of_sentence: Tensor,
    margin: float = 0.05,
    top_k: int = 10,
    sentence_weight: float = 1.5,
) -> Tensor:
    """MULE §"Image-Language Matching", eq. (3): the bidirectional triplet with
    every triplet inside one language.

    "Given f_i, we sample [a] positive sentence s_i+ and a negative sentence
    s_i- represented in the same language. Equivalently, given y_i, we sample
    the positive image f_i+ and a negative image f_i-": for each language l of
    the batch the loss is :func:`multimodal_triplet` on the language-l
    sub-batch — the sentences in l and the images they describe. So an image
    is compared only with sentences of the positive's language, and a sentence
    in l only with images that have an l sentence in the batch (an image
    without one is not a candidate the language-l sentence competes with).
    The value is the mean over the languages whose sub-batch holds at least two
    images (fewer: no negative exists) — MULE's public code likewise averages
    one such loss per language (``tf.reduce_mean`` over its languages).

    images: ``(B, D)``; sentences: ``(S, D)``; image_of_sentence: ``(S,)`` long,
    the row of ``images`` each sentence describes; lang_of_sentence: ``(S,)``
    language index of each sentence. With one language this equals
    :func:`multimodal_triplet`. Scalar; zero (with a graph) when no language
    has a negative.
    """
    if lang_of_sentence.shape != image_of_sentence.shape:
        raise ValueError(
            f"lang_of_sentence {tuple(lang_of_sentence.shape)} does not match "
            f"image_of_sentence {tuple(image_of_sentence.shape)}"
        )
    per_language = []
    for lang in torch.unique(lang_of_sentence).tolist():
        rows = (lang_of_sentence == lang).nonzero(as_tuple=True)[0]
        own, local = torch.unique(image_of_sentence[rows], return_inverse=True)
        if own.numel() < 2:
            continue
        per_language.append(multimodal_triplet(images[own], sentences[rows], local, margin, top_k, sentence_weight))
    if not per_language:
        return images.sum() * 0.0 + sentences.sum() * 0.0
    return torch.stack(per_language).mean()


def neighbourhood_triplet(
    sentences: Tensor, image_of_sentence: Tensor, margin: float = 0.05, top_k: int = 10
) -> Tensor:
    """Neighbourhood constraints (MULE eq. 1, SMALR §3.3): sentences of the same
    image, in any language, are positives; sentences of other images negatives.

    sentences: ``(S, D)``; image_of_sentence: ``(S,)``.
    """
    same = image_of_sentence.unsqueeze(0) == image_of_sentence.unsqueeze(1)
    self_pair = torch.eye(len(image_of_sentence), dtype=torch.bool, device=sentences.device)
    return top_k_triplet(sentences, sentences, same & ~self_pair, margin, top_k, ignore=self_pair)
