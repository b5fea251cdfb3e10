"""Model families in training: how each is built, what it trains with, and in
which phases. :func:`polyvse.train.run.train_variant` dispatches through here.

=============  ===========  ===================================  ===============================
family         vocabulary   word inputs                          objective (phases)
=============  ===========  ===================================  ===============================
embn           words        random | FastText | PCA-D → FC       EmbN: SMALR eq. 3 + NC
parallel_embn  words        random | FastText, one table a lang  EmbN's (Gella et al., MULE)
mule           words        random | FastText | PCA-D            MULE eq. 4 with the ablation
                                                                 flags (LP phase first when
                                                                 ``lp_epochs`` > 0)
la             words        latent tokens (pretraining output)   SMALR eq. 4 without MCLM
hem            words        top-K words: PCA-50 FastText → FC;   SMALR eq. 4 without MCLM
                            the rest: latent tokens
smalr          words        as HEM                               SMALR eq. 4 (MCLM)
liwe           characters   words from 24 / 120-D characters     VSE++ hinge (LIWE)
=============  ===========  ===================================  ===============================

Every family's settings live in ``models.<family>`` of the config (overridden
per variant by ``model_options``): options that are fields of the family's
config dataclass build the model; the others (word inputs, loss weights and
ablation flags, phases) are read here.

This module imports torch lazily: the workflow reads :func:`variant_needs`
at DAG build.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from torch import nn

    from polyvse.text.muse import MuseDictionary


@dataclass(frozen=True)
class FamilySpec:
    """What a family needs besides captions and image features.

    vocabulary: ``words`` (a joint (language, token) index) or ``chars``;
    word_vectors: reads the ``word_vectors`` option (random | fasttext | pca);
    specific_vectors: its frequent words start from PCA-reduced FastText
    (HEM, SMALR §3.1); latent: starts from a latent-vocabulary pretraining.
    """

    name: str
    vocabulary: str = "words"
    word_vectors: bool = False
    specific_vectors: bool = False
    latent: bool = False


SPECS: dict[str, FamilySpec] = {
    "embn": FamilySpec("embn", word_vectors=True),
    "parallel_embn": FamilySpec("parallel_embn", word_vectors=True),
    "mule": FamilySpec("mule", word_vectors=True),
    "la": FamilySpec("la", latent=True),
    "hem": FamilySpec("hem", specific_vectors=True, latent=True),
    "smalr": FamilySpec("smalr", specific_vectors=True, latent=True),
    "liwe": FamilySpec("liwe", vocabulary="chars"),
}
FAMILY_NAMES = tuple(SPECS)


@dataclass(frozen=True)
class VariantNeeds:
    """Files a variant's training reads beyond captions, features and vocabularies.

    fasttext_langs: languages whose FastText table (``fasttext/{origin}/{lang}.npy``) it reads;
    pca_dim / pca_langs: PCA-reduced tables (``….pca{dim}.npy``); pretrain: the name of a
    latent-vocabulary pretraining (``pretrain/{name}.pt``); dictionaries: MUSE ``xx-en``
    dictionaries (dictionary-mapping baseline).
    """

    fasttext_langs: list[str] = field(default_factory=list)
    pca_dim: int | None = None
    pca_langs: list[str] = field(default_factory=list)
    pretrain: str | None = None
    dictionaries: bool = False


def word_inputs(options: Mapping) -> tuple[str, int | None]:
    """(kind, pca dimension) of a word-vector family's ``word_vectors`` option."""
    kind = options.get("word_vectors", "random")
    if kind not in ("random", "fasttext", "pca"):
        raise ValueError(f"word_vectors must be random, fasttext or pca, got {kind!r}")
    return kind, (int(options["pca_dim"]) if kind == "pca" else None)


def variant_needs(settings: Mapping) -> VariantNeeds:
    """The extra inputs of one variant (``settings`` from :func:`polyvse.config.variant_settings`)."""
    spec = SPECS[settings["model"]]
    options, langs = settings["model_options"], list(settings["train_langs"])
    dictionaries = bool((settings.get("vocabulary") or {}).get("dictionary_threshold"))
    if spec.word_vectors:
        kind, dim = word_inputs(options)
        if kind == "fasttext":
            return VariantNeeds(fasttext_langs=langs, dictionaries=dictionaries)
        if kind == "pca":
            return VariantNeeds(pca_dim=dim, pca_langs=langs, dictionaries=dictionaries)
        return VariantNeeds(dictionaries=dictionaries)
    if spec.latent:
        pca = int(options["specific_dim"]) if spec.specific_vectors and options.get("specific_words", 0) else None
        return VariantNeeds(
            pca_dim=pca, pca_langs=langs if pca else [], pretrain=options["pretrain"], dictionaries=dictionaries
        )
    return VariantNeeds(dictionaries=dictionaries)


