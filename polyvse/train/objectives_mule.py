"""Training objectives of MULE (Kim et al. AAAI 2020) with its ablations, of
the PARALLEL-EmbN baseline, and of LIWE: (model, batch) → named loss terms,
the term ``loss`` is optimised (see :mod:`polyvse.train.objectives`).

MULE eq. (4): ``θ = argmin λ1 L_LM − λ2 L_LC + λ3 L_triplet`` and
``W_lc = argmin λ2 L_LC``. With the gradient reversal layer in front of the
language classifier both are one loss, ``L_triplet + λ1 L_LM + λ2 L_LC``,
whose gradient into the universal embedding is reversed and scaled by the DANN
weight λ_p of the training progress. Weights where the paper is silent are
those of MULE's public code: margin 0.05, top-10 violations, image-loss
(sentence-anchored) factor 1.5, sentence-only (neighbourhood) factor 0.05,
language classifier ("domain adapt") 1e-6 on Multi30K, 1e-5 on MSCOCO.

The matching loss (eq. 3) keeps every triplet inside one language
(:func:`~polyvse.losses.triplet.same_language_triplet`): "given f_i, we sample
[a] positive sentence s_i+ and a negative sentence s_i- represented in the
same language"; the neighbourhood constraints (eq. 1) take positives and
negatives of any language. LP (:class:`MULEPretrainObjective`) has no
matching term.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from polyvse.losses.triplet import multimodal_triplet, neighbourhood_triplet, same_language_triplet, top_k_triplet
from polyvse.models.gradient_reversal import dann_lambda
from polyvse.train.objectives import EmbNObjective


def language_terms(model: nn.Module, universal: Tensor, langs: Tensor, progress: float) -> dict[str, Tensor]:
    """Cross-entropy of the adversarial language classifier on u (MULE eq. 2),
    behind gradient reversal weighted by ``dann_lambda(progress)``."""
    weight = dann_lambda(progress)
    logits = model.language_logits(universal, weight)
    ce = nn.functional.cross_entropy(logits, langs)
    accuracy = (logits.detach().argmax(dim=1) == langs).float().mean()
    return {"language": ce, "language_accuracy": accuracy, "reversal_weight": torch.tensor(weight)}


@dataclass
class MULEObjective:
    """MULE's full loss; the flags give the rows of MULE Tables 2(d), 3(c).

    - ``EmbN``: ``universal_nc=False, language_classifier=False`` — the EmbN
      loss of :class:`~polyvse.train.objectives.EmbNObjective` (same-language
      image–sentence triplet, eq. 3, + neighbourhood constraints on s) on the
      MULE architecture;
    - ``+NC``: ``universal_nc=True`` — the *multi-layer* neighbourhood
      constraints, eq. (1), on s and on the MULE averages u;
    - ``+NC+LC``: also ``language_classifier=True``;
    - ``+NC+LC+LP``: the same objective after :class:`MULEPretrainObjective`.

    ``progress`` ∈ [0, 1] (fraction of training done) is set by the training
    loop; it drives the DANN weight of the reversed gradient.
    """

    margin: float = 0.05
    top_k: int = 10
    sentence_weight: float = 1.5
    neighbourhood_weight: float = 0.05
    adversarial_weight: float = 1e-6
    final_nc: bool = True
    universal_nc: bool = True
    language_classifier: bool = True
    progress: float = 0.0

    def __call__(self, model: nn.Module, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        ios, langs = batch["image_of_sentence"], batch["lang"]
        images = model.embed_images(batch["images"])
        universal, sentences = model.encode(batch["tokens"], batch["lengths"], langs)
        mm = same_language_triplet(images, sentences, ios, langs, self.margin, self.top_k, self.sentence_weight)
        terms = {"multimodal": mm}
        loss = mm
        if self.final_nc:
            terms["neighbourhood_final"] = neighbourhood_triplet(sentences, ios, self.margin, self.top_k)
            loss = loss + self.neighbourhood_weight * terms["neighbourhood_final"]
        if self.universal_nc:
            terms["neighbourhood_universal"] = neighbourhood_triplet(universal, ios, self.margin, self.top_k)
            loss = loss + self.neighbourhood_weight * terms["neighbourhood_universal"]
        if self.language_classifier:
            terms.update(language_terms(model, universal, langs, self.progress))
            loss = loss + self.adversarial_weight * terms["language"]
        return {"loss": loss, **terms}


def cross_language_positives(image_of_sentence: Tensor, langs: Tensor) -> tuple[Tensor, Tensor]:
    """(positive, ignore) ``(S, S)`` bool masks for LP pretraining: sentences of
    the same image in another language are positives; the same sentence and
    same-image sentences of the same language are neither positive nor negative."""
    same_image = image_of_sentence.unsqueeze(0) == image_of_sentence.unsqueeze(1)
    other_lang = langs.unsqueeze(0) != langs.unsqueeze(1)
    positive = same_image & other_lang
    return positive, same_image & ~other_lang


@dataclass
class MULEPretrainObjective:
    """LP, MULE's pretraining: "pretraining MULE with paired sentences" aligns
    the language FC layers across languages before full training — the
    neighbourhood triplet (eq. 1, its u part) on the MULE averages u, positives
    = sentences of the same image in different languages. Only parameters
    below the universal embedding receive gradients
    (``model.universal_parameters()``)."""

    margin: float = 0.05
    top_k: int = 10

    def __call__(self, model: nn.Module, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        universal = model.encode_universal(batch["tokens"], batch["lengths"], batch["lang"])
        positive, ignore = cross_language_positives(batch["image_of_sentence"], batch["lang"])
        loss = top_k_triplet(universal, universal, positive, self.margin, self.top_k, ignore=ignore)
        return {"loss": loss, "neighbourhood_universal": loss}


ParallelEmbNObjective = EmbNObjective
"""PARALLEL-EmbN trains with EmbN's loss (the same-language image–sentence
triplet of MULE eq. 3, plus neighbourhood constraints between sentences of the
same image in any language): Gella et al.'s image-pivot model, whose language
branches meet only through the shared image branch and these constraints. It
is MULE's baseline (MULE §Experiments "Model Architecture"; MULE's code trains
it with its own matching loss, flag ``separate_lang_branch``)."""


@dataclass
class LIWEObjective:
    """LIWE's training loss: the bidirectional hinge of VSE++ that LIWE builds
    on, with the hardest negative only (``top_k = 1``) and margin 0.2, both
    directions weighted equally; no neighbourhood term. Negatives come from
    every language of the batch (:func:`multimodal_triplet`)."""

    margin: float = 0.2
    top_k: int = 1
    sentence_weight: float = 1.0

    def __call__(self, model: nn.Module, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        images = model.embed_images(batch["images"])
        sentences = model.embed_sentences(batch["tokens"], batch["lengths"], batch["lang"])
        mm = multimodal_triplet(
            images, sentences, batch["image_of_sentence"], self.margin, self.top_k, self.sentence_weight
        )
        return {"loss": mm, "multimodal": mm}
