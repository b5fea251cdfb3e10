"""Translator inside VSE: the FS / T1 / T2 protocols of the Translator poster (§2–3).

The text branch of the target-language model is

    target subword embeddings t → M (the Translator, a bias-free linear map
    into the source language's word space) → text encoder f → joint space,

scored against the image branch g with ``s(i, t) = ⟨f(M t)/‖·‖, g(i)/‖·‖⟩`` and
VSE's bidirectional hinge (poster §2 "Training"). Protocols (poster §3):

- ``FS``: target subword embeddings + text encoder, randomly initialised (no M);
- ``T1``: + Translator, randomly initialised, + text encoder initialised with
  the source-language model's weights;
- ``T2``: + Translator initialised with SVD + RCSLS
  (:mod:`polyvse.align`), + text encoder initialised from the source model.

The subword embeddings are pretrained FastText vectors (poster ref. [1]) and
stay frozen by default; M and the encoders train.

Image branch (``image_branch``, config ``translator.image_branch``): the same
for all three protocols, so that the curves compare the *text*-side
initialisations only. ``source`` (the default) copies the trained source
model's image branch g into every protocol, FS included; ``random`` starts
every protocol from one seeded random g (Calixto et al. §4's initialisation,
drawn from ``image_seed`` alone, so the three get identical weights). Why
``source`` is the poster's setting: §3 varies "three protocols on the text
branch" only, so the image branch must be common to FS, T1 and T2, and the
poster's premise (§1, Figure 1) is vision "as the shared modality", the target
language "grounded by consistent visual signals" — the source model's g. T1/T2
also start their text encoder from the source model, whose joint space is only
meaningful next to the g it was trained with. The poster does not name the
image branch's initialisation in so many words; ``random`` is the alternative
reading (a standard VSE, Figure 2, started afresh apart from the text side).

A random Translator is a random (semi-)orthogonal matrix by default, the same
scale as the SVD solution, so that T1 and T2 differ in M's information, not its
norm; ``random_translator="default"`` uses PyTorch's Linear initialisation.

The text encoder is MLMME's/VSE's GRU encoder (:mod:`polyvse.models.mlmme`):
the state after the last valid token, a linear map, L2 normalisation.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from numpy.typing import ArrayLike
from torch import Tensor, nn

from polyvse.errors import InputError
from polyvse.models.mlmme import PAD, ImageEncoder, RecurrentEncoder, init_paper_weights, l2_normalize

PROTOCOLS: tuple[str, ...] = ("FS", "T1", "T2")
RANDOM_TRANSLATORS: tuple[str, ...] = ("orthogonal", "default")
IMAGE_BRANCHES: tuple[str, ...] = ("source", "random")


def _as_vectors(vectors: ArrayLike | Tensor, where: str) -> Tensor:
    t = torch.as_tensor(
        np.asarray(vectors) if not isinstance(vectors, Tensor) else vectors, dtype=torch.get_default_dtype()
    )
    if t.dim() != 2 or t.shape[0] < 2 or t.shape[1] < 1:
        raise InputError(
            where, f"expected a (V, d) word-vector matrix with row {PAD} for padding, got shape {tuple(t.shape)}"
        )
    if not torch.isfinite(t).all():
        raise InputError(where, "word vectors contain NaN or infinite values")
    return t


class TranslatorTextEncoder(nn.Module):
    """Pretrained word vectors → optional Translator M → :class:`RecurrentEncoder` → unit norm.

    tokens ``(B, T)`` (row ids of the vector matrix, 0 = padding), lengths ``(B,)``
    → ``(B, joint_dim)``. M is an ``nn.Linear(d_t, d_s, bias=False)``, so its
    weight is the poster's M ``(d_s, d_t)``.
    """

    def __init__(
        self,
        word_vectors: Tensor,
        encoder: RecurrentEncoder,
        translator: nn.Linear | None = None,
        freeze_embeddings: bool = True,
    ):
        super().__init__()
        self.embed = nn.Embedding.from_pretrained(word_vectors.clone(), freeze=freeze_embeddings, padding_idx=PAD)
        self.translator = translator
        self.encoder = encoder
        expected = translator.out_features if translator is not None else word_vectors.shape[1]
        if translator is not None and translator.in_features != word_vectors.shape[1]:
            raise InputError(
                "TranslatorTextEncoder(translator)",
                f"M takes {translator.in_features}-D vectors, the word vectors are {word_vectors.shape[1]}-D",
            )
        if encoder.gru.input_size != expected:
            raise InputError(
                "TranslatorTextEncoder(encoder)",
                f"the encoder reads {encoder.gru.input_size}-D inputs, it would get {expected}-D",
            )

    def forward(self, tokens: Tensor, lengths: Tensor) -> Tensor:
        x = self.embed(tokens)
        if self.translator is not None:
            x = self.translator(x)  # M t for every token
        return l2_normalize(self.encoder(x, lengths))


class TranslatorVSE(nn.Module):
    """A VSE model with a Translator text branch; ``protocol`` is ``source``
    (the source-language model) or one of :data:`PROTOCOLS`."""

    family = "translator"

    def __init__(self, text: TranslatorTextEncoder, image: ImageEncoder, protocol: str):
        super().__init__()
        self.text = text
        self.image = image
        self.protocol = protocol

    def embed_images(self, features: Tensor) -> Tensor:
        """``(B, image_dim) → (B, joint_dim)``, unit norm: g(i)/‖g(i)‖."""
        return self.image(features)

    def embed_sentences(self, tokens: Tensor, lengths: Tensor, langs: Tensor | None = None) -> Tensor:
        """``(S, T), (S,) → (S, joint_dim)``, unit norm: f(M t)/‖·‖. One language; ``langs`` is unused."""
        return self.text(tokens, lengths)

    @property
    def translator_matrix(self) -> Tensor | None:
        """The current M ``(d_s, d_t)``, or None for FS and source models."""
        return None if self.text.translator is None else self.text.translator.weight

    def parameter_counts(self) -> tuple[int, int]:
        """(train-time, test-time) parameters. Test time leaves out the word
        vectors (a lookup); the frozen vectors are not trained either."""
        train = sum(p.numel() for p in self.parameters() if p.requires_grad)
        table = self.text.embed.weight.numel()
        test = sum(p.numel() for p in self.parameters()) - table
        return train, test


def build_source_model(
    word_vectors: ArrayLike | Tensor,
    image_dim: int,
    *,
    gru_hidden: int = 1024,
    joint_dim: int = 1024,
    dropout: float = 0.0,
    init_std: float = 0.01,
    freeze_embeddings: bool = True,
) -> TranslatorVSE:
    """The source-language VSE model (de in the poster) that T1/T2 start from.

    word_vectors ``(V_s, d_s)``: pretrained subword embeddings (row 0 padding).
    Initialised as Calixto et al. §4 / Kiros et al. (see :func:`init_paper_weights`).
    """
    vectors = _as_vectors(word_vectors, "build_source_model(word_vectors)")
    encoder = RecurrentEncoder(vectors.shape[1], gru_hidden, joint_dim, dropout)
    image = ImageEncoder(image_dim, joint_dim, dropout)
    init_paper_weights(encoder, init_std)
    init_paper_weights(image, init_std)
    return TranslatorVSE(TranslatorTextEncoder(vectors, encoder, None, freeze_embeddings), image, "source")


def random_image_branch(
    image_dim: int, joint_dim: int, dropout: float, init_std: float = 0.01, seed: int = 0
) -> ImageEncoder:
    """A freshly initialised image branch g ``(B, image_dim) → (B, joint_dim)`` (Calixto et
    al. §4 weights, :func:`init_paper_weights`), drawn from its own generator seeded with
    ``seed``: the same weights whatever was drawn before, and the global RNG is left as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        image = ImageEncoder(image_dim, joint_dim, dropout)
        init_paper_weights(image, init_std)
    return image


