"""MLMME's β-weighted multilingual ranking loss (Calixto et al. 2017, §2, eqs. 1–3).

A training tuple is an image and one sentence describing it in each of K
languages; row b of ``images`` and of every ``sentences[lang]`` belong to the
same tuple. With dot-product similarities of unit vectors and margin α:

- eq. (1) ``S_I``: for every language k, the bidirectional hinge between images
  and sentences — each image against contrastive sentences, each sentence
  against contrastive images — summed over k;
- eq. (2) ``S_S``: for every pair of languages {k, l}, the bidirectional hinge
  between their sentences — each k-sentence against contrastive l-sentences and
  each l-sentence against contrastive k-sentences;
- eq. (3): ``β·S_I + (1 − β)·S_S``.

Eq. (2) is quantified "∀k, ∀l ≠ k" over a term that is already bidirectional;
taken literally that counts every pair twice. Here each unordered pair counts
once (both directions), so with K = 2 the two terms of eq. (2) appear once each.

Contrastive terms, ``contrastive=``:

- ``"random"`` (the paper: "chosen randomly from the training set and resampled
  at every epoch"): each tuple has R contrastive tuples, sampled by the caller
  (:func:`sample_contrastive_indices`) and passed in, embedded, as
  :class:`ContrastiveSet`, so the loss stays a pure function of embeddings;
- ``"in_batch"`` (Kiros et al.'s public VSE code, which MLMME's extends): every
  other tuple of the batch is contrastive; ``image_ids`` masks rows of the same
  image, which are positives rather than contrastive examples.

With K = 1 and β = 1 the loss is VSE's bidirectional hinge (Kiros et al. 2014).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import NamedTuple

import torch
from torch import Tensor

from polyvse.errors import InputError

CONTRASTIVE_MODES: tuple[str, ...] = ("random", "in_batch")
REDUCTIONS: tuple[str, ...] = ("sum", "mean")
MARGIN = 0.2  # α, Calixto et al. §4


@dataclass(frozen=True)
class ContrastiveSet:
    """Embedded contrastive examples of a batch, R per tuple.

    images: ``(B, R, D)`` — the contrastive images d_r of tuple b's sentences;
    sentences: lang → ``(B, R, D)`` — the contrastive sentences v^k_r of tuple b's
    image and of its sentences in the other languages.
    """

    images: Tensor
    sentences: Mapping[str, Tensor]

    @classmethod
    def from_rows(cls, images: Tensor, sentences: Mapping[str, Tensor], n_contrastive: int) -> ContrastiveSet:
        """From embeddings of the flattened contrastive tuples ``(B·R, D)``, tuple-major
        (rows of ``indices.reshape(-1)`` for indices ``(B, R)`` from
        :func:`sample_contrastive_indices`), as one model pass produces them."""
        rows = images.shape[0]
        if n_contrastive < 1 or rows % n_contrastive:
            raise InputError("ContrastiveSet.from_rows", f"{rows} rows are not B × R with R = {n_contrastive}")

        def fold(x: Tensor) -> Tensor:
            if x.shape[0] != rows:
                raise InputError("ContrastiveSet.from_rows", f"{x.shape[0]} sentence rows for {rows} image rows")
            return x.reshape(rows // n_contrastive, n_contrastive, x.shape[-1])

        return cls(fold(images), {lang: fold(v) for lang, v in sentences.items()})


class RankingLoss(NamedTuple):
    """Eq. (3) and its two terms (for logging)."""

    total: Tensor
    image_sentence: Tensor
    sentence_sentence: Tensor


def hinge(positive: Tensor, contrastive: Tensor, margin: float, keep: Tensor | None = None) -> Tensor:
    """``Σ_b Σ_r max(0, α − positive[b] + contrastive[b, r])`` over kept terms.

    positive ``(B,)``, contrastive ``(B, R)``, keep ``(B, R)`` bool or None.
    """
    terms = (margin - positive.unsqueeze(1) + contrastive).clamp(min=0.0)
    if keep is not None:
        terms = terms * keep
    return terms.sum()


def _check(
    images: Tensor | None,
    sentences: Mapping[str, Tensor],
    contrastive: str,
    negatives: ContrastiveSet | None,
    image_ids: Tensor | None,
    reduction: str,
    where: str,
) -> int:
    """Validate shapes and modes; return the batch size."""
    if contrastive not in CONTRASTIVE_MODES:
        raise InputError(where, f"contrastive={contrastive!r} is not one of {', '.join(CONTRASTIVE_MODES)}")
    if reduction not in REDUCTIONS:
        raise InputError(where, f"reduction={reduction!r} is not one of {', '.join(REDUCTIONS)}")
    if not sentences:
        raise InputError(where, "no sentence embeddings given")
    shapes = {lang: tuple(v.shape) for lang, v in sentences.items()}
    if images is not None:
        shapes["<images>"] = tuple(images.shape)
    if len(set(shapes.values())) != 1 or len(next(iter(shapes.values()))) != 2:
        raise InputError(where, f"images and sentences must all be (B, D) of one shape, got {shapes}")
    batch, dim = next(iter(shapes.values()))
    if contrastive == "random":
        if image_ids is not None:
            raise InputError(
                where,
                "image_ids masks in-batch negatives; for random ones, exclude the "
                "same image when sampling (sample_contrastive_indices(group_ids=...))",
            )
        if negatives is None:
            raise InputError(
                where,
                "contrastive='random' (the paper's) needs the embedded contrastive "
                "examples (negatives=ContrastiveSet); use contrastive='in_batch' "
                "for in-batch negatives",
            )
        wanted = {"<images>": negatives.images} if images is not None else {}
        missing = [lang for lang in sentences if lang not in negatives.sentences]
        if missing:
            raise InputError(where, f"negatives has no contrastive sentences for {', '.join(missing)}")
        wanted.update({lang: negatives.sentences[lang] for lang in sentences})
        bad = {
            k: tuple(v.shape)
            for k, v in wanted.items()
            if v.dim() != 3 or v.shape[0] != batch or v.shape[2] != dim or v.shape[1] < 1
        }
        if bad:
            raise InputError(where, f"contrastive embeddings must be (B={batch}, R, D={dim}), got {bad}")
    elif image_ids is not None and tuple(image_ids.shape) != (batch,):
        raise InputError(where, f"image_ids must be ({batch},), got {tuple(image_ids.shape)}")
    return batch


def _contrastive_mask(image_ids: Tensor | None, batch: int, device: torch.device) -> Tensor:
    """``(B, B)`` True where row r may serve as a contrastive example for anchor b."""
    if image_ids is None:
        return ~torch.eye(batch, dtype=torch.bool, device=device)
    return image_ids.view(-1, 1) != image_ids.view(1, -1)


def _bidirectional(
    anchors_a: Tensor,
    anchors_b: Tensor,
    margin: float,
    contrastive: str,
    negatives_of_a: Tensor | None,
    negatives_of_b: Tensor | None,
    keep: Tensor | None,
) -> Tensor:
    """``Σ max(0, α − s(a, b) + s(a, b_r)) + Σ max(0, α − s(b, a) + s(b, a_r))``.

    anchors ``(B, D)``. Random mode: ``negatives_of_a`` ``(B, R, D)`` are the
    contrastive b's of each a (and vice versa). In-batch mode: the other rows,
    filtered by ``keep`` ``(B, B)``.
    """
    positive = (anchors_a * anchors_b).sum(dim=1)
    if contrastive == "random":
        a_vs_neg = torch.einsum("bd,brd->br", anchors_a, negatives_of_a)
        b_vs_neg = torch.einsum("bd,brd->br", anchors_b, negatives_of_b)
        return hinge(positive, a_vs_neg, margin) + hinge(positive, b_vs_neg, margin)
    scores = anchors_a @ anchors_b.T  # (B, B): s(a_b, b_r)
    return hinge(positive, scores, margin, keep) + hinge(positive, scores.T, margin, keep)


def _reduce(total: Tensor, batch: int, reduction: str) -> Tensor:
    return total / batch if reduction == "mean" else total


def image_sentence_loss(
    images: Tensor,
    sentences: Mapping[str, Tensor],
    *,
    margin: float = MARGIN,
    contrastive: str = "random",
    negatives: ContrastiveSet | None = None,
    image_ids: Tensor | None = None,
    reduction: str = "sum",
) -> Tensor:
    """Eq. (1), S_I, summed over every language.

    images ``(B, D)`` and sentences lang → ``(B, D)``: unit-norm embeddings, row b
    of each describing tuple b. ``reduction="sum"`` is the paper's sum; ``"mean"``
    divides by B (the relative weight of S_I and S_S is unchanged).
    """
    batch = _check(images, sentences, contrastive, negatives, image_ids, reduction, "image_sentence_loss")
    keep = _contrastive_mask(image_ids, batch, images.device) if contrastive == "in_batch" else None
    total = images.new_zeros(())
    for lang, v in sentences.items():
        neg_v = negatives.sentences[lang] if negatives is not None and contrastive == "random" else None
        neg_d = negatives.images if negatives is not None and contrastive == "random" else None
        # image anchors against contrastive sentences, sentence anchors against contrastive images
        total = total + _bidirectional(images, v, margin, contrastive, neg_v, neg_d, keep)
    return _reduce(total, batch, reduction)


def sentence_sentence_loss(
    sentences: Mapping[str, Tensor],
    *,
    margin: float = MARGIN,
    contrastive: str = "random",
    negatives: ContrastiveSet | None = None,
    image_ids: Tensor | None = None,
    reduction: str = "sum",
) -> Tensor:
    """Eq. (2), S_S, summed over every unordered pair of languages (zero for K = 1).

    sentences lang → ``(B, D)``; the pair {k, l} adds k-anchors against
    contrastive l-sentences and l-anchors against contrastive k-sentences.
    """
    batch = _check(None, sentences, contrastive, negatives, image_ids, reduction, "sentence_sentence_loss")
    first = next(iter(sentences.values()))
    keep = _contrastive_mask(image_ids, batch, first.device) if contrastive == "in_batch" else None
    total = first.new_zeros(())
    for k, l in combinations(sentences, 2):
        random_mode = negatives is not None and contrastive == "random"
        neg_l = negatives.sentences[l] if random_mode else None
        neg_k = negatives.sentences[k] if random_mode else None
        total = total + _bidirectional(sentences[k], sentences[l], margin, contrastive, neg_l, neg_k, keep)
    return _reduce(total, batch, reduction)


def multilingual_ranking_loss(
    images: Tensor,
    sentences: Mapping[str, Tensor],
    *,
    beta: float,
    margin: float = MARGIN,
    contrastive: str = "random",
    negatives: ContrastiveSet | None = None,
    image_ids: Tensor | None = None,
    reduction: str = "sum",
) -> RankingLoss:
    """Eq. (3): ``β·S_I + (1 − β)·S_S`` with 0 ≤ β ≤ 1.

    images ``(B, D)``, sentences lang → ``(B, D)`` (unit norm, row-aligned);
    negatives: the embedded contrastive set (random mode); image_ids ``(B,)``:
    in-batch mode only, rows sharing an image are not contrastive for each other.
    Returns the total and both terms (unweighted).
    """
    if not 0.0 <= beta <= 1.0:
        raise InputError("multilingual_ranking_loss(beta)", f"β must lie in [0, 1], got {beta}")
    opts = dict(margin=margin, contrastive=contrastive, negatives=negatives, image_ids=image_ids, reduction=reduction)
    s_i = image_sentence_loss(images, sentences, **opts)
    s_s = sentence_sentence_loss(sentences, **opts)
    return RankingLoss(beta * s_i + (1.0 - beta) * s_s, s_i, s_s)


def sample_contrastive_indices(
    n: int, n_contrastive: int, *, generator: torch.Generator, group_ids: Tensor | None = None
) -> Tensor:
    """R random contrastive examples for each of n training tuples (one epoch's draw).

    Uniform over the other tuples, with replacement across the R draws; tuples
    of the same group (``group_ids`` ``(n,)``, e.g. the image id) are never
    contrastive for each other. Call once per epoch with the epoch's generator
    (the paper resamples every epoch). Returns ``(n, R)`` int64.
    """
    where = "sample_contrastive_indices"
    if n_contrastive < 1:
        raise InputError(where, f"n_contrastive must be at least 1, got {n_contrastive}")
    groups = torch.arange(n) if group_ids is None else group_ids.reshape(-1).cpu()
    if len(groups) != n:
        raise InputError(where, f"group_ids has {len(groups)} entries for {n} tuples")
    _, inverse, counts = torch.unique(groups, return_inverse=True, return_counts=True)
    if n == 0 or bool((counts[inverse] == n).any()):
        raise InputError(where, "some tuple has no tuple of another group to contrast with")
    draws = torch.randint(0, n, (n, n_contrastive), generator=generator)
    clash = groups[draws] == groups.view(-1, 1)
    while bool(clash.any()):  # redraw same-group picks; expected few rounds
        draws[clash] = torch.randint(0, n, (int(clash.sum()),), generator=generator)
        clash = groups[draws] == groups.view(-1, 1)
    return draws
