"""Triplet loss with random and hardest in-batch imposters (thesis §2.2.1, eq. 2.5–2.7).

For a batch of paired views X, Y with similarity ``S[i, j] = S(X_i, Y_j)``:

* eq. 2.5  ``Triplet(A, T, F) = max(0, S(A, F) - S(A, T) + M)``, M = 1;
* eq. 2.6  ``T_i = Triplet(X_i, Y_i, Y_imp) + Triplet(Y_i, X_i, X_imp)`` — both
  views take a turn as the anchor, which makes the loss symmetric in X and Y;
* eq. 2.7  the loss adds ``T_i`` with imposters drawn uniformly from the other
  items of the batch and ``T_i`` with the hardest imposters (the most similar
  non-matching item of the batch).

Eq. 2.7 sums over the dataset; over a minibatch we take the mean over the B
anchors so that the scale does not depend on the batch size (as DAVEnet does).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from polyvse.losses.similarity import check_square, similarity_matrix


def random_imposter_indices(
    batch_size: int, generator: torch.Generator | None = None, device: torch.device | str | None = None
) -> Tensor:
    """``(B,)`` long: for each i an index drawn uniformly from ``{0..B-1} \\ {i}``.

    ``i + U{1, B-1} mod B`` is uniform over the other items and never i.
    """
    if batch_size < 2:
        raise ValueError("random imposters need a batch of at least 2")
    shift = torch.randint(1, batch_size, (batch_size,), generator=generator, device=device)
    return (torch.arange(batch_size, device=device) + shift) % batch_size


def _hinge_both_anchors(sim: Tensor, y_imp: Tensor, x_imp: Tensor, margin: float) -> Tensor:
    """``(B,)``: Triplet(X_i, Y_i, Y_{y_imp[i]}) + Triplet(Y_i, X_i, X_{x_imp[i]})."""
    idx = torch.arange(sim.shape[0], device=sim.device)
    pos = sim.diagonal()
    x_anchor = (sim[idx, y_imp] - pos + margin).clamp(min=0.0)  # S(X_i, Y_imp)
    y_anchor = (sim[x_imp, idx] - pos + margin).clamp(min=0.0)  # S(X_imp, Y_i)
    return x_anchor + y_anchor


def imposter_triplet_loss(
    sim: Tensor,
    margin: float = 1.0,
    *,
    random_imposters: tuple[Tensor, Tensor] | None = None,
    generator: torch.Generator | None = None,
    use_random: bool = True,
    use_hardest: bool = True,
) -> Tensor:
    """Eq. 2.7 on a similarity matrix ``sim`` ``(B, B)``, ``sim[i, j] = S(X_i, Y_j)``.

    random_imposters: optional ``(y_imp, x_imp)``, each ``(B,)`` long, the random
    imposter of anchor X_i among the Y (``y_imp[i]``) and of anchor Y_i among the
    X (``x_imp[i]``); drawn with ``generator`` when not given.
    use_random / use_hardest select the two terms of eq. 2.7 (both by default).
    Returns the mean over the batch of the selected terms (a scalar); zero for B = 1.
    """
    b = check_square(sim)
    if not (use_random or use_hardest):
        raise ValueError("at least one of use_random / use_hardest must be set")
    if b < 2:
        return sim.sum() * 0.0
    per_item = sim.new_zeros(b)
    if use_random:
        if random_imposters is None:
            y_imp = random_imposter_indices(b, generator, device=sim.device)
            x_imp = random_imposter_indices(b, generator, device=sim.device)
        else:
            y_imp, x_imp = (t.to(sim.device) for t in random_imposters)
            idx = torch.arange(b, device=sim.device)
            if bool((y_imp == idx).any()) or bool((x_imp == idx).any()):
                raise ValueError("an imposter index equals its anchor's index")
        per_item = per_item + _hinge_both_anchors(sim, y_imp, x_imp, margin)
    if use_hardest:
        # the hardest imposter is the most similar non-matching item: mask the diagonal
        eye = torch.eye(b, dtype=torch.bool, device=sim.device)
        masked = sim.detach().masked_fill(eye, float("-inf"))
        y_hard = masked.argmax(dim=1)  # most similar Y for anchor X_i
        x_hard = masked.argmax(dim=0)  # most similar X for anchor Y_i
        per_item = per_item + _hinge_both_anchors(sim, y_hard, x_hard, margin)
    return per_item.mean()


class ImposterTripletLoss(nn.Module):
    """Eq. 2.7 on two embedding batches ``x``, ``y`` ``(B, D)`` (row i of each paired).

    similarity: ``"dot"`` (thesis §3.1.3) or ``"cosine"``; margin M = 1.
    """

    def __init__(
        self, margin: float = 1.0, similarity: str = "dot", use_random: bool = True, use_hardest: bool = True
    ) -> None:
        super().__init__()
        self.margin = margin
        self.similarity = similarity
        self.use_random = use_random
        self.use_hardest = use_hardest

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        sim = similarity_matrix(x, y, self.similarity)
        return imposter_triplet_loss(sim, self.margin, use_random=self.use_random, use_hardest=self.use_hardest)
