"""Training MLMME and its VSE baseline (Calixto et al. 2017, §2 and §4).

A training example is a *tuple*: an image and one sentence describing it in
every language (§2, "Each training example consists of a tuple (i) sentences
S^k in L_k, ∀k ∈ K, and (ii) the associated image"). On comparable data
(Multi30K's M30k_C: 5 English and 5 independently written German captions per
image) the paper does not say how the sentences are paired; here every epoch
pairs them afresh at random, each image giving as many tuples as its
best-covered language has captions (the others' captions are cycled), so that
every caption is seen once an epoch.

Contrastive terms (eq. 1–2) are, as the paper says, "chosen randomly from the
training set and resampled at every epoch": R tuples of other images per
tuple, drawn afresh every epoch (``contrastive: random``; drawn among the
shuffled batch's other tuples, or from the whole training set, see
:func:`tuple_batches`); ``in_batch`` uses every other tuple of the batch
instead (Kiros et al.'s public code).

The runs of Table 1 (:func:`polyvse.train.mlmme_runs.mlmme_runs`): VSE on each
language alone (K = 1, β = 1, Kiros et al. 2014) and MLMME on all languages for
every β.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from polyvse.data.tables import select_captions
from polyvse.errors import InputError
from polyvse.evaluate.embed import mean_validation_recall
from polyvse.losses.multilingual_ranking import ContrastiveSet, multilingual_ranking_loss, sample_contrastive_indices
from polyvse.models.mlmme import MLMME
from polyvse.optim import adam
from polyvse.text.vocab import Vocabulary
from polyvse.train.data import EncodedCaptions, encode_captions
from polyvse.train.loop import FitResult, fingerprint, resolve_device, run_epochs
from polyvse.train.lr_schedules import lr_schedule

log = logging.getLogger(__name__)


class TupleSampler:
    """MLMME's training tuples (§2): an image and one sentence per language.

    encoded: language → that language's training sentences (``image_row``:
    rows of the feature matrix). Images lacking a sentence in some language
    are left out. :meth:`epoch` pairs the sentences afresh.
    """

    def __init__(self, encoded: Mapping[str, EncodedCaptions]):
        self.langs = list(encoded)
        by_lang: dict[str, dict[int, np.ndarray]] = {}
        for lang, enc in encoded.items():
            rows = enc.image_row.numpy()
            order = np.argsort(rows, kind="stable")
            images, starts = np.unique(rows[order], return_index=True)
            by_lang[lang] = dict(zip(images.tolist(), np.split(order, starts[1:])))
        shared = set.intersection(*(set(d) for d in by_lang.values()))
        if not shared:
            raise InputError(
                "MLMME training captions", f"no training image has sentences in all of {', '.join(self.langs)}"
            )
        self.images = np.array(sorted(shared), dtype=np.int64)
        self.captions = {lang: [by_lang[lang][i] for i in self.images.tolist()] for lang in self.langs}
        self.per_image = np.array(
            [max(len(self.captions[lang][j]) for lang in self.langs) for j in range(len(self.images))], dtype=np.int64
        )

    def __len__(self) -> int:
        """Tuples an epoch: Σ over images of the best-covered language's caption count."""
        return int(self.per_image.sum())

    def epoch(self, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """image rows ``(n,)`` and language → sentence rows ``(n,)``, image by image."""
        rows = {lang: [] for lang in self.langs}
        for j, t in enumerate(self.per_image.tolist()):
            for lang in self.langs:
                rows[lang].append(np.resize(rng.permutation(self.captions[lang][j]), t))
        return np.repeat(self.images, self.per_image), {lang: np.concatenate(r) for lang, r in rows.items()}


def _sentences(enc: EncodedCaptions, rows: np.ndarray, device: torch.device) -> tuple[Tensor, Tensor]:
    tokens, lengths = enc.take(rows)
    return tokens.to(device), lengths


class MLMMEObjective:
    """Eq. (3) on one batch: ``β·S_I + (1 − β)·S_S`` with random or in-batch contrastive terms.

    A batch's first ``size`` rows are its tuples; ``contrastive_index`` ``(size, R)``
    (random mode) points at each tuple's contrastive tuples among all its rows
    (other tuples of the batch, or extra rows that follow the tuples).
    """

    def __init__(self, beta: float, margin: float, contrastive: str, reduction: str):
        self.beta, self.margin, self.contrastive, self.reduction = beta, margin, contrastive, reduction

    def __call__(self, model: MLMME, batch: Mapping) -> dict[str, Tensor]:
        images, sentences = model(batch["images"], batch["sentences"])
        b = batch["size"]
        if self.contrastive == "random":
            pick = batch["contrastive_index"]
            negatives = ContrastiveSet(images[pick], {k: v[pick] for k, v in sentences.items()})
            out = multilingual_ranking_loss(
                images[:b],
                {k: v[:b] for k, v in sentences.items()},
                beta=self.beta,
                margin=self.margin,
                contrastive="random",
                negatives=negatives,
                reduction=self.reduction,
            )
        else:
            out = multilingual_ranking_loss(
                images,
                sentences,
                beta=self.beta,
                margin=self.margin,
                contrastive="in_batch",
                image_ids=batch["image_ids"],
                reduction=self.reduction,
            )
        return {"loss": out.total, "S_I": out.image_sentence.detach(), "S_S": out.sentence_sentence.detach()}


def tuple_batches(
    sampler: TupleSampler,
    encoded: Mapping[str, EncodedCaptions],
    features: Tensor,
    batch_size: int,
    contrastive: str,
    n_contrastive: int,
    pool: str,
    rng: np.random.Generator,
    device: torch.device,
) -> Iterator[dict]:
    """One epoch's batches: tuples paired and shuffled with ``rng``, split into
    ``ceil(n / batch_size)`` batches of near-equal size.

    Random contrastive terms are drawn afresh every epoch, R per tuple, never of
    the tuple's own image. ``pool="batch"``: among the other tuples of its
    batch — the batch being a uniform draw from the training set, these are
    uniform random training tuples too, and cost no extra forward pass;
    ``pool="training_set"``: from the whole epoch, embedded as extra rows of
    the batch (R + 1 times the work).
    """
    images, rows = sampler.epoch(rng)
    n = len(images)
    order = rng.permutation(n)
    gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
    whole = None
    if contrastive == "random" and pool == "training_set":
        whole = sample_contrastive_indices(n, n_contrastive, generator=gen, group_ids=torch.from_numpy(images)).numpy()
    for idx in np.array_split(order, max(1, -(-n // batch_size))):
        b = len(idx)
        take = idx if whole is None else np.concatenate([idx, whole[idx].reshape(-1)])
        batch = {
            "size": b,
            "images": features[torch.from_numpy(images[take])].to(device),
            "image_ids": torch.from_numpy(images[take]).to(device),
            "sentences": {lang: _sentences(encoded[lang], rows[lang][take], device) for lang in sampler.langs},
        }
        if contrastive == "random":
            pick = (
                b + torch.arange(b * n_contrastive).reshape(b, n_contrastive)
                if whole is not None
                else sample_contrastive_indices(
                    b, n_contrastive, generator=gen, group_ids=torch.from_numpy(images[idx])
                )
            )
            batch["contrastive_index"] = pick.to(device)
        yield batch


@dataclass
class TrainedMLMME:
    model: MLMME
    vocab: Vocabulary
    fit: FitResult
    settings: dict

    def saved(self) -> dict:
        """The dict the mlmme_train rule writes (model.pt); :func:`polyvse.models.trained.load_model` reads it."""
        return {
            "family": self.model.family,
            "config": self.model.config.as_dict(),
            "state_dict": self.model.state_dict(),
            "vocab": self.vocab.state_dict(),
            "best_epoch": self.fit.best_epoch,
            "val_mR": self.fit.best_score,
            "max_len": self.settings["text"]["max_len"],
            "langs": self.settings["langs"],
            "beta": self.settings["beta"],
        }

    def summary(self) -> dict:
        """What params.json records of the training: parameter counts, validation score, and when and why it stopped."""
        train, test = self.model.parameter_counts()
        return {
            "langs": self.settings["langs"],
            "beta": self.settings["beta"],
            "params_train": int(train),
            "params_test": int(test),
            "val_mR": round(float(self.fit.best_score), 3),
            **self.fit.summary(),
        }


def train_mlmme(
    captions: pd.DataFrame,
    features: np.ndarray,
    image_ids: Sequence[str],
    vocab_counts: Mapping[str, Mapping[str, int]],
    settings: Mapping,
    checkpoint_dir: Path,
    threads: int = 1,
    progress: bool = True,
) -> TrainedMLMME:
    """Train one run of :func:`run_settings` on the human captions of its languages;
    keep the epoch with the best validation mR (mean over the languages)."""
    torch.set_num_threads(threads)
    langs, tr, text = list(settings["langs"]), settings["training"], settings["text"]
    torch.manual_seed(settings["seed"])
    vocab = Vocabulary.from_counts({lang: vocab_counts[lang] for lang in langs}, text["min_count"], text["segmenter"])
    index = {img: i for i, img in enumerate(image_ids)}
    encoded, val = {}, {}
    for lang in langs:
        train_caps, val_caps = select_captions(captions, "train", [lang]), select_captions(captions, "val", [lang])
        if train_caps.empty or val_caps.empty:
            raise InputError("captions", f"MLMME needs human training and validation captions in {lang!r}")
        encoded[lang] = encode_captions(train_caps, vocab, index, text["max_len"])
        val[lang] = encode_captions(val_caps, vocab, index, text["max_len"])
    sampler = TupleSampler(encoded)
    device = resolve_device(tr["device"])
    feats = torch.from_numpy(np.asarray(features, dtype=np.float32))
    model = MLMME.from_vocabulary(vocab, feats.shape[1], langs, **settings["model"]).to(device)
    objective = MLMMEObjective(settings["beta"], settings["margin"], settings["contrastive"], settings["reduction"])
    optimiser = adam(model.parameters(), lr=tr["lr"])
    n_batches = -(-len(sampler) // tr["batch_size"])
    scheduler = lr_schedule(
        optimiser, tr.get("lr_schedule", "constant"), tr["epochs"], n_batches, tr.get("lr_warmup_epochs", 0)
    )
    log.info(
        "MLMME on %s, β = %g, %s contrastive terms (%s): %d images, %d tuples an epoch (%d batches), "
        "vocabulary %d, device %s, %d threads",
        "+".join(langs),
        settings["beta"],
        settings["contrastive"],
        settings["contrastive_pool"] if settings["contrastive"] == "random" else "every other tuple of the batch",
        len(sampler.images),
        len(sampler),
        n_batches,
        len(vocab),
        device,
        threads,
    )
    result = run_epochs(
        model,
        optimiser,
        lambda rng: tuple_batches(
            sampler,
            encoded,
            feats,
            tr["batch_size"],
            settings["contrastive"],
            settings["n_contrastive"],
            settings["contrastive_pool"],
            rng,
            device,
        ),
        n_batches,
        lambda batch: objective(model, batch),
        lambda m: mean_validation_recall(m, feats, val),
        epochs=tr["epochs"],
        seed=settings["seed"],
        checkpoint_dir=checkpoint_dir,
        run_id=fingerprint(settings, len(vocab), feats.shape, len(sampler)),
        device=device,
        grad_clip=tr["grad_clip"],
        scheduler=scheduler,
        progress=progress,
        patience=tr.get("patience"),
        # at its ceiling a cosine schedule has brought the rate to 0: more epochs could not move the model
        ceiling_reason="schedule" if scheduler is not None else "ceiling",
    )
    model.load_state_dict(result.best_state)
    model.cpu()
    log.info("best epoch %d, validation mR %.2f", result.best_epoch, result.best_score)
    return TrainedMLMME(model, vocab, result, dict(settings))
