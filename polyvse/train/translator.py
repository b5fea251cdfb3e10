"""Training for the Translator poster's Figure 3 (poster §2–3).

1. The *source* model: VSE on the source language (de in the poster) over its
   pretrained FastText vectors, trained with it or frozen
   (``translator.model.freeze_embeddings``; :func:`train_source`).
2. For each protocol (FS, T1, T2, :mod:`polyvse.models.translator`) and each
   number n of target-language (fr) training examples, a target model trained
   on the first n examples of one seeded order, so that the sets are nested
   (:func:`target_examples`, :func:`train_target`) and tested on the target
   language's test split (:func:`evaluate_target`). Every protocol starts from
   the same image branch (``translator.image_branch``: the source model's, or
   one seeded random one; :mod:`polyvse.models.translator` says why), so the
   protocols differ in the text branch only, as in the poster's §3.

Loss: the poster's bidirectional hinge, every other example of the batch
contrastive (``T \\ {t}``, ``I \\ {i}``), margin α; examples of the same image are
not contrastive for each other. Small n would get few updates from a fixed
number of epochs, so an epoch is at least ``min_batches_per_epoch`` batches
(cycling over the n examples, each seen equally often); with large n it is one
pass; the target models may take a dropout of their own (``target_training.dropout``),
as a few examples overfit sooner than the source's thousands. The best epoch by
validation mR (target language) is kept.

Word vectors enter the models prepared as the Translator matrix M was learnt
on them (unit length, centred, unit length:
:func:`polyvse.align.translator_matrix.prepare_vectors`); padding and unknown
words get zero vectors.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from polyvse.data.tables import select_captions
from polyvse.align.translator_matrix import prepare_vectors
from polyvse.errors import InputError
from polyvse.evaluate.embed import mean_validation_recall, retrieval_for
from polyvse.losses.multilingual_ranking import multilingual_ranking_loss
from polyvse.models.translator import PROTOCOLS, TranslatorVSE, build_source_model, build_translator_model
from polyvse.optim import adam
from polyvse.text.vocab import Vocabulary
from polyvse.train.data import EncodedCaptions, ImageGroupedBatches, collate, encode_captions
from polyvse.train.loop import FitResult, fingerprint, resolve_device, run_epochs
from polyvse.train.translator_runs import CONFIG_KEY

log = logging.getLogger(__name__)

SIZE_KEYS: tuple[str, ...] = ("gru_hidden", "joint_dim", "dropout", "freeze_embeddings")


def vocabulary_vectors(vocab: Vocabulary, lang: str, words: Sequence[str], vectors: np.ndarray) -> np.ndarray:
    """The model's word-vector table ``(len(vocab), d)``: row i the prepared vector
    of vocabulary entry i (``words[r]`` ↔ ``vectors[r]``); padding and ``<unk>`` zero."""
    vectors = np.asarray(vectors, dtype=np.float64)
    if vectors.ndim != 2 or len(vectors) != len(words):
        raise InputError(f"{lang} word vectors", f"{vectors.shape} rows for {len(words)} vocabulary words")
    row_of = {w: r for r, w in enumerate(words)}
    unit = prepare_vectors(vectors)
    table = np.zeros((len(vocab), vectors.shape[1]), dtype=np.float32)
    missing = []
    for i, (l, word) in enumerate(vocab.itos):
        if i == 0 or word == "<unk>":
            continue
        if word in row_of:
            table[i] = unit[row_of[word]]
        else:
            missing.append(word)
    if missing:
        raise InputError(f"{lang} word vectors", f"no vector for {len(missing)} vocabulary words, e.g. {missing[:3]}")
    return table


class VSEHinge:
    """The poster's loss on a batch from :func:`polyvse.train.data.collate`."""

    def __init__(self, margin: float):
        self.margin = margin

    def __call__(self, model: TranslatorVSE, batch: Mapping[str, Tensor]) -> dict[str, Tensor]:
        images = model.embed_images(batch["images"])[batch["image_of_sentence"]]
        sentences = model.embed_sentences(batch["tokens"], batch["lengths"])
        out = multilingual_ranking_loss(
            images,
            {"text": sentences},
            beta=1.0,
            margin=self.margin,
            contrastive="in_batch",
            image_ids=batch["image_of_sentence"],
        )
        return {"loss": out.total}


def target_examples(captions: pd.DataFrame, lang: str, n: int, which: str, seed: int) -> pd.DataFrame:
    """The first n of ``lang``'s training captions in one seeded order (the same
    order for every n, so the sets are nested). which: ``human`` captions, or
    ``augmented`` (human ones first, then machine translations)."""
    pool = captions[(captions["split"] == "train") & (captions["lang"] == lang)]
    if which == "human":
        pool = pool[pool["origin"] == "human"]
    pool = pool.reset_index(drop=True)
    rng = np.random.default_rng([seed, 7])
    order = rng.permutation(len(pool))
    if which == "augmented":  # human captions first, each group in its seeded order
        order = order[np.argsort(pool["origin"].to_numpy()[order] != "human", kind="stable")]
    if n > len(pool):
        raise InputError(
            f"{CONFIG_KEY}.examples",
            f"{n} {lang} training examples asked for, the {which} training captions have {len(pool)}",
        )
    return pool.iloc[order[:n]].reset_index(drop=True)


