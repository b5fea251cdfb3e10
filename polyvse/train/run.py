"""One training run of a model variant, from canonical tables to a trained model."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from polyvse.data.tables import select_captions
from polyvse.evaluate.embed import mean_validation_recall
from polyvse.optim import adam, lazy_word_tables
from polyvse.text.vocab import Vocabulary
from polyvse.train import families
from polyvse.train.data import (
    DEFAULT_LANGUAGE_BALANCE,
    batch_sampler,
    collate,
    device_batches,
    encode_captions,
)
from polyvse.train.families import FamilyInputs
from polyvse.train.loop import FitResult, fingerprint, resolve_device, run_epochs
from polyvse.train.lr_schedules import lr_schedule
from polyvse.train.steps import StepCounted
from polyvse.train.negatives import NegativesWarmup
from polyvse.train.neighbours import ImageNeighbours

log = logging.getLogger(__name__)


@dataclass
class TrainedModel:
    model: torch.nn.Module
    vocab: Vocabulary  # or a CharVocabulary (LIWE), DictionaryMappedVocabulary (dictionary baseline)
    fit: FitResult
    max_len: int

    def saved(self) -> dict:
        """The dict the train rule writes (model.pt)."""
        return {
            "family": self.model.family,
            "config": self.model.config.as_dict(),
            "state_dict": self.model.state_dict(),
            "vocab": self.vocab.state_dict(),
            "best_epoch": self.fit.best_epoch,
            "val_mR": self.fit.best_score,
            "max_len": self.max_len,
        }

    def summary(self) -> dict:
        """What params.json records of the training: parameter counts, validation score, and when and why it stopped."""
        train, test = self.model.parameter_counts()
        return {
            "params_train": int(train),
            "params_test": int(test),
            "val_mR": round(float(self.fit.best_score), 3),
            **self.fit.summary(),
        }


class TrainingProgress(StepCounted):
    """Fraction of the main phase's optimiser steps done, for objectives with
    a ``progress`` attribute (the DANN weight of MULE's and SMALR's language
    classifier); it travels in the checkpoint so a resumed run continues the
    schedule where it stopped."""

    def __init__(self, objective: object, total_steps: int):
        self.objective, self.total, self.steps = objective, max(1, total_steps), 0
        self._publish()

    def _publish(self) -> None:
        if hasattr(self.objective, "progress"):
            self.objective.progress = min(1.0, self.steps / self.total)


def phase_loss(objective: object, model: torch.nn.Module, batches: list[dict]) -> dict[str, float]:
    """Validation of a phase selected by its loss: the mean objective on fixed batches."""
    loss = float(np.mean([float(objective(model, b)["loss"]) for b in batches]))
    return {"val_score": -loss, "val_loss": loss}


def train_variant(
    captions: pd.DataFrame,
    features: np.ndarray,
    image_ids: list[str],
    vocab_counts: Mapping[str, Mapping[str, int]],
    settings: Mapping,
    checkpoint_dir: Path,
    threads: int = 1,
    progress: bool = True,
    inputs: FamilyInputs | None = None,
) -> TrainedModel:
    """Train one variant as ``settings`` (see polyvse.config.variant_settings) describes.

    ``vocab_counts``: per language, the vocabulary file's counts in file order;
    ``inputs``: the family's extra inputs (FastText / PCA tables, latent
    pretraining, dictionaries; :class:`polyvse.train.families.FamilyInputs`).
    The family decides vocabulary, model, objective and phases
    (:mod:`polyvse.train.families`); every phase checkpoints after each epoch
    and resumes (the main phase in ``checkpoint_dir``, others in a subfolder).
    """
    torch.set_num_threads(threads)  # the job's threads: no oversubscription beside other jobs
    langs, tr, text = settings["train_langs"], settings["training"], settings["text"]
    torch.manual_seed(settings["seed"])
    inputs = inputs or FamilyInputs()
    inputs.counts = {l: dict(vocab_counts[l]) for l in vocab_counts}
    inputs.tokens = inputs.tokens or {l: list(vocab_counts[l]) for l in vocab_counts}
    image_index = {img: i for i, img in enumerate(image_ids)}
    train_caps = select_captions(captions, "train", langs, settings["captions"])
    if train_caps.empty:
        raise ValueError(f"no training captions for languages {langs}")
    vocab = families.build_vocabulary(settings, inputs, train_caps)
    train_enc = encode_captions(train_caps, vocab, image_index, text["max_len"])
    # before the model: a bad language_balance fails fast
    share = tr.get("neighbour_share", 0.0)
    batches = batch_sampler(
        train_enc,
        tr["images_per_batch"],
        tr["captions_per_image"],
        tr.get("language_balance", DEFAULT_LANGUAGE_BALANCE),
        tr.get("image_captions", "quota"),
        neighbours=ImageNeighbours(features, np.unique(train_enc.image_row.numpy())) if share > 0 else None,
        neighbour_share=share,
    )
    val_by_lang = {}
    for lang in langs:
        val = select_captions(captions, "val", [lang], "human")
        if not val.empty:
            val_by_lang[lang] = encode_captions(val, vocab, image_index, text["max_len"])
    if not val_by_lang:
        raise ValueError(f"no validation captions for languages {langs}: cannot select the best epoch")
    device = resolve_device(tr["device"])
    feats = torch.from_numpy(np.asarray(features, dtype=np.float32))
    # the image features go to the device once, not once a batch
    batch_feats = feats.to(device)
    amp = torch.bfloat16 if tr["amp"] == "bf16" else None
    workers = tr["loader_workers"] if tr["loader_workers"] is not None else int(device.type == "cuda")
    model = families.build_model(settings, vocab, feats.shape[1], inputs)
    model.to(device)
    n_batches = min(len(batches), tr.get("batches_per_epoch") or len(batches))
    run_id = fingerprint(settings, len(vocab), feats.shape, len(train_caps))
    log.info(
        "training %s on %s: %d sentences, %d images, vocabulary %d, %d batches an epoch, device %s%s, %d threads",
        settings["model"],
        "+".join(langs),
        len(train_caps),
        train_enc.image_row.unique().numel(),
        len(vocab),
        n_batches,
        device,
        " (bf16 autocast)" if amp else "",
        threads,
    )

    def epoch_batches(rng: np.random.Generator) -> Iterator[dict[str, Tensor]]:
        return device_batches(batches, train_enc, batch_feats, device, rng, n_batches, workers)

    def validate_retrieval(m: torch.nn.Module) -> float:
        return mean_validation_recall(m, feats, val_by_lang)

    # SMALR / MULE fine-tune the word tables; updating only a batch's rows is what makes a
    # step's cost independent of the vocabulary (polyvse.optim)
    tables = {id(p) for p in lazy_word_tables(model)} if tr["lazy_word_updates"] else set()
    result = None
    for phase in families.phases(settings, model):
        params = [
            p for p in (phase.parameters if phase.parameters is not None else model.parameters()) if p.requires_grad
        ]
        lazy = [p for p in params if id(p) in tables]
        # the optimiser's state layout (which tables step lazily) is part of what a checkpoint
        # holds: a checkpoint written under another layout starts afresh instead of failing to load
        lazy_ids = {id(p) for p in lazy}
        lazy_names = sorted(name for name, p in model.named_parameters() if id(p) in lazy_ids)
        optimiser = adam(params, lr=tr["lr"], weight_decay=tr["weight_decay"], lazy=lazy)
        # the schedule spans the phase's ceiling; a phase selected by its loss (MULE's LP) keeps one rate
        scheduler = (
            lr_schedule(
                optimiser, tr.get("lr_schedule", "constant"), phase.epochs, n_batches, tr.get("lr_warmup_epochs", 0)
            )
            if phase.select_by == "retrieval"
            else None
        )
        tracker = TrainingProgress(phase.objective, phase.epochs * n_batches)
        warmup = NegativesWarmup(phase.objective, tr.get("negatives_warmup_epochs", 0) * n_batches)

        def after_step(tracker: TrainingProgress = tracker, warmup: NegativesWarmup = warmup) -> None:
            tracker.step()
            warmup.step()

        if phase.select_by == "loss":
            all_val = pd.concat([enc.frame for enc in val_by_lang.values()], ignore_index=True)
            val_enc = encode_captions(all_val, vocab, image_index, text["max_len"])
            val_sampler = batch_sampler(
                val_enc,
                tr["images_per_batch"],
                tr["captions_per_image"],
                tr.get("language_balance", DEFAULT_LANGUAGE_BALANCE),
                tr.get("image_captions", "quota"),
            )
            fixed = [
                collate(val_enc, rows, batch_feats, device)
                for rows in val_sampler.epoch(np.random.default_rng([settings["seed"], 0]))
            ]
            validate, score_name = (lambda m, o=phase.objective, f=fixed: phase_loss(o, m, f)), "val_score"
        else:
            validate, score_name = validate_retrieval, "val_mR"
        last = phase.name == "main"
        where = Path(checkpoint_dir) if last else Path(checkpoint_dir) / phase.name
        log.info("phase %s: %d epochs", phase.name, phase.epochs)
        result = run_epochs(
            model,
            optimiser,
            epoch_batches,
            n_batches,
            lambda batch, o=phase.objective: o(model, batch),
            validate,
            epochs=phase.epochs,
            seed=settings["seed"],
            checkpoint_dir=where,
            run_id=fingerprint(run_id, phase.name, lazy_names),
            device=device,
            grad_clip=tr["grad_clip"],
            scheduler=scheduler,
            after_step=after_step,
            stateful={"progress": tracker, "negatives": warmup},
            score_name=score_name,
            progress=progress,
            autocast=amp,
            patience=tr.get("patience") if phase.select_by == "retrieval" else None,
            patience_from=tr.get("negatives_warmup_epochs", 0),
            ceiling_reason="schedule" if scheduler is not None else "ceiling",
            checkpoint_seconds=tr.get("checkpoint_seconds", 0.0),
        )
        if not last:
            # the next phase starts from this phase's last state (LP aligns the language layers)
            log.info("phase %s done: %s", phase.name, result.log.iloc[-1].to_dict() if len(result.log) else {})
    model.load_state_dict(result.best_state)
    model.cpu()
    log.info("best epoch %d, validation mR %.2f", result.best_epoch, result.best_score)
    return TrainedModel(model, vocab, result, text["max_len"])