def _random_translator(d_t: int, d_s: int, kind: str) -> nn.Linear:
    layer = nn.Linear(d_t, d_s, bias=False)  # PyTorch's default init ("default")
    if kind == "orthogonal":
        nn.init.orthogonal_(layer.weight)
    return layer


def build_translator_model(
    protocol: str,
    target_vectors: ArrayLike | Tensor,
    *,
    source_model: TranslatorVSE | None = None,
    translator_init: ArrayLike | None = None,
    image_dim: int | None = None,
    gru_hidden: int | None = None,
    joint_dim: int | None = None,
    dropout: float | None = None,
    init_std: float = 0.01,
    image_branch: str = "source",
    image_seed: int = 0,
    random_translator: str = "orthogonal",
    freeze_embeddings: bool = True,
    freeze_translator: bool = False,
) -> TranslatorVSE:
    """The target-language model of protocol ``FS``, ``T1`` or ``T2`` (poster §3).

    target_vectors ``(V_t, d_t)``: pretrained target subword embeddings (row 0
    padding). source_model: the trained source-language model
    (:func:`build_source_model`), required by T1/T2 and by ``image_branch="source"``,
    and for FS the default of every size. translator_init ``(d_s, d_t)``: the
    SVD + RCSLS matrix, required by T2. image_branch: ``source`` copies the source
    model's image branch, ``random`` builds :func:`random_image_branch` from
    ``image_seed``; either way FS, T1 and T2 start from identical image weights
    (see the module docstring). The source model is copied, never shared:
    training the new model leaves it unchanged.

    Sizes (image_dim, gru_hidden, joint_dim, dropout) default to the source
    model's; FS without a source model needs image_dim and uses 1024/1024/0.0.
    """
    where = f"build_translator_model({protocol})"
    if protocol not in PROTOCOLS:
        raise InputError(where, f"protocol must be one of {', '.join(PROTOCOLS)}")
    if random_translator not in RANDOM_TRANSLATORS:
        raise InputError(where, f"random_translator must be one of {', '.join(RANDOM_TRANSLATORS)}")
    vectors = _as_vectors(target_vectors, f"{where}(target_vectors)")
    d_t = vectors.shape[1]
    if protocol in ("T1", "T2") and source_model is None:
        raise InputError(where, "T1 and T2 start from a trained source-language model: pass source_model")
    if protocol == "T2" and translator_init is None:
        raise InputError(where, "T2 starts M from SVD + RCSLS: pass translator_init (d_source, d_target)")
    if protocol != "T2" and translator_init is not None:
        raise InputError(where, "translator_init is only used by T2 (T1's Translator starts at random)")
    if image_branch not in IMAGE_BRANCHES:
        raise InputError(f"{where}(image_branch)", f"{image_branch!r} is not one of {', '.join(IMAGE_BRANCHES)}")
    if image_branch == "source" and source_model is None:
        raise InputError(
            f"{where}(image_branch)",
            "image_branch 'source' copies the source model's image branch: "
            "pass source_model (or image_branch='random')",
        )

    src_text = source_model.text.encoder if source_model is not None else None
    if protocol != "FS":  # the copied encoder fixes these sizes
        src_joint = src_text.project.out_features if src_text.project is not None else src_text.gru.hidden_size
        for name, given, has in (
            ("gru_hidden", gru_hidden, src_text.gru.hidden_size),
            ("joint_dim", joint_dim, src_joint),
        ):
            if given is not None and given != has:
                raise InputError(f"{where}({name})", f"{given} differs from the source model's {has}")
    if src_text is not None:
        gru_hidden = gru_hidden or src_text.gru.hidden_size
        joint_dim = joint_dim or (
            src_text.project.out_features if src_text.project is not None else src_text.gru.hidden_size
        )
        dropout = src_text.dropout.p if dropout is None else dropout
        image_dim = image_dim or source_model.image.project.in_features
    if image_dim is None:
        raise InputError(where, "image_dim is needed when there is no source_model")
    gru_hidden, joint_dim = gru_hidden or 1024, joint_dim or 1024
    dropout = 0.0 if dropout is None else dropout

    if protocol == "FS":
        translator = None
        encoder = RecurrentEncoder(d_t, gru_hidden, joint_dim, dropout)
        init_paper_weights(encoder, init_std)
    else:
        encoder = copy.deepcopy(src_text)
        encoder.dropout.p = dropout  # a rate, not a weight: the caller may change it
        d_s = encoder.gru.input_size
        if protocol == "T1":
            translator = _random_translator(d_t, d_s, random_translator)
        else:
            m = torch.as_tensor(np.asarray(translator_init), dtype=torch.get_default_dtype())
            if tuple(m.shape) != (d_s, d_t):
                raise InputError(
                    f"{where}(translator_init)",
                    f"M must be (d_source, d_target) = ({d_s}, {d_t}), got {tuple(m.shape)}",
                )
            translator = nn.Linear(d_t, d_s, bias=False)
            with torch.no_grad():
                translator.weight.copy_(m)
        translator.weight.requires_grad_(not freeze_translator)

    if image_branch == "source":
        image = copy.deepcopy(source_model.image)
        image.dropout.p = dropout
        if image.project.in_features != image_dim or image.project.out_features != joint_dim:
            raise InputError(
                where,
                f"the source model's image branch maps {image.project.in_features} → "
                f"{image.project.out_features}, the model needs {image_dim} → {joint_dim}",
            )
    else:
        image = random_image_branch(image_dim, joint_dim, dropout, init_std, image_seed)
    return TranslatorVSE(TranslatorTextEncoder(vectors, encoder, translator, freeze_embeddings), image, protocol)
