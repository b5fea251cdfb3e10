"""Training objectives of SMALR (Burns et al. ECCV 2020): the latent-vocabulary
pretraining (§3.1) and the full loss of LA / HEM / SMALR (§3.2–3.3, eq. 4).

    L_SMALR = L_mm + λ2 L_mask + λ3 L_adv + λ4 L_nc,   λ2..4 = (1e-4, 1e-6, 5e-2)   (4)

- L_mm, eq. (3): bidirectional image–sentence triplet, λ1 = 1.5, on the
  unmasked sentences and (SMALR only) also on the MCLM-masked sentences;
- L_mask, eq. (2): MCLM on the universal embedding and on the final language
  representation (:mod:`polyvse.losses.mclm`);
- L_adv: MULE's adversarial language classifier on u, gradient reversal with
  the DANN weight of ``progress``;
- L_nc: neighbourhood constraints on u and on s (SMALR §3.3).

LA and HEM "do not include MCLM nor CLC": the same objective with ``mclm=False``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from polyvse.losses.mclm import masked_cross_language
from polyvse.losses.triplet import multimodal_triplet, neighbourhood_triplet
from polyvse.train.objectives_mule import language_terms


@dataclass
class LatentVocabularyObjective:
    """§3.1 pretraining: eq. (1) with cosine distance, m = 0.05, top-10 most
    violated constraints, positives = sentences of the same image in any
    language, on the mean latent embeddings of
    :class:`polyvse.models.latent_vocab.LatentVocabulary`.

    ``usage_weight`` (not in the paper; 0 disables it) adds ``w · (1 − H(π̄) / log N)``, π̄ the
    batch's mean assignment distribution over the N latent tokens
    (:meth:`~polyvse.models.latent_vocab.LatentVocabulary.sentences_and_usage`): the
    load-balancing term of hard-routing models, against the assignment's collapse."""

    margin: float = 0.05
    top_k: int = 10
    usage_weight: float = 0.0

    def __call__(self, model: nn.Module, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        if self.usage_weight <= 0:  # the paper's loss: no assignment distribution is needed
            sentences = model(batch["tokens"], batch["lengths"])
            loss = neighbourhood_triplet(sentences, batch["image_of_sentence"], self.margin, self.top_k)
            return {"loss": loss, "triplet": loss}
        sentences, usage = model.sentences_and_usage(batch["tokens"], batch["lengths"])
        loss = neighbourhood_triplet(sentences, batch["image_of_sentence"], self.margin, self.top_k)
        entropy = -(usage * torch.log(usage.clamp(min=1e-12))).sum() / math.log(usage.shape[0])
        return {
            "loss": loss + self.usage_weight * (1.0 - entropy),
            "triplet": loss,
            "usage_entropy": entropy.detach(),
        }


@dataclass
class SMALRObjective:
    """Eq. (4). ``mclm=False`` gives the LA and HEM objective.

    ``progress`` ∈ [0, 1] is set by the training loop (DANN weight);
    ``generator`` draws the MCLM masks (None: torch's global RNG, which the
    loop seeds per epoch).
    """

    margin: float = 0.05
    top_k: int = 10
    sentence_weight: float = 1.5
    mask_weight: float = 1e-4
    adversarial_weight: float = 1e-6
    neighbourhood_weight: float = 5e-2
    mclm: bool = True
    mask_rate: float = 0.2
    masked_multimodal: bool = True
    progress: float = 0.0
    generator: torch.Generator | None = field(default=None, repr=False, compare=False)

    def __call__(self, model: nn.Module, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        tokens, lengths, langs = batch["tokens"], batch["lengths"], batch["lang"]
        ios = batch["image_of_sentence"]
        images = model.embed_images(batch["images"])
        # the masked pass reuses the word features: only the masked positions change (looking the
        # words up again was a tenth of a SMALR step's ops, and on an accelerator a synchronisation)
        words = model.universal_words(tokens, lengths, langs)
        universal, sentences = model.encode_words(words, lengths)

        def encode_masked(mask: Tensor) -> tuple[Tensor, Tensor]:
            return model.encode_words(model.masked_words(words, mask), lengths)

        terms = {
            "multimodal": multimodal_triplet(images, sentences, ios, self.margin, self.top_k, self.sentence_weight)
        }
        loss = terms["multimodal"]
        if self.mclm:
            if not hasattr(model, "mclm_universal"):
                raise ValueError(
                    f"model family {getattr(model, 'family', '?')!r} has no MCLM heads; use SMALR or mclm=False"
                )
            out = masked_cross_language(
                encode_masked,
                model.mclm_universal,
                model.mclm_final,
                tokens,
                lengths,
                langs,
                ios,
                universal,
                sentences,
                self.mask_rate,
                self.generator,
                model.n_langs,
            )
            terms.update(
                {
                    "mask": out.loss,
                    "mask_universal": out.universal,
                    "mask_final": out.final,
                    "mask_pairs": torch.tensor(float(out.n_pairs)),
                }
            )
            loss = loss + self.mask_weight * out.loss
            if self.masked_multimodal:
                terms["multimodal_masked"] = multimodal_triplet(
                    images, out.masked_final, ios, self.margin, self.top_k, self.sentence_weight
                )
                loss = loss + terms["multimodal_masked"]
        terms.update(language_terms(model, universal, langs, self.progress))
        loss = loss + self.adversarial_weight * terms["language"]
        terms["neighbourhood_universal"] = neighbourhood_triplet(universal, ios, self.margin, self.top_k)
        terms["neighbourhood_final"] = neighbourhood_triplet(sentences, ios, self.margin, self.top_k)
        loss = loss + self.neighbourhood_weight * (terms["neighbourhood_universal"] + terms["neighbourhood_final"])
        return {"loss": loss, **terms}