@dataclass
class FamilyInputs:
    """What the train rule read for a family (see :class:`VariantNeeds`).

    tokens[lang]: the language's vocabulary-file tokens in file order, the row
    order of ``fasttext[lang]`` ``(V_l, 300)`` and ``pca[lang]`` ``(V_l, d)``;
    latent: the saved output of :func:`polyvse.train.pretrain.pretrain_latent_vocabulary`;
    dictionaries: lang → its lang-en MUSE dictionary.
    """

    tokens: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    fasttext: dict[str, "np.ndarray"] = field(default_factory=dict)
    pca: dict[str, "np.ndarray"] = field(default_factory=dict)
    latent: dict | None = None
    dictionaries: dict[str, "MuseDictionary"] = field(default_factory=dict)


def config_options(options: Mapping, config_cls: type) -> dict[str, Any]:
    """The options that are fields of ``config_cls`` (architecture), without
    the sizes the vocabulary and data decide."""
    names = {f.name for f in fields(config_cls)} - {
        "vocab_size",
        "image_dim",
        "n_langs",
        "language_sizes",
        "n_latent",
        "n_specific",
        "input_dim",
    }
    return {k: v for k, v in options.items() if k in names}


# -- vocabulary ---------------------------------------------------------------------


def build_vocabulary(settings: Mapping, inputs: FamilyInputs, train_captions: "pd.DataFrame"):
    """The variant's vocabulary: characters (LIWE), a joint word index
    thresholded at ``vocabulary.min_count`` (frequency thresholding, SMALR §4),
    or the dictionary-mapping baseline's index."""
    from polyvse.text.chars import WORD_CHARS, CharVocabulary
    from polyvse.text.reduction import DictionaryMappedVocabulary
    from polyvse.text.vocab import Vocabulary

    langs, text = list(settings["train_langs"]), settings["text"]
    if SPECS[settings["model"]].vocabulary == "chars":
        return CharVocabulary.from_texts(
            zip(train_captions["text"], train_captions["lang"]),
            langs,
            word_chars=int(settings["model_options"].get("word_chars", WORD_CHARS)),
            segmenter=text["segmenter"],
        )
    reduce = settings.get("vocabulary") or {}
    counts = {l: inputs.counts[l] for l in langs}
    if reduce.get("dictionary_threshold"):
        return DictionaryMappedVocabulary.from_counts_and_dictionaries(
            counts, int(reduce["dictionary_threshold"]), inputs.dictionaries, text["min_count"], text["segmenter"]
        )
    return Vocabulary.from_counts(counts, int(reduce.get("min_count") or text["min_count"]), text["segmenter"])


# -- model --------------------------------------------------------------------------


def initial_word_vectors(settings: Mapping, vocab, inputs: FamilyInputs):
    """``(len(vocab), d)`` initial word embeddings (None: random) and d."""
    import torch

    from polyvse.text.joint_vectors import joint_vectors

    options = settings["model_options"]
    kind, pca_dim = word_inputs(options)
    if kind == "random":
        return None, int(options["word_dim"])
    table = inputs.fasttext if kind == "fasttext" else inputs.pca
    vectors = torch.from_numpy(joint_vectors(vocab, inputs.tokens, table))
    if kind == "fasttext" and vectors.shape[1] != int(options["word_dim"]):
        raise ValueError(
            f"word_vectors fasttext: the FastText vectors are {vectors.shape[1]}-D but word_dim is "
            f"{options['word_dim']}; set models.{settings['model']}.word_dim to the FastText dimension"
        )
    if kind == "pca" and vectors.shape[1] != pca_dim:
        raise ValueError(f"word_vectors pca: the PCA vectors are {vectors.shape[1]}-D, pca_dim is {pca_dim}")
    return vectors, int(vectors.shape[1])


