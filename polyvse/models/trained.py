"""A trained model's file: one loader for every family.

Every training writes ``model.pt`` as one dict (:func:`polyvse.io.save_torch` of its result's
``saved()``): the model's ``family``, what rebuilds its architecture (``config``, or the Translator's
``sizes``), its ``state_dict``, its vocabulary's state where it reads words, and what its training
recorded (best epoch, validation score, settings). :func:`load_model` turns any of them back into
the model and its vocabulary; a caller that needs more of the record reads it from the dict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from polyvse.models.grounded_speech import GroundedSpeechModel
from polyvse.models.joint import JointModel
from polyvse.models.mlmme import MLMME, MLMMEConfig
from polyvse.models.registry import FAMILIES, vocabulary_from_state
from polyvse.models.translator import build_source_model, build_translator_model
from polyvse.text.chars import CharVocabulary
from polyvse.text.vocab import Vocabulary

TrainedModel = tuple[nn.Module, Vocabulary | CharVocabulary | None]


def _word_model(saved: Mapping[str, Any]) -> TrainedModel:
    """The word families of :data:`polyvse.models.registry.FAMILIES`; the frozen mappings of LA / HEM /
    SMALR are buffers of the state dict."""
    cls, cfg_cls = FAMILIES[saved["family"]]
    model = cls(cfg_cls(**saved["config"]))
    model.load_state_dict(saved["state_dict"])
    return model, vocabulary_from_state(saved["vocab"])


def _speech_model(saved: Mapping[str, Any]) -> TrainedModel:
    """The thesis' grounded-speech model, in eval mode (it hears, it reads no words)."""
    model = GroundedSpeechModel(saved["config"])
    model.load_state_dict(saved["state_dict"])
    model.eval()
    return model, None


def _joint_model(saved: Mapping[str, Any]) -> TrainedModel:
    """Images, speech and (where it has written languages) text in one space, in eval mode."""
    model = JointModel(saved["config"])
    model.load_state_dict(saved["state_dict"])
    model.eval()
    return model, Vocabulary.from_state_dict(saved["vocab"]) if saved.get("vocab") else None


def _mlmme(saved: Mapping[str, Any]) -> TrainedModel:
    model = MLMME(MLMMEConfig(**saved["config"]))
    model.load_state_dict(saved["state_dict"])
    return model, Vocabulary.from_state_dict(saved["vocab"])


def _translator(saved: Mapping[str, Any]) -> TrainedModel:
    """The Translator's source model or a target model of protocol FS, T1 or T2."""
    sizes = dict(saved["sizes"])
    vectors = torch.zeros(*saved["vectors_shape"])
    protocol = saved["protocol"]
    if protocol in ("source", "FS"):
        kw = dict(
            gru_hidden=sizes["gru_hidden"],
            joint_dim=sizes["joint_dim"],
            dropout=sizes["dropout"],
            freeze_embeddings=sizes["freeze_embeddings"],
        )
        model = (
            build_source_model(vectors, saved["image_dim"], **kw)
            if protocol == "source"
            else build_translator_model("FS", vectors, image_dim=saved["image_dim"], image_branch="random", **kw)
        )
    else:  # T1 and T2 share one architecture: a Translator before a source-shaped encoder
        shell = build_source_model(
            torch.zeros(2, saved["source_dim"]),
            saved["image_dim"],
            gru_hidden=sizes["gru_hidden"],
            joint_dim=sizes["joint_dim"],
        )
        model = build_translator_model(
            "T1",
            vectors,
            source_model=shell,
            dropout=sizes["dropout"],
            freeze_embeddings=sizes["freeze_embeddings"],
            image_branch="random",
        )
        model.protocol = protocol
    model.load_state_dict(saved["state_dict"])  # every weight, the image branch's too: the shell's init is moot
    return model, Vocabulary.from_state_dict(saved["vocab"])


LOADERS: dict[str, Callable[[Mapping[str, Any]], TrainedModel]] = {
    **dict.fromkeys(FAMILIES, _word_model),
    "grounded_speech": _speech_model,
    "joint": _joint_model,
    "mlmme": _mlmme,
    "translator": _translator,
}
"""The loader of each ``family`` a ``model.pt`` names."""


def load_model(saved: Mapping[str, Any]) -> TrainedModel:
    """``(model, vocabulary)`` rebuilt from the dict a training wrote to ``model.pt``; the vocabulary is
    None for a model that reads no words (a speech model, a joint model without written languages).

    Raises KeyError naming the family when ``saved`` is no trained model's dict.
    """
    family = saved.get("family") if isinstance(saved, Mapping) else None
    if family not in LOADERS:
        raise KeyError(f"not a trained model (family {family!r}); known families: {', '.join(LOADERS)}")
    return LOADERS[family](saved)