def _human_captions(
    captions: pd.DataFrame, lang: str, split: str, vocab: Vocabulary, index: Mapping[str, int], max_len: int
) -> EncodedCaptions:
    rows = select_captions(captions, split, [lang])
    if rows.empty:
        raise InputError("captions", f"no human {split} captions in {lang!r}")
    return encode_captions(rows, vocab, index, max_len)


@dataclass
class TrainedTranslatorModel:
    model: TranslatorVSE
    vocab: Vocabulary
    fit: FitResult
    settings: dict
    lang: str

    def saved(self) -> dict:
        """The model.pt dict; :func:`polyvse.models.trained.load_model` rebuilds the model from it."""
        text = self.model.text
        return {
            "family": "translator",
            "protocol": self.model.protocol,
            "lang": self.lang,
            "image_dim": self.model.image.project.in_features,
            "sizes": {k: self.settings["model"][k] for k in SIZE_KEYS},
            "vectors_shape": list(text.embed.weight.shape),
            "source_dim": text.encoder.gru.input_size,
            "state_dict": self.model.state_dict(),
            "vocab": self.vocab.state_dict(),
            "best_epoch": self.fit.best_epoch,
            "val_mR": self.fit.best_score,
            "max_len": self.settings["text"]["max_len"],
        }


def digest(*arrays: np.ndarray | Tensor | None) -> str:
    """A short hash of arrays' values (what a checkpoint's run id needs of a matrix or a model)."""
    h = hashlib.sha256()
    for a in arrays:
        if a is not None:
            h.update(
                np.ascontiguousarray(
                    a.detach().cpu().numpy() if isinstance(a, Tensor) else a, dtype=np.float32
                ).tobytes()
            )
    return h.hexdigest()[:16]


def _fit(
    model: TranslatorVSE,
    batches,
    n_batches: int,
    val: EncodedCaptions,
    lang: str,
    feats: Tensor,
    settings: Mapping,
    checkpoint_dir: Path,
    run_id: str,
    device: torch.device,
    progress: bool,
) -> FitResult:
    tr = settings["training"]
    optimiser = adam([p for p in model.parameters() if p.requires_grad], lr=tr["lr"])
    objective = VSEHinge(settings["margin"])
    return run_epochs(
        model,
        optimiser,
        batches,
        n_batches,
        lambda batch: objective(model, batch),
        lambda m: mean_validation_recall(m, feats, {lang: val}),
        epochs=tr["epochs"],
        seed=settings["seed"],
        checkpoint_dir=checkpoint_dir,
        run_id=run_id,
        device=device,
        grad_clip=tr["grad_clip"],
        progress=progress,
        patience=tr.get("patience"),
    )


def _setup(
    captions: pd.DataFrame,
    features: np.ndarray,
    image_ids: Sequence[str],
    lang: str,
    vocab_counts: Mapping[str, int],
    settings: Mapping,
    threads: int,
):
    torch.set_num_threads(threads)
    torch.manual_seed(settings["seed"])
    text = settings["text"]
    vocab = Vocabulary.from_counts({lang: vocab_counts}, text["min_count"], text["segmenter"])
    index = {img: i for i, img in enumerate(image_ids)}
    feats = torch.from_numpy(np.asarray(features, dtype=np.float32))
    val = _human_captions(captions, lang, "val", vocab, index, text["max_len"])
    return vocab, index, feats, val, resolve_device(settings["device"])


def train_source(
    captions: pd.DataFrame,
    features: np.ndarray,
    image_ids: Sequence[str],
    lang: str,
    vocab_counts: Mapping[str, int],
    vectors: np.ndarray,
    settings: Mapping,
    checkpoint_dir: Path,
    threads: int = 1,
    progress: bool = True,
) -> TrainedTranslatorModel:
    """VSE on every human training caption of the source language ``lang``;
    ``vectors`` ``(V, d)``: its word vectors, row r for the r-th word of ``vocab_counts``."""
    vocab, index, feats, val, device = _setup(captions, features, image_ids, lang, vocab_counts, settings, threads)
    table = vocabulary_vectors(vocab, lang, list(vocab_counts), vectors)
    train = _human_captions(captions, lang, "train", vocab, index, settings["text"]["max_len"])
    m, tr = settings["model"], settings["training"]
    model = build_source_model(
        table,
        feats.shape[1],
        gru_hidden=m["gru_hidden"],
        joint_dim=m["joint_dim"],
        dropout=m["dropout"],
        freeze_embeddings=m["freeze_embeddings"],
    ).to(device)
    sampler = ImageGroupedBatches(train.image_row, tr["batch_size"], captions_per_image=1)

    def batches(rng: np.random.Generator) -> Iterator[dict]:
        for rows in sampler.epoch(rng):
            yield collate(train, rows, feats, device)

    log.info(
        "source model (%s): %d training sentences of %d images, %d batches an epoch, vectors %s",
        lang,
        len(train),
        len(sampler.images),
        len(sampler),
        table.shape,
    )
    fit = _fit(
        model,
        batches,
        len(sampler),
        val,
        lang,
        feats,
        settings,
        checkpoint_dir,
        fingerprint(settings, lang, table.shape, feats.shape, len(train)),
        device,
        progress,
    )
    model.load_state_dict(fit.best_state)
    log.info("source model: best epoch %d, validation mR %.2f", fit.best_epoch, fit.best_score)
    return TrainedTranslatorModel(model.cpu(), vocab, fit, dict(settings), lang)


