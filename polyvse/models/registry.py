"""Build a model family from settings, and rebuild a trained one from its file."""

from __future__ import annotations

from collections.abc import Mapping

from torch import nn

from polyvse.models.embn import EmbN, EmbNConfig
from polyvse.models.hem import HEM, SMALR, HEMConfig, LanguageAgnostic
from polyvse.models.liwe import LIWE, LIWEConfig
from polyvse.models.mule import MULE, MULEConfig
from polyvse.models.parallel_embn import ParallelEmbN, ParallelEmbNConfig
from polyvse.text.vocab import Vocabulary

FAMILIES = {
    "embn": (EmbN, EmbNConfig),
    "mule": (MULE, MULEConfig),
    "parallel_embn": (ParallelEmbN, ParallelEmbNConfig),
    "la": (LanguageAgnostic, HEMConfig),
    "hem": (HEM, HEMConfig),
    "smalr": (SMALR, HEMConfig),
    "liwe": (LIWE, LIWEConfig),
}


def build_model(family: str, vocab: Vocabulary, image_dim: int, options: Mapping) -> nn.Module:
    """A fresh model of ``family`` for ``vocab`` and ``image_dim``-D image features."""
    if family not in FAMILIES:
        raise KeyError(f"unknown model family {family!r}; known: {', '.join(FAMILIES)}")
    cls, cfg_cls = FAMILIES[family]
    return cls(cfg_cls(vocab_size=len(vocab), image_dim=image_dim, **options))


def model_from_checkpoint(saved: Mapping) -> tuple[nn.Module, Vocabulary]:
    """Rebuild (model, vocabulary) from the dict written by the train rule."""
    cls, cfg_cls = FAMILIES[saved["family"]]
    model = cls(cfg_cls(**saved["config"]))
    model.load_state_dict(saved["state_dict"])
    return model, Vocabulary.from_state_dict(saved["vocab"])
