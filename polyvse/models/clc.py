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
ensemble an ensemble: after every step each layer's weights are projected back
to non-negative rows that sum to one (:meth:`CLCClassifier.project`). The eq. (3)
hinge is lowest for a weak model when every score is equal (the loss sits at its
margin), so an unconstrained MLP learns to shrink its weights to zero or below
and ties every image; the projection rules that out (a convex combination cannot
scale the scores away), so a learning rate large enough to move the weights
within the 30 iterations (Adam 1e-2) is safe. A smaller one (1e-3) moves each
weight by at most ~0.03 and leaves CLC-C ranking as CLC-A.

Missing translations may be given as NaN: CLC-A averages the languages
present, CLC-C replaces a missing score by that mean.
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
    """CLC-C: ``(Q, L, N) -> (Q, N)`` through ``ReLU(x W1ᵀ) W2ᵀ`` per (query, image)."""

    def __init__(self, n_langs: int, hidden: int = 32, init: str = "uniform"):
        super().__init__()
        self.n_langs = n_langs
        self.hidden = nn.Linear(n_langs, hidden, bias=False)
        self.out = nn.Linear(hidden, 1, bias=False)
        with torch.no_grad():
            if init == "uniform":
                self.hidden.weight.fill_(1.0 / n_langs)
                self.out.weight.fill_(1.0 / hidden)
            elif init == "random":
                self.hidden.weight.uniform_(0.0, 2.0 / n_langs)
                self.out.weight.uniform_(0.0, 2.0 / hidden)
            else:
                raise ValueError(f"CLCClassifier(init): expected 'uniform' or 'random', got {init!r}")

    def forward(self, scores: Tensor) -> Tensor:
        if scores.dim() != 3 or scores.shape[1] != self.n_langs:
            raise ValueError(f"CLC-C expects (Q, {self.n_langs}, N) scores, got {tuple(scores.shape)}")
        missing = torch.isnan(scores)
        if bool(missing.any()):
            scores = torch.where(missing, clc_average(scores).unsqueeze(1).expand_as(scores), scores)
        x = (1.0 + scores).permute(0, 2, 1)  # (Q, N, L)
        return self.out(torch.relu(self.hidden(x))).squeeze(-1)

    @torch.no_grad()
    def project(self) -> None:
        """Each row of both layers onto the probability simplex's face: weights clipped at 0,
        then divided by their sum (a row that clipped to all zeros becomes uniform)."""
        for layer in (self.hidden, self.out):
            w = layer.weight.clamp_(min=0.0)
            total = w.sum(dim=1, keepdim=True)
            w.copy_(torch.where(total > 0, w / total.clamp(min=1e-12), torch.full_like(w, 1.0 / w.shape[1])))

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())


def fit_clc(classifier: CLCClassifier, scores: Tensor, image_of_query: Tensor, iterations: int = 30,
            lr: float = 1e-2, margin: float = 0.05, top_k: int = 10, sentence_weight: float = 1.5) -> list[float]:
    """Train CLC-C on validation scores ``(Q, L, N)`` with eq. (3), full batch.

    image_of_query: ``(Q,)`` the column of each query's image. Adam (the paper
    names no optimiser), each step followed by :meth:`CLCClassifier.project`.
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
        classifier.project()
        losses.append(float(loss.detach()))
    classifier.eval()
    return losses
