"""The word model families by name: build one from settings, and read the vocabulary a saved one names
(:mod:`polyvse.models.trained` rebuilds a trained model of any family)."""

from __future__ import annotations

from collections.abc import Mapping

from torch import nn

from polyvse.models.embn import EmbN, EmbNConfig
from polyvse.models.hem import HEM, SMALR, HEMConfig, LanguageAgnostic
from polyvse.models.liwe import LIWE, LIWEConfig
from polyvse.models.mule import MULE, MULEConfig
from polyvse.models.parallel_embn import ParallelEmbN, ParallelEmbNConfig
from polyvse.text.chars import CharVocabulary
from polyvse.text.reduction import DictionaryMappedVocabulary
from polyvse.text.vocab import Vocabulary

VOCABULARIES = {
    "words": Vocabulary,
    CharVocabulary.kind: CharVocabulary,
    DictionaryMappedVocabulary.kind: DictionaryMappedVocabulary,
}
"""Vocabulary classes by the ``kind`` their ``state_dict`` names (a plain word vocabulary names none)."""

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
    """A fresh model of ``family`` for ``vocab`` and ``image_dim``-D image features, from its
    config fields only (training builds models through :mod:`polyvse.train.families`, which
    also initialises word vectors and latent assignments)."""
    if family not in FAMILIES:
        raise KeyError(f"unknown model family {family!r}; known: {', '.join(FAMILIES)}")
    cls, cfg_cls = FAMILIES[family]
    return cls(cfg_cls(vocab_size=len(vocab), image_dim=image_dim, **options))


def vocabulary_from_state(state: Mapping) -> Vocabulary | CharVocabulary:
    """The vocabulary a checkpoint saved: words, characters (LIWE) or dictionary-mapped words."""
    kind = state.get("kind", "words")
    if kind not in VOCABULARIES:
        raise KeyError(f"unknown vocabulary kind {kind!r}; known: {', '.join(VOCABULARIES)}")
    return VOCABULARIES[kind].from_state_dict(dict(state))
