"""Training of one grounded-speech variant (thesis §3.1.2).

Adam (β = 0.9, 0.999), batches of 128 datapoints, learning rate 1e-3 with a linear
warm-up over the first 10 % of the steps and ×0.99 every 50 steps after it
(:mod:`polyvse.train.speech_schedule`); the attention layers may have their own rate
(Tables 3.3–3.4). Each batch's K views are contrasted by the variant's framework
(:mod:`polyvse.losses.multiview`) with its loss (:mod:`polyvse.losses.speech_objectives`).
Before training, the longest 5 % of each language's training utterances are cut
to the longest of the rest (§2.4.2.1). After every epoch the model is scored on
the validation split (mean R@1/5/10 over all view pairs, both directions); the
best epoch is kept. Before each validation the batch norms' statistics are recomputed
with the current weights from a few training batches (``bn_recalibration_batches``,
:mod:`polyvse.train.batch_norm`), so that validation, the best epoch's state and the test
score the encoders as trained. The epoch loop, its checkpoints and resumption are the
shared :func:`polyvse.train.loop.run_epochs`.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from torch import Tensor

from polyvse.speech.data import ViewSet
from polyvse.evaluate.speech import evaluate_views, retrieval_scores
from polyvse.models.grounded_speech import GroundedSpeechModel, build_speech_model, parameter_groups
from polyvse.losses.multiview import multiview_loss
from polyvse.losses.speech_objectives import make_objective, step_objective
from polyvse.train.batch_norm import recalibrate_batch_norm
from polyvse.train.speech_schedule import make_adam, speech_lr_scheduler
from polyvse.train.loop import FitResult, fingerprint, resolve_device, run_epochs

log = logging.getLogger(__name__)


RECALIBRATION_STREAM = 7_919
"""Seeds, with the training seed, the rng of the batches the batch norms are recalibrated on."""


def retrieval_normalizes(loss: str, loss_options: Mapping[str, Any]) -> bool:
    """Whether retrieval scores unit vectors: for the hypersphere loss (§3.1.3) and cosine losses."""
    return loss == "hypersphere" or loss_options.get("similarity") == "cosine"


def steps_per_epoch(n: int, batch_size: int) -> int:
    """Batches of an epoch; a last batch of a single datapoint is dropped (nothing to contrast)."""
    full, rest = divmod(n, batch_size)
    return full + (1 if rest >= 2 else 0)


@dataclass
class TrainedSpeechModel:
    model: GroundedSpeechModel
    fit: FitResult
    settings: dict[str, Any]
    max_frames: dict[str, int | None]

    @property
    def normalize(self) -> bool:
        tr = self.settings["training"]
        return retrieval_normalizes(tr["loss"], tr.get("loss_options") or {})

    def saved(self) -> dict[str, Any]:
        """What ``model.pt`` holds: enough to rebuild and evaluate the model."""
        return {
            "family": "grounded_speech",
            "config": self.model.config,
            "state_dict": self.model.state_dict(),
            "best_epoch": self.fit.best_epoch,
            "val_recall": self.fit.best_score,
            "normalize": self.normalize,
            "settings": self.settings,
            "max_frames": self.max_frames,
        }

    def summary(self) -> dict[str, Any]:
        """What params.json records of the training: parameter counts, validation score, and when and why it stopped."""
        return {
            "params": int(self.model.parameter_count()),
            "val_recall": round(float(self.fit.best_score), 3),
            **self.fit.summary(),
            "max_frames": self.max_frames,
        }


class MultiviewData(Protocol):
    """A split's datapoints as the thesis' training reads them (:class:`ViewSet`, or the joint family's views)."""

    def __len__(self) -> int: ...

    def batches(self, batch_size: int, rng: np.random.Generator | None = None) -> Iterator[np.ndarray]: ...

    def batch(self, index: np.ndarray, features: Tensor, device: torch.device | str) -> dict[str, Any]: ...


def fit_multiview(
    model: torch.nn.Module,
    train: MultiviewData,
    features: Tensor,
    training: Mapping[str, Any],
    validate: Callable[[torch.nn.Module], Mapping[str, float]],
    *,
    seed: int,
    checkpoint_dir: Path,
    run_id: str,
    device: torch.device,
    progress: bool = True,
) -> FitResult:
    """The thesis' optimisation (§3.1.2) of a model whose ``views(batch)`` returns its K views: the
    objective and multiview framework of ``training``, Adam under its ``lr_schedule`` (the thesis' warm-up
    and step decay, or a cosine to 0), the
    attention layers at their own rate, after every epoch ``validate`` (its ``val_recall`` picks the
    best epoch) on the model with its batch norms recalibrated on ``bn_recalibration_batches``
    training batches (:func:`polyvse.train.batch_norm.recalibrate_batch_norm`), checkpoints and resumption by :func:`polyvse.train.loop.run_epochs`. Shared by the
    speech family and the joint one (:mod:`polyvse.train.joint`)."""
    tr = training
    objective = make_objective(tr["loss"], **(tr.get("loss_options") or {})).to(device)
    optimiser = make_adam(
        parameter_groups(model, tr["lr"], tr.get("attention_lr")), lr=tr["lr"], weight_decay=tr["weight_decay"]
    )
    batch_size = int(tr["batch_size"])
    n_batches = steps_per_epoch(len(train), batch_size)
    if n_batches == 0:
        raise ValueError(f"{len(train)} training datapoints: need at least 2 to contrast")
    schedule = tr.get("lr_schedule", "step_decay")
    scheduler = speech_lr_scheduler(
        optimiser, schedule, n_batches * int(tr["epochs"]), tr["warmup_fraction"], tr["decay"], tr["decay_every"]
    )

    def batches(rng: np.random.Generator) -> Iterator[dict[str, Any]]:
        for index in train.batches(batch_size, rng):
            if len(index) >= 2:
                yield train.batch(index, features, device)

    def step(batch: dict[str, Any]) -> dict[str, Tensor]:
        return {"loss": multiview_loss(tr["framework"], model.views(batch), objective)}

    def validate_as_trained(m: torch.nn.Module) -> Mapping[str, float]:
        # the same training batches every epoch, drawn by an rng of their own: the epochs'
        # batches, and so a resumed run's, do not depend on the recalibration
        chosen = itertools.islice(
            train.batches(batch_size, np.random.default_rng([seed, RECALIBRATION_STREAM])),
            int(tr["bn_recalibration_batches"]),
        )
        recalibrate_batch_norm(m, (train.batch(i, features, device) for i in chosen if len(i) >= 2), m.views)
        return validate(m)

    return run_epochs(
        model,
        optimiser,
        batches,
        n_batches,
        step,
        validate_as_trained,
        epochs=int(tr["epochs"]),
        seed=seed,
        checkpoint_dir=checkpoint_dir,
        run_id=run_id,
        device=device,
        grad_clip=tr["grad_clip"],
        scheduler=scheduler,
        after_step=lambda: step_objective(objective),
        stateful={"objective": objective},
        score_name="val_recall",
        progress=progress,
        autocast=torch.bfloat16 if tr["amp"] == "bf16" else None,
        patience=tr.get("patience"),
        # at its ceiling a cosine schedule has brought the rate to 0: more epochs could not move the model
        ceiling_reason="schedule" if schedule == "cosine" else "ceiling",
    )


def train_speech(
    train: ViewSet,
    val: ViewSet,
    features: np.ndarray,
    settings: Mapping[str, Any],
    checkpoint_dir: Path,
    threads: int = 1,
    progress: bool = True,
) -> TrainedSpeechModel:
    """Train one variant. ``settings``: ``{"model": {...}, "training": {...}, "seed": int}``
    (``polyvse.speech.settings.speech_variant_settings``); ``features`` ``(N_images, F)`` indexed by the
    view sets' ``image_rows``."""
    torch.set_num_threads(max(1, int(threads)))  # the job's threads: no oversubscription beside other jobs
    tr, seed = settings["training"], int(settings["seed"])
    torch.manual_seed(seed)
    device = resolve_device(tr["device"])
    train = train.truncated(tr["truncate_fraction"])
    # a copy: the features come memory-mapped read-only, and torch warns on a read-only array
    feats = torch.from_numpy(np.array(features, dtype=np.float32))
    model = build_speech_model(settings["model"], train.langs, feats.shape[1]).to(device)
    normalize = retrieval_normalizes(tr["loss"], tr.get("loss_options") or {})

    def validate(m: torch.nn.Module) -> dict[str, float]:
        return retrieval_scores(evaluate_views(model, val, feats, normalize, tr["eval_batch_size"], device))

    run_id = fingerprint(settings, len(train), len(val), list(feats.shape), train.max_frames)
    log.info(
        "training %s with %s (%s framework) on %d datapoints (%s), %d validation; "
        "%d parameters, %d steps of %d; truncation caps %s; device %s%s, %d threads",
        settings["model"].get("pooling"),
        tr["loss"],
        tr["framework"],
        len(train),
        "+".join(train.langs),
        len(val),
        model.parameter_count(),
        steps_per_epoch(len(train), int(tr["batch_size"])) * int(tr["epochs"]),
        int(tr["batch_size"]),
        train.max_frames,
        device,
        " (bf16 autocast)" if tr["amp"] == "bf16" else "",
        threads,
    )
    result = fit_multiview(
        model,
        train,
        feats,
        tr,
        validate,
        seed=seed,
        checkpoint_dir=checkpoint_dir,
        run_id=run_id,
        device=device,
        progress=progress,
    )
    model.load_state_dict(result.best_state)
    model.cpu().eval()
    log.info("best epoch %d, validation recall %.2f", result.best_epoch, result.best_score)
    return TrainedSpeechModel(
        model, result, {k: settings[k] for k in ("model", "training", "seed")}, dict(train.max_frames)
    )
