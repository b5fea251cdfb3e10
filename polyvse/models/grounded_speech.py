"""The grounded-speech model: one image encoder and the language views' audio encoders
(thesis §2.4), embedding every view of a datapoint into one space.

View order is fixed: the image first, then the languages in config order
(``views(batch) -> [(B, D)] * (1 + L)``), so that the image anchor of §4.1 is view 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch import Tensor, nn

from polyvse.models.speech_encoders import (
    ImageEncoder,
    InternalSelfAttention,
    MHSAPool,
    SpeechEncoders,
    TransformerPool,
)

ENCODER_KEYS: tuple[str, ...] = (
    "pooling",
    "widths",
    "kernel",
    "convs_per_stage",
    "convs_per_residual",
    "lang_dim",
    "heads",
    "dropout",
    "use_cls",
    "ff_dim",
    "internal_attention",
    "length_rule",
)
"""Settings of ``speech.model`` that go to :func:`polyvse.models.speech_encoders.build_audio_encoder`."""


class GroundedSpeechModel(nn.Module):
    """Image encoder (precomputed CNN features → D) and audio encoders (log-Mel → D).

    D is the last audio width. ``config`` (kept for rebuilding from a checkpoint):
    ``langs``, ``image_dim``, ``image_input`` (vector | map), ``sharing``
    (none | basic | sequence | channel) and the :data:`ENCODER_KEYS`.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__()
        self.config = dict(config)
        self.langs = tuple(config["langs"])
        encoder_kwargs = {k: (tuple(config[k]) if k == "widths" else config[k]) for k in ENCODER_KEYS if k in config}
        self.audio = SpeechEncoders(self.langs, config.get("sharing", "none"), **encoder_kwargs)
        self.image = ImageEncoder(int(config["image_dim"]), self.audio.out_dim, config.get("image_input", "vector"))

    @property
    def embed_dim(self) -> int:
        return self.audio.out_dim

    def embed_images(self, feats: Tensor) -> Tensor:
        """``(B, F)`` (or ``(B, F, H, W)``) → ``(B, D)``."""
        return self.image(feats)

    def embed_speech(self, lang: str, feats: Tensor, lengths: Tensor) -> Tensor:
        """``(B, T, n_mels), (B,)`` → ``(B, D)``."""
        return self.audio(lang, feats, lengths)

    def views(self, batch: Mapping[str, Any]) -> list[Tensor]:
        """A batch of :meth:`polyvse.speech.data.ViewSet.batch` → ``[image, lang_1, …, lang_L]``, each ``(B, D)``
        (a shared audio encoder embeds the languages in one pass: :meth:`SpeechEncoders.embed_all`)."""
        speech = self.audio.embed_all({lang: batch["speech"][lang] for lang in self.langs})
        return [self.embed_images(batch["image"]), *(speech[lang] for lang in self.langs)]

    def attention_parameters(self) -> list[nn.Parameter]:
        """Parameters of the attention layers (MHSA / Transformer pooling, internal MHSA):
        the layers Tables 3.3–3.4 give their own learning rate."""
        kinds = (MHSAPool, TransformerPool, InternalSelfAttention)
        return [p for m in self.modules() if isinstance(m, kinds) for p in m.parameters()]

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())


def build_speech_model(model_settings: Mapping[str, Any], langs: Sequence[str], image_dim: int) -> GroundedSpeechModel:
    """A model from a variant's ``model`` settings (see ``polyvse.speech.settings.speech_variant_settings``)."""
    return GroundedSpeechModel({**dict(model_settings), "langs": list(langs), "image_dim": int(image_dim)})


def parameter_groups(model: GroundedSpeechModel, lr: float, attention_lr: float | None) -> list[dict[str, Any]]:
    """Adam parameter groups: the attention layers at ``attention_lr`` (when given), the rest at ``lr``."""
    if attention_lr is None:
        return [{"params": list(model.parameters()), "lr": lr}]
    attention = model.attention_parameters()
    ids = {id(p) for p in attention}
    rest = [p for p in model.parameters() if id(p) not in ids]
    groups = [{"params": rest, "lr": lr}]
    if attention:
        groups.append({"params": attention, "lr": attention_lr})
    return groups
