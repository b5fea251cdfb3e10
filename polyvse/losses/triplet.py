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
from torch import Tensor, nn


def cosine_distance(a: Tensor, b: Tensor) -> Tensor:
    """Pairwise cosine distance ``1 - cos``: ``(A, D), (C, D) -> (A, C)``; a set against itself
    (the neighbourhood constraints) is normalised once."""
    a_unit = nn.functional.normalize(a, dim=-1)
    b_unit = a_unit if b is a else nn.functional.normalize(b, dim=-1)
    return 1.0 - a_unit @ b_unit.T


def top_k_hinge(dist: Tensor, positive: Tensor, negative: Tensor, margin: float = 0.05, top_k: int = 10) -> Tensor:
    """The mining and averaging on a distance matrix.

    dist ``(A, C)``; positive, negative ``(A, C)`` bool. Every positive pair is
    a row; its ``top_k`` most violated negatives are kept; the loss is the mean
    over the kept terms. Scalar; zero without a positive pair or a negative.
    """
    sums, counts = anchor_hinge_sums(dist, positive, negative, margin, top_k)
    return sums.sum() / counts.sum().clamp(min=1)


def anchor_hinge_sums(
    dist: Tensor, positive: Tensor, negative: Tensor, margin: float = 0.05, top_k: int = 10
) -> tuple[Tensor, Tensor]:
    """:func:`top_k_hinge`'s kept terms summed per anchor, and their number: ``(A,)``, ``(A,)``.

    Within an anchor's row the violation ``m + d(a, p) − d(a, c)`` orders the negatives c by
    ``−d(a, c)`` alone, whatever the positive p: every positive pair of anchor a keeps the same
    ``top_k`` negatives, the ``top_k`` nearest ones, found once per anchor ``(A, k)``. On the
    CPU the anchor's positives are gathered into ``P`` slots, the most positives of any anchor:
    ``(A, P, k)`` terms, fewer than one gathered row per positive pair makes (``bench/bench_hinge.py``
    compares the forms). Reading ``P`` back is a host-device synchronisation, so an accelerator
    evaluates every candidate as a slot (:func:`dense_hinge_sums`). Both give
    :func:`gathered_top_k_hinge`'s value up to the order of the sum.
    """
    if dist.device.type != "cpu":
        return dense_hinge_sums(dist, positive, negative, margin, top_k)
    anchors = dist.shape[0]
    slots = int(positive.sum(dim=1).max()) if anchors else 0
    k = min(top_k, int(negative.sum(dim=1).max())) if anchors else 0
    if slots == 0 or k == 0:
        return dist.sum(dim=1) * 0.0, torch.zeros(anchors, dtype=torch.long)
    nearest = (-dist).masked_fill(~negative, float("-inf")).topk(k, dim=1).values  # (A, k): -d(a, c)
    where = positive.to(torch.uint8).topk(slots, dim=1).indices  # (A, P): the positives first
    kept = positive.gather(1, where).unsqueeze(2) & torch.isfinite(nearest).unsqueeze(1)  # (A, P, k)
    terms = (margin + dist.gather(1, where)).unsqueeze(2) + nearest.unsqueeze(1)
    terms = torch.where(kept, terms.clamp(min=0.0), 0.0)
    return terms.sum(dim=(1, 2)), kept.sum(dim=(1, 2))


def gathered_top_k_hinge(
    dist: Tensor, positive: Tensor, negative: Tensor, margin: float = 0.05, top_k: int = 10
) -> Tensor:
    """:func:`top_k_hinge` written as the definition reads, one row of ``(P, C)`` violations per
    positive pair: the reference the faster forms are tested against."""
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


def dense_hinge_sums(
    dist: Tensor, positive: Tensor, negative: Tensor, margin: float = 0.05, top_k: int = 10
) -> tuple[Tensor, Tensor]:
    """:func:`anchor_hinge_sums` on shapes fixed by the batch, with no host-device
    synchronisation: every candidate is a slot, ``(A, C, k)`` terms, zero where ``(a, c)`` is no
    positive pair or a is short of negatives."""
    anchors, candidates = dist.shape
    k = min(top_k, candidates)
    if k == 0 or anchors == 0:
        return dist.sum(dim=1) * 0.0, torch.zeros(anchors, dtype=torch.long, device=dist.device)
    nearest = (-dist).masked_fill(~negative, float("-inf")).topk(k, dim=1).values  # (A, k): -d(a, c)
    kept = positive.unsqueeze(2) & torch.isfinite(nearest).unsqueeze(1)  # (A, C, k)
    terms = (margin + dist).unsqueeze(2) + nearest.unsqueeze(1)
    terms = torch.where(kept, terms.clamp(min=0.0), 0.0)
    return terms.sum(dim=(1, 2)), kept.sum(dim=(1, 2))