def cycling_batches(
    encoded: EncodedCaptions,
    batch_size: int,
    n_batches: int,
    features: Tensor,
    rng: np.random.Generator,
    device: torch.device,
) -> Iterator[dict]:
    """``n_batches`` batches of ``min(batch_size, n)`` examples, walking through
    fresh permutations of the n examples so that each is seen equally often."""
    n = len(encoded)
    size = min(batch_size, n)
    stream = np.concatenate([rng.permutation(n) for _ in range(-(-size * n_batches // n))])
    for b in range(n_batches):
        yield collate(encoded, stream[b * size : (b + 1) * size], features, device)


def train_target(
    protocol: str,
    n: int,
    captions: pd.DataFrame,
    features: np.ndarray,
    image_ids: Sequence[str],
    lang: str,
    vocab_counts: Mapping[str, int],
    vectors: np.ndarray,
    settings: Mapping,
    checkpoint_dir: Path,
    source: TranslatorVSE | None = None,
    matrix: np.ndarray | None = None,
    examples: str = "human",
    threads: int = 1,
    progress: bool = True,
) -> TrainedTranslatorModel:
    """The target-language model of ``protocol`` trained on n examples of ``lang``.

    source: the trained source model (T1, T2, and every protocol when
    ``settings["image_branch"]`` is ``source``); matrix: M ``(d_s, d_t)`` from SVD + RCSLS (T2).
    """
    if protocol not in PROTOCOLS:
        raise InputError(f"{CONFIG_KEY}.protocols", f"unknown protocol {protocol!r} (known: {', '.join(PROTOCOLS)})")
    image_branch = settings["image_branch"]
    uses_source = protocol != "FS" or image_branch == "source"
    if uses_source and source is None:
        raise InputError(
            f"{CONFIG_KEY}.image_branch",
            f"{protocol} with image_branch {image_branch!r} starts from the source model: none was given",
        )
    vocab, index, feats, val, device = _setup(captions, features, image_ids, lang, vocab_counts, settings, threads)
    table = vocabulary_vectors(vocab, lang, list(vocab_counts), vectors)
    chosen = target_examples(captions, lang, n, examples, settings["seed"])
    train = encode_captions(chosen, vocab, index, settings["text"]["max_len"])
    m, tr = settings["model"], settings["training"]
    model = build_translator_model(
        protocol,
        table,
        source_model=source if uses_source else None,
        translator_init=matrix if protocol == "T2" else None,
        image_dim=feats.shape[1],
        gru_hidden=m["gru_hidden"],
        joint_dim=m["joint_dim"],
        dropout=m["dropout"] if tr.get("dropout") is None else tr["dropout"],
        freeze_embeddings=m["freeze_embeddings"],
        image_branch=image_branch,
        image_seed=int(settings["seed"]),
    ).to(device)
    n_batches = max(int(tr["min_batches_per_epoch"]), -(-n // tr["batch_size"]))
    log.info(
        "%s on %d %s examples (%s): %d batches of %d an epoch",
        protocol,
        n,
        lang,
        examples,
        n_batches,
        min(tr["batch_size"], n),
    )
    fit = _fit(
        model,
        lambda rng: cycling_batches(train, tr["batch_size"], n_batches, feats, rng, device),
        n_batches,
        val,
        lang,
        feats,
        settings,
        checkpoint_dir,
        fingerprint(
            settings,
            protocol,
            n,
            examples,
            table.shape,
            feats.shape,
            digest(matrix if protocol == "T2" else None, *(source.state_dict().values() if uses_source else ())),
        ),
        device,
        progress,
    )
    model.load_state_dict(fit.best_state)
    log.info("%s n=%d: best epoch %d, validation mR %.2f", protocol, n, fit.best_epoch, fit.best_score)
    return TrainedTranslatorModel(model.cpu(), vocab, fit, dict(settings), lang)


def evaluate_target(
    model: TranslatorVSE,
    vocab: Vocabulary,
    captions: pd.DataFrame,
    features: np.ndarray,
    image_ids: Sequence[str],
    lang: str,
    max_len: int,
) -> dict[str, float]:
    """Text→image and image→text retrieval on ``lang``'s human test captions:
    ``r{1,5,10}_{t2i,i2t}``, ``medr_*``, ``mR`` and the pool sizes."""
    index = {img: i for i, img in enumerate(image_ids)}
    test = _human_captions(captions, lang, "test", vocab, index, max_len)
    res = retrieval_for(model, torch.from_numpy(np.asarray(features, dtype=np.float32)), test)
    return {"n_images": int(torch.unique(test.image_row).numel()), "n_sentences": len(test), **res.as_row()}
