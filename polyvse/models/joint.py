"""Written and spoken captions of several languages and images in one space (beyond the papers).

The thesis (speech_grounding_thesis_2021, §2.3–2.4) contrasts K views of a datapoint — an image
and one utterance per language — in a multiview framework; MULE (Kim et al. 2020, §3.1) maps the
words of every language into one universal embedding through language-specific FC layers and
reads sentences with one GRU above it. :class:`JointModel` puts both under one image encoder:
its views are the image, each language's spoken caption (the thesis' audio encoders) and each
language's written caption (:class:`UniversalTextEncoder`), and the thesis' framework chooses
which pairs of them a batch aligns (:mod:`polyvse.losses.multiview`).

The text branch is MULE's universal embedding rather than SMALR's latent vocabulary: SMALR's
vocabulary reduction targets ten languages of tens of thousands of words, the spoken data's
three languages have a few hundred words, and MULE's universal embedding is what SMALR builds on
(SMALR §3). Every view ends in a plain linear layer of the audio encoders' width D, with no
normalisation, as the thesis' image and audio encoders do, so that one dot-product objective
serves every pair.

View order: ``image``, ``speech-{lang}`` for the spoken languages, ``text-{lang}`` for the
written ones (the image is view 0, the image anchor of thesis §4.1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch import Tensor, nn

from polyvse.models.embn import final_state
from polyvse.models.mule import init_word_embeddings
from polyvse.models.speech_encoders import (
    ImageEncoder,
    InternalSelfAttention,
    MHSAPool,
    SpeechEncoders,
    TransformerPool,
)
from polyvse.models.grounded_speech import ENCODER_KEYS

IMAGE_VIEW = "image"


def speech_view(lang: str) -> str:
    return f"speech-{lang}"


def text_view(lang: str) -> str:
    return f"text-{lang}"


class UniversalTextEncoder(nn.Module):
    """Sentences of several languages → ``(S, D)`` (MULE §3.1's universal embedding, then a GRU).

    Word table ``(V, word_dim)`` over the joint (language, word) vocabulary (FastText when
    given), a language-specific FC into the universal space ``universal_dim``, one GRU over
    the universal word features shared by every language, its state after the last valid
    token, dropout and a linear map to D.
    """

    def __init__(
        self,
        vocab_size: int,
        n_langs: int,
        word_dim: int,
        universal_dim: int,
        gru_hidden: int,
        out_dim: int,
        dropout: float,
        word_vectors: Tensor | None = None,
    ) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, word_dim, padding_idx=0)
        init_word_embeddings(self.word_embeddings, word_vectors, "UniversalTextEncoder(word_vectors)")
        self.language_fc = nn.ModuleList(nn.Linear(word_dim, universal_dim) for _ in range(n_langs))
        self.gru = nn.GRU(universal_dim, gru_hidden, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(gru_hidden, out_dim)

    def forward(self, tokens: Tensor, lengths: Tensor, lang: int) -> Tensor:
        """``(S, T)`` token ids of one language (index ``lang``), ``(S,)`` lengths → ``(S, D)``."""
        words = self.language_fc[lang](self.word_embeddings(tokens))  # (S, T, U)
        return self.fc(self.dropout(final_state(self.gru, words, lengths)))


class JointModel(nn.Module):
    """One image encoder, the thesis' audio encoders of ``speech_langs`` and a universal text
    encoder of ``text_langs``, all into D = the last audio width.

    ``config`` (kept for rebuilding from a checkpoint): ``image_dim``, ``image_input``,
    ``speech_langs``, ``sharing`` and the speech :data:`~polyvse.models.grounded_speech.ENCODER_KEYS`;
    ``text_langs``, ``vocab_size``, ``word_dim``, ``universal_dim``, ``gru_hidden``,
    ``text_dropout``. Either language list may be empty (the separately trained text-only
    and speech-only models), not both.
    """

    family = "joint"

    def __init__(self, config: Mapping[str, Any], word_vectors: Tensor | None = None) -> None:
        super().__init__()
        self.config = dict(config)
        self.speech_langs = tuple(config.get("speech_langs") or ())
        self.text_langs = tuple(config.get("text_langs") or ())
        if not self.speech_langs and not self.text_langs:
            raise ValueError("a joint model needs spoken or written languages (speech_langs, text_langs)")
        dim = int(config["widths"][-1])
        self.audio: SpeechEncoders | None = None
        if self.speech_langs:
            kwargs = {k: (tuple(config[k]) if k == "widths" else config[k]) for k in ENCODER_KEYS if k in config}
            self.audio = SpeechEncoders(self.speech_langs, config.get("sharing", "none"), **kwargs)
            dim = self.audio.out_dim
        self.dim = dim
        self.image = ImageEncoder(int(config["image_dim"]), dim, config.get("image_input", "vector"))
        self.text: UniversalTextEncoder | None = None
        if self.text_langs:
            self.text = UniversalTextEncoder(
                int(config["vocab_size"]),
                len(self.text_langs),
                int(config["word_dim"]),
                int(config["universal_dim"]),
                int(config["gru_hidden"]),
                dim,
                float(config["text_dropout"]),
                word_vectors,
            )

    @property
    def embed_dim(self) -> int:
        return self.dim

    @property
    def view_names(self) -> list[str]:
        """``image``, ``speech-{lang}`` …, ``text-{lang}`` …: the order of :meth:`views`."""
        return [IMAGE_VIEW, *map(speech_view, self.speech_langs), *map(text_view, self.text_langs)]

    def embed_images(self, feats: Tensor) -> Tensor:
        """``(B, F)`` → ``(B, D)``."""
        return self.image(feats)

    def embed_speech(self, lang: str, feats: Tensor, lengths: Tensor) -> Tensor:
        """``(B, T, n_mels), (B,)`` → ``(B, D)``."""
        if self.audio is None:
            raise KeyError(f"this model has no spoken languages; {lang!r} asked")
        return self.audio(lang, feats, lengths)

    def embed_text(self, lang: str, tokens: Tensor, lengths: Tensor) -> Tensor:
        """``(S, T)`` token ids, ``(S,)`` lengths → ``(S, D)``."""
        if self.text is None or lang not in self.text_langs:
            raise KeyError(f"no written language {lang!r} in this model; it has {list(self.text_langs)}")
        return self.text(tokens, lengths, self.text_langs.index(lang))

    def views(self, batch: Mapping[str, Any]) -> list[Tensor]:
        """``{"image": (B, F), "speech": {lang: (x, lengths)}, "text": {lang: (tokens, lengths)}}``
        → one ``(B, D)`` per view, in :attr:`view_names` order."""
        out = [self.embed_images(batch["image"])]
        if self.audio is not None:
            # a shared audio encoder embeds the languages in one pass (SpeechEncoders.embed_all)
            speech = self.audio.embed_all({lang: batch["speech"][lang] for lang in self.speech_langs})
            out.extend(speech[lang] for lang in self.speech_langs)
        for lang in self.text_langs:
            out.append(self.embed_text(lang, *batch["text"][lang]))
        return out

    def attention_parameters(self) -> list[nn.Parameter]:
        """The attention layers' parameters (their own learning rate, thesis Tables 3.3–3.4)."""
        kinds = (MHSAPool, TransformerPool, InternalSelfAttention)
        return [p for m in self.modules() if isinstance(m, kinds) for p in m.parameters()]

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())


def build_joint_model(
    settings: Mapping[str, Any],
    speech_langs: Sequence[str],
    text_langs: Sequence[str],
    image_dim: int,
    vocab_size: int,
    word_vectors: Tensor | None = None,
) -> JointModel:
    """A fresh model from a joint variant's ``model`` settings (speech encoder keys + text sizes)."""
    text = settings.get("text") or {}
    config = {k: v for k, v in settings.items() if k != "text"}
    config.update(
        speech_langs=list(speech_langs),
        text_langs=list(text_langs),
        image_dim=int(image_dim),
        vocab_size=int(vocab_size),
        word_dim=int(word_vectors.shape[1]) if word_vectors is not None else int(text.get("word_dim", 300)),
        universal_dim=int(text.get("universal_dim", 512)),
        gru_hidden=int(text.get("gru_hidden", 1024)),
        text_dropout=float(text.get("dropout", 0.1)),
    )
    return JointModel(config, word_vectors)