def dense_top_k_hinge(
    dist: Tensor, positive: Tensor, negative: Tensor, margin: float = 0.05, top_k: int = 10
) -> Tensor:
    """:func:`top_k_hinge` on shapes fixed by the batch (:func:`dense_hinge_sums`)."""
    sums, counts = dense_hinge_sums(dist, positive, negative, margin, top_k)
    return sums.sum() / counts.sum().clamp(min=1)


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
    dist = cosine_distance(images, sentences)  # (B, S): one matrix for both directions
    image_anchored = top_k_hinge(dist, pos, ~pos, margin, top_k)
    sentence_anchored = top_k_hinge(dist.T, pos.T, ~pos.T, margin, top_k)
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
    every sentence triplet inside one language.

    "Given f_i, we sample [a] positive sentence s_i+ and a negative sentence
    s_i- represented in the same language. Equivalently, given y_i, we sample
    the positive image f_i+ and a negative image f_i-": for each language l of
    the batch, an image described by an l sentence is compared with the l
    sentences only (its negative sentences are in l), and an l sentence with
    every image of the batch (an image has no language: each one that the
    sentence does not describe is a negative). The value is the mean over the
    batch's languages of :func:`multimodal_triplet`'s two terms so restricted —
    MULE's public code likewise averages one such loss per language
    (``tf.reduce_mean`` over its languages).

    images: ``(B, D)``; sentences: ``(S, D)``; image_of_sentence: ``(S,)`` long,
    the row of ``images`` each sentence describes; lang_of_sentence: ``(S,)``
    language index of each sentence. With one language this equals
    :func:`multimodal_triplet`. Scalar; zero (with a graph) when the batch has
    a single image.
    """
    if lang_of_sentence.shape != image_of_sentence.shape:
        raise ValueError(
            f"lang_of_sentence {tuple(lang_of_sentence.shape)} does not match "
            f"image_of_sentence {tuple(image_of_sentence.shape)}"
        )
    if images.shape[0] < 2:
        return images.sum() * 0.0 + sentences.sum() * 0.0
    # every language at once, the distances computed once (a loop over the languages multiplies
    # the small operations a step launches): one row of image anchors per (language, image), whose
    # candidates are that language's sentences, and the sentence anchors grouped by language
    n_images = images.shape[0]
    langs, lang_row = torch.unique(lang_of_sentence, return_inverse=True)  # (L,), (S,)
    n_langs = len(langs)
    dist = cosine_distance(images, sentences)  # (B, S)
    describes = image_of_sentence.unsqueeze(0) == torch.arange(n_images, device=images.device).unsqueeze(1)
    in_lang = (lang_row.unsqueeze(0) == torch.arange(n_langs, device=images.device).unsqueeze(1)).unsqueeze(1)
    image_sums, image_counts = anchor_hinge_sums(
        dist.expand(n_langs, -1, -1).flatten(0, 1),
        (describes & in_lang).flatten(0, 1),  # (L·B, S)
        (~describes & in_lang).flatten(0, 1),
        margin,
        top_k,
    )
    image_anchored = image_sums.view(n_langs, n_images).sum(1) / image_counts.view(n_langs, n_images).sum(1).clamp(
        min=1
    )
    sentence_sums, sentence_counts = anchor_hinge_sums(dist.T, describes.T, ~describes.T, margin, top_k)  # (S,)
    by_lang = sentence_sums.new_zeros(n_langs).index_add(0, lang_row, sentence_sums)
    counted = sentence_counts.new_zeros(n_langs).index_add(0, lang_row, sentence_counts)
    sentence_anchored = by_lang / counted.clamp(min=1)
    return (image_anchored + sentence_weight * sentence_anchored).mean()


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