def build_model(settings: Mapping, vocab, image_dim: int, inputs: FamilyInputs) -> "nn.Module":
    """A fresh model of the variant's family, initialised from its inputs."""
    import torch

    from polyvse.models.embn import EmbN, EmbNConfig
    from polyvse.models.hem import HEM, SMALR, HEMConfig, LanguageAgnostic, frequent_words
    from polyvse.models.liwe import LIWE, LIWEConfig
    from polyvse.models.mule import MULE, MULEConfig, init_word_embeddings
    from polyvse.models.parallel_embn import ParallelEmbN, ParallelEmbNConfig
    from polyvse.text.joint_vectors import joint_vectors
    from polyvse.train.pretrain import latent_assignment_for

    family, options = settings["model"], settings["model_options"]
    if family == "embn":
        vectors, dim = initial_word_vectors(settings, vocab, inputs)
        arch = config_options(options, EmbNConfig)
        input_dim = dim if word_inputs(options)[0] == "pca" else 0
        model = EmbN(EmbNConfig(vocab_size=len(vocab), image_dim=image_dim, input_dim=input_dim, **arch))
        init_word_embeddings(model.word_embeddings, vectors, "EmbN(word_vectors)")
        return model
    if family == "parallel_embn":
        if word_inputs(options)[0] == "pca":
            raise ValueError("parallel_embn takes word_vectors random or fasttext")
        vectors, _ = initial_word_vectors(settings, vocab, inputs)
        return ParallelEmbN.from_vocabulary(vocab, image_dim, vectors, **config_options(options, ParallelEmbNConfig))
    if family == "mule":
        vectors, dim = initial_word_vectors(settings, vocab, inputs)
        # PCA-D word vectors: the language FCs map d → universal (MULE's FC takes the table's size)
        arch = {**config_options(options, MULEConfig), "word_dim": dim}
        return MULE.from_vocabulary(vocab, image_dim, vectors, **arch)
    if family in ("la", "hem", "smalr"):
        if inputs.latent is None:
            raise ValueError(f"family {family} needs a latent-vocabulary pretraining (model option pretrain)")
        k = 0 if family == "la" else int(options.get("specific_words", 0))
        specific = frequent_words(vocab, inputs.counts, k) if k else torch.zeros(len(vocab), dtype=torch.bool)
        assignment = latent_assignment_for(vocab, inputs.latent, ~specific)
        specific_vectors = None
        if k:
            specific_vectors = torch.from_numpy(joint_vectors(vocab, inputs.tokens, inputs.pca))
        cls = {"la": LanguageAgnostic, "hem": HEM, "smalr": SMALR}[family]
        arch = config_options(options, HEMConfig)
        if int(arch.get("universal_dim", assignment.embeddings.shape[1])) != assignment.embeddings.shape[1]:
            raise ValueError(
                f"the pretrained latent embeddings are {assignment.embeddings.shape[1]}-D but "
                f"universal_dim is {arch['universal_dim']}"
            )
        return cls.from_vocabulary(vocab, image_dim, assignment, specific, specific_vectors, **arch)
    if family == "liwe":
        return LIWE(LIWEConfig(vocab_size=len(vocab), image_dim=image_dim, **config_options(options, LIWEConfig)))
    raise KeyError(f"unknown model family {family!r}; known: {', '.join(SPECS)}")


# -- objectives and phases ------------------------------------------------------------


def make_objective(settings: Mapping):
    """The main-phase objective of the variant's family (with its ablation flags)."""
    from polyvse.train.objectives import EmbNObjective
    from polyvse.train.objectives_mule import LIWEObjective, MULEObjective
    from polyvse.train.objectives_smalr import SMALRObjective

    family, o, tr = settings["model"], settings["model_options"], settings["training"]
    common = dict(margin=tr["margin"], top_k=tr["top_k"], sentence_weight=tr["sentence_weight"])
    if family in ("embn", "parallel_embn"):
        return EmbNObjective(**common, neighbourhood_weight=tr["neighbourhood_weight"])
    if family == "mule":
        return MULEObjective(
            **common,
            neighbourhood_weight=tr["neighbourhood_weight"],
            adversarial_weight=o["adversarial_weight"],
            final_nc=o["final_nc"],
            universal_nc=o["universal_nc"],
            language_classifier=o["language_classifier"],
        )
    if family in ("la", "hem", "smalr"):
        mclm = family == "smalr"
        return SMALRObjective(
            **common,
            neighbourhood_weight=tr["neighbourhood_weight"],
            adversarial_weight=o["adversarial_weight"],
            mclm=mclm,
            mask_weight=o.get("mask_weight", 1e-4),
            mask_rate=o.get("mask_rate", 0.2),
            masked_multimodal=o.get("masked_multimodal", True),
        )
    if family == "liwe":
        return LIWEObjective(margin=o["loss_margin"], top_k=o["loss_top_k"], sentence_weight=1.0)
    raise KeyError(f"unknown model family {family!r}")


@dataclass
class Phase:
    """One training phase: ``objective`` optimised over ``parameters`` (None:
    all) for ``epochs`` epochs; ``select_by``: ``retrieval`` (validation mR)
    or ``loss`` (the objective on validation batches, for phases that train no
    multimodal part, e.g. MULE's LP)."""

    name: str
    objective: object
    epochs: int
    parameters: Sequence | None = None
    select_by: str = "retrieval"


def phases(settings: Mapping, model: "nn.Module") -> list[Phase]:
    """The variant's phases in order; the last is the main one (MULE +LP: the
    LP pretraining of the language layers comes first)."""
    from polyvse.train.objectives_mule import MULEPretrainObjective

    tr, options = settings["training"], settings["model_options"]
    out = []
    if settings["model"] == "mule" and int(options.get("lp_epochs", 0)) > 0:
        out.append(
            Phase(
                "lp",
                MULEPretrainObjective(tr["margin"], tr["top_k"]),
                int(options["lp_epochs"]),
                parameters=model.universal_parameters(),
                select_by="loss",
            )
        )
    out.append(Phase("main", make_objective(settings), int(tr["epochs"])))
    return out
