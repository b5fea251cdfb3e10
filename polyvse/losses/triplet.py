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
    """Pairwise cosine distance ``1 - cos``: ``(A, D), (C, D) -> (A, C)``."""
    a_unit = nn.functional.normalize(a, dim=-1)
    # on an accelerator a set against itself (the neighbourhood constraints) is normalised once:
    # fewer ops for the host to launch; the CPU keeps the order of its earlier runs' gradients
    once = b is a and a.device.type != "cpu"
    b_unit = a_unit if once else nn.functional.normalize(b, dim=-1)
    return 1.0 - a_unit @ b_unit.T


def top_k_hinge(dist: Tensor, positive: Tensor, negative: Tensor, margin: float = 0.05, top_k: int = 10) -> Tensor:
    """The mining and averaging on a distance matrix.

    dist ``(A, C)``; positive, negative ``(A, C)`` bool. Every positive pair is
    a row; its ``top_k`` most violated negatives are kept; the loss is the mean
    over the kept terms. Scalar; zero without a positive pair or a negative.

    On the CPU the positive pairs are gathered into rows (:func:`gathered_top_k_hinge`); on an
    accelerator the same loss is evaluated on fixed shapes (:func:`dense_top_k_hinge`): the
    gathered rows' number depends on the data, and reading it is a host-device synchronisation
    (three a call with the boolean index, a sixth of a SMALR step's on CUDA).
    """
    if dist.device.type == "cpu":
        return gathered_top_k_hinge(dist, positive, negative, margin, top_k)
    return dense_top_k_hinge(dist, positive, negative, margin, top_k)


def gathered_top_k_hinge(
    dist: Tensor, positive: Tensor, negative: Tensor, margin: float = 0.05, top_k: int = 10
) -> Tensor:
    """:func:`top_k_hinge` with the ``P`` positive pairs gathered: ``(P, C)`` violations."""
    a_idx, p_idx = positive.nonzero(as_tuple=True)
    if a_idx.numel() == 0:
        return dist.sum() * 0.0
    # (P, C): violation of every negative for every positive pair
    violation = margin + dist[a_idx, p_idx].unsqueeze(1) - dist[a_idx]
    violation = violation.masked_fill(~negative[a_idx], float("-inf"))
    k = min(top_k, int(negative.sum(dim=1).max()))
    if k == 0:
        return dist.sum() * 0.0
    # keeping every negative (the warm-up of polyvse.train.negatives) needs no sort: the same terms
    worst = violation if top_k >= violation.shape[1] else violation.topk(k, dim=1).values
    valid = torch.isfinite(worst)
    return worst.clamp(min=0.0)[valid].sum() / valid.sum().clamp(min=1)


def dense_top_k_hinge(
    dist: Tensor, positive: Tensor, negative: Tensor, margin: float = 0.05, top_k: int = 10
) -> Tensor:
    """:func:`top_k_hinge` on shapes fixed by the batch, with no host-device synchronisation.

    Within an anchor's row the violation ``m + d(a, p) − d(a, c)`` orders the negatives c by
    ``−d(a, c)`` alone, whatever the positive p: every positive pair of anchor a keeps the same
    ``top_k`` negatives, the ``top_k`` nearest ones. They are found once per anchor ``(A, k)``
    and the kept terms form an ``(A, C, k)`` tensor, zero where ``(a, c)`` is no positive pair
    or a is short of negatives. Same value as the gathered form up to the order of the sum.
    """
    k = min(top_k, dist.shape[1])
    if k == 0 or dist.shape[0] == 0:
        return dist.sum() * 0.0
    nearest = (-dist).masked_fill(~negative, float("-inf")).topk(k, dim=1).values  # (A, k): -d(a, c)
    kept = positive.unsqueeze(2) & torch.isfinite(nearest).unsqueeze(1)  # (A, C, k)
    terms = (margin + dist).unsqueeze(2) + nearest.unsqueeze(1)
    terms = torch.where(kept, terms.clamp(min=0.0), 0.0)
    return terms.sum() / kept.sum().clamp(min=1)


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
    if images.device.type == "cpu":
        image_anchored = top_k_triplet(images, sentences, pos, margin, top_k)
        sentence_anchored = top_k_triplet(sentences, images, pos.T, margin, top_k)
    else:
        # on an accelerator, one distance matrix for both directions: a normalisation is ~20
        # small ops with its backward, which the device waits on the host to launch (the CPU
        # keeps the order of its earlier runs' gradients)
        dist = cosine_distance(images, sentences)
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
    everyone = torch.arange(images.shape[0], device=images.device)
    per_language = []
    for lang in torch.unique(lang_of_sentence).tolist():
        rows = (lang_of_sentence == lang).nonzero(as_tuple=True)[0]
        described = image_of_sentence[rows]  # (S_l,)
        pos = described.unsqueeze(0) == everyone.unsqueeze(1)  # (B, S_l)
        own = pos.any(dim=1)  # the images an l sentence describes: the image anchors of language l
        image_anchored = top_k_triplet(images[own], sentences[rows], pos[own], margin, top_k)
        sentence_anchored = top_k_triplet(sentences[rows], images, pos.T, margin, top_k)
        per_language.append(image_anchored + sentence_weight * sentence_anchored)
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
