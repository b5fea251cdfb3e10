"""Cross-Lingual Consistency (Burns et al. ECCV 2020, SMALR §3.4).

At test time a query in language l_i is translated into every other language
the model supports; the model scores every image against the query and each
translation, giving a score tensor ``(Q, L, N)``: query, language of the
(translated) query, image. CLC turns it into ``(Q, N)``:

- CLC-A averages the scores over languages (no parameters);
- CLC-C is a two-layer MLP over the |L| scores of a (query, image) pair,
  |L| → 32 → 1. "It has 352 learnable parameters" for |L| = 10, which is
  10·32 + 32·1: neither layer has a bias. It is trained on the validation set
  for 30 iterations, without mini-batches, with the multimodal triplet loss of
  eq. (3) (:func:`polyvse.losses.score_triplet.multimodal_triplet_scores`).

"All parameters are initialized with uniform weight": read as equal weights
(1/|L| in the first layer, 1/32 in the second), so that the untrained CLC-C
ranks exactly as CLC-A. With equal initial weights the hidden units receive
equal gradients and stay tied, so training learns one weight per language —
the "weighted ensemble" the paper describes. ``init="random"`` instead draws
every weight from U(0, 2/fan_in) (same mean), which lets the hidden units
differ. The MLP reads ``1 + score``: cosine scores lie in [−1, 1], so its
inputs are non-negative and the ReLU starts in its linear region; a constant
shift changes no ranking.

Where the paper is silent (its optimiser, any constraint), one choice keeps the
ensemble an ensemble: each row of both layers is the softmax of learned logits
(:class:`CLCClassifier`), non-negative and summing to one. The eq. (3) hinge is
lowest for a weak model when every score is equal (the loss sits at its margin),
so an unconstrained MLP learns to shrink its weights to zero or below and ties
every image; a convex combination cannot scale the scores away. And where every
language's scores help, the raw weights' gradients all share a sign: Adam, whose
first steps move each parameter by about its learning rate whatever the
gradient's size, then shifts all weights alike, and CLC-C stays CLC-A (with
weights renormalised after each step, exactly). The softmax's gradient is
centred over the languages, so the logits move apart by how much each language
helps. Adam at 0.1 on the logits, 30 iterations.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from polyvse.losses.score_triplet import multimodal_triplet_scores


def clc_average(scores: Tensor) -> Tensor:
    """CLC-A: ``(Q, L, N) -> (Q, N)``, the mean over the languages present (NaN = missing)."""
    if scores.dim() != 3:
        raise ValueError(f"CLC scores must be (Q, L, N), got shape {tuple(scores.shape)}")
    present = ~torch.isnan(scores)
    total = torch.where(present, scores, torch.zeros_like(scores)).sum(dim=1)
    n = present.sum(dim=1)
    if bool((n == 0).any()):
        raise ValueError("a query has no score in any language")
    return total / n


class CLCClassifier(nn.Module):
    """CLC-C: ``(Q, L, N) -> (Q, N)`` through ``ReLU(x W1ᵀ) W2ᵀ`` per (query, image).

    Each row of ``W1`` (``(hidden, L)``) and ``W2`` (``(1, hidden)``) is the softmax of its own
    logits (the learned parameters: 352 for ten languages), so every unit is a weighted average
    of its inputs and the whole MLP a weighted ensemble of the languages (module docstring).
    Zero logits are the paper's uniform initial weights."""

    def __init__(self, n_langs: int, hidden: int = 32, init: str = "uniform"):
        super().__init__()
        self.n_langs = n_langs
        if init not in ("uniform", "random"):
            raise ValueError(f"CLCClassifier(init): expected 'uniform' or 'random', got {init!r}")
        self.hidden_logits = nn.Parameter(torch.zeros(hidden, n_langs))
        self.out_logits = nn.Parameter(torch.zeros(1, hidden))
        if init == "random":
            with torch.no_grad():
                self.hidden_logits.uniform_(-1.0, 1.0)
                self.out_logits.uniform_(-1.0, 1.0)

    @property
    def hidden_weight(self) -> Tensor:
        """``W1`` ``(hidden, L)``: non-negative rows summing to one."""
        return torch.softmax(self.hidden_logits, dim=1)

    @property
    def out_weight(self) -> Tensor:
        """``W2`` ``(1, hidden)``: non-negative, summing to one."""
        return torch.softmax(self.out_logits, dim=1)

    def language_weights(self) -> Tensor:
        """``(L,)`` the ensemble's weight of each language, ``W2 W1`` (the MLP is linear on its
        non-negative inputs)."""
        return (self.out_weight @ self.hidden_weight).squeeze(0)

    def forward(self, scores: Tensor) -> Tensor:
        if scores.dim() != 3 or scores.shape[1] != self.n_langs:
            raise ValueError(f"CLC-C expects (Q, {self.n_langs}, N) scores, got {tuple(scores.shape)}")
        missing = torch.isnan(scores)
        if bool(missing.any()):
            scores = torch.where(missing, clc_average(scores).unsqueeze(1).expand_as(scores), scores)
        x = (1.0 + scores).permute(0, 2, 1)  # (Q, N, L)
        return (torch.relu(x @ self.hidden_weight.T) @ self.out_weight.T).squeeze(-1)

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())


def fit_clc(
    classifier: CLCClassifier,
    scores: Tensor,
    image_of_query: Tensor,
    iterations: int = 30,
    lr: float = 0.1,
    margin: float = 0.05,
    top_k: int = 10,
    sentence_weight: float = 1.5,
) -> list[float]:
    """Train CLC-C on validation scores ``(Q, L, N)`` with eq. (3), full batch.

    image_of_query: ``(Q,)`` the column of each query's image. Adam (the paper
    names no optimiser) on the logits of :class:`CLCClassifier`.
    Returns the loss before each iteration.
    """
    optimiser = torch.optim.Adam(classifier.parameters(), lr=lr)
    scores = scores.detach()
    losses = []
    classifier.train()
    for _ in range(iterations):
        loss = multimodal_triplet_scores(classifier(scores), image_of_query, margin, top_k, sentence_weight)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
    classifier.eval()
    return losses
