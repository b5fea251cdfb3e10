"""Training objectives: model + batch → named loss terms."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from polyvse.losses.triplet import neighbourhood_triplet, same_language_triplet


@dataclass
class EmbNObjective:
    """The image–sentence triplet of MULE eq. (3) plus the sentence–sentence
    neighbourhood term (SMALR §3.3, weight λ4 = 5e-2; MULE's public code
    weights it 0.05 as well).

    ``L = L_triplet(I, Q+, Q-) + λ1 · L_triplet(Q, I+, I-) + λ_nc · L_nc``

    EmbN and PARALLEL-EmbN are MULE's baselines: MULE §Experiments "Model
    Architecture" defines EmbN as "the multimodal network in Fig. 2", whose
    matching loss (§"Image-Language Matching") draws each negative in the
    positive's language, and PARALLEL-EmbN as EmbN with one language branch
    per language (MULE's public code trains it with the same loss, flag
    ``separate_lang_branch``); SMALR's EmbN / PAR. EmbN rows (Tables 1, 2 (a))
    are these prior-work models. So the triplet is
    :func:`~polyvse.losses.triplet.same_language_triplet`; on one language it
    is SMALR eq. (3) exactly. The neighbourhood term keeps positives and
    negatives of any language (MULE eq. 1; Gella et al.).
    """

    margin: float = 0.05
    top_k: int = 10
    sentence_weight: float = 1.5
    neighbourhood_weight: float = 0.05

    def __call__(self, model: nn.Module, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        img = model.embed_images(batch["images"])
        txt = model.embed_sentences(batch["tokens"], batch["lengths"], batch["lang"])
        mm = same_language_triplet(
            img, txt, batch["image_of_sentence"], batch["lang"], self.margin, self.top_k, self.sentence_weight
        )
        nc = neighbourhood_triplet(txt, batch["image_of_sentence"], self.margin, self.top_k)
        return {"loss": mm + self.neighbourhood_weight * nc, "multimodal": mm, "neighbourhood": nc}
