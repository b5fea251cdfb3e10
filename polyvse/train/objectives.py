"""Training objectives: model + batch → named loss terms."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from polyvse.losses.triplet import multimodal_triplet, neighbourhood_triplet


@dataclass
class EmbNObjective:
    """SMALR eq. (3) plus the sentence–sentence neighbourhood term (SMALR §3.3,
    weight λ4 = 5e-2; MULE's public code weights it 0.05 as well).

    ``L = L_triplet(I, Q+, Q-) + λ1 · L_triplet(Q, I+, I-) + λ_nc · L_nc``
    """

    margin: float = 0.05
    top_k: int = 10
    sentence_weight: float = 1.5
    neighbourhood_weight: float = 0.05

    def __call__(self, model: nn.Module, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        img = model.embed_images(batch["images"])
        txt = model.embed_sentences(batch["tokens"], batch["lengths"], batch["lang"])
        mm = multimodal_triplet(img, txt, batch["image_of_sentence"], self.margin, self.top_k,
                                self.sentence_weight)
        nc = neighbourhood_triplet(txt, batch["image_of_sentence"], self.margin, self.top_k)
        return {"loss": mm + self.neighbourhood_weight * nc, "multimodal": mm, "neighbourhood": nc}
