"""The top-K triplet loss of :mod:`polyvse.losses.triplet` on a given
similarity matrix instead of embeddings.

SMALR §3.4 trains CLC-C "using the multimodal triplet loss described in
Eq. (3)" on aggregated image–sentence *scores*, which are not cosines of two
embeddings, so the distance is ``d = 1 − score`` (the cosine distance when
the score is a cosine). The mining and averaging are those of
:func:`polyvse.losses.triplet.top_k_triplet`: every positive pair is a row,
its ``top_k`` most violated negatives are kept, and the loss is the mean over
the kept terms; tests check both agree on cosine scores.
"""

from __future__ import annotations

import torch
from torch import Tensor

from polyvse.losses.triplet import top_k_hinge


def top_k_triplet_distances(dist: Tensor, positive: Tensor, margin: float = 0.05, top_k: int = 10) -> Tensor:
    """Mean hinge over the ``top_k`` most violated negatives of every positive pair.

    dist ``(A, C)`` anchor–candidate distances; positive ``(A, C)`` bool.
    Every non-positive candidate is a negative. Scalar; zero without positives.
    """
    return top_k_hinge(dist, positive, ~positive, margin, top_k)


def multimodal_triplet_scores(
    scores: Tensor, image_of_query: Tensor, margin: float = 0.05, top_k: int = 10, sentence_weight: float = 1.5
) -> Tensor:
    """SMALR eq. (3) on a score matrix: ``scores (Q, N)`` query–image similarity,
    ``image_of_query (Q,)`` the column of each query's image.

    ``L = L(I, Q+, Q−) + sentence_weight · L(Q, I+, I−)`` with ``d = 1 − score``.
    """
    dist = 1.0 - scores
    pos = image_of_query.unsqueeze(1) == torch.arange(scores.shape[1], device=scores.device).unsqueeze(0)
    image_anchored = top_k_triplet_distances(dist.T, pos.T, margin, top_k)
    sentence_anchored = top_k_triplet_distances(dist, pos, margin, top_k)
    return image_anchored + sentence_weight * sentence_anchored
