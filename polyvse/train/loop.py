"""The epoch loop: per-epoch validation, best-epoch selection, and the checkpoints
a re-run resumes from.

:func:`run_epochs` is the loop every training branch shares (the text models'
:mod:`polyvse.train.run`, the grounded-speech models' :mod:`polyvse.train.speech`,
MLMME, the Translator, the latent-vocabulary pretraining).

The checkpoint carries a fingerprint of everything that defines the run
(model config, data sizes, settings): a re-run with other settings starts
afresh instead of resuming a different experiment.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn
from tqdm import tqdm

from polyvse.io import load_torch, save_torch, write_tsv
from polyvse.optim import clip_gradient_norm

log = logging.getLogger(__name__)

Objective = Callable[[nn.Module, dict[str, Tensor]], dict[str, Tensor]]
"""Maps (model, batch) to named loss terms; the term ``loss`` is optimised."""


STOP_REASONS = ("patience", "ceiling", "schedule")
"""Why a training ended: ``patience`` (its validation score had not risen for ``patience``
epochs: it converged), ``ceiling`` (it ran its ceiling of epochs first, at a rate that could have
gone on moving it) or ``schedule`` (it ran its learning-rate schedule to its end, the rate decayed
to zero at the ceiling: :mod:`polyvse.train.lr_schedules`)."""


@dataclass
class FitResult:
    best_state: dict
    best_epoch: int
    best_score: float
    log: pd.DataFrame
    resumed_from: int = 0
    extra: dict = field(default_factory=dict)
    stop_reason: str = "ceiling"

    @property
    def epochs_run(self) -> int:
        return len(self.log)

    def summary(self) -> dict:
        """How the training went, as every family's params.json records it: its best epoch, the epochs
        it ran, why it stopped (:data:`STOP_REASONS`) and the epoch it resumed after (0: none)."""
        return {
            "best_epoch": int(self.best_epoch),
            "epochs_run": int(self.epochs_run),
            "stop_reason": self.stop_reason,
            "resumed_from_epoch": int(self.resumed_from),
        }


LAST_CHECKPOINT = "last.pt"  # in a training's checkpoint_dir: the state after its latest epoch


def fingerprint(*parts: object) -> str:
    """A short stable hash of JSON-serialisable parts."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def resolve_device(name: str) -> torch.device:
    """``auto`` picks CUDA when present, else CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def run_epochs(
    model: nn.Module,
    optimiser: torch.optim.Optimizer,
    batches: Callable[[np.random.Generator], Iterable[object]],
    n_batches: int,
    step: Callable[[object], dict[str, Tensor]],
    validate: Callable[[nn.Module], float | Mapping],
    *,
    epochs: int,
    seed: int,
    checkpoint_dir: Path,
    run_id: str,
    device: torch.device,
    grad_clip: float = 0.0,
    scheduler: object | None = None,
    after_step: Callable[[], None] | None = None,
    stateful: Mapping[str, object] | None = None,
    score_name: str = "val_mR",
    progress: bool = True,
    autocast: torch.dtype | None = None,
    patience: int | None = None,
    patience_from: int = 0,
    ceiling_reason: str = "ceiling",
    checkpoint_seconds: float = 0.0,
) -> FitResult:
    """The epoch loop every training branch shares: train, validate, keep the best, checkpoint,
    and stop when the validation score has stopped rising.

    ``batches(rng)`` yields one epoch's batches (``n_batches`` of them) from an rng seeded
    by (seed, epoch), so a resumed run draws the same batches as an uninterrupted one;
    ``step(batch)`` returns named loss terms of which ``loss`` is optimised;
    ``validate(model)`` returns the score (higher is better) or a mapping holding it
    under ``score_name`` plus further columns for the per-epoch log.
    ``scheduler.step()`` and ``after_step()`` run after every optimiser step; the state of
    the scheduler and of every ``stateful`` object (``state_dict``/``load_state_dict``)
    travels in the checkpoint. A checkpoint ``checkpoint_dir/last.pt`` (with the epochs so far,
    ``epochs.tsv``) is written after the first epoch, then after an epoch that ends
    ``checkpoint_seconds`` or more after the previous write (0: after every epoch), and after the
    loop's last epoch; if it exists with the same ``run_id`` the loop resumes after its epoch. A kill
    loses at most the epochs since the last write: a fine-tuned word table and its Adam moments make
    a checkpoint costly beside a small model's epoch.
    ``autocast``: a lower precision (``torch.bfloat16``) for the step's forward pass on
    ``device`` (automatic mixed precision); the backward pass follows it, the weights stay float32.
    The loop reads nothing back from the device inside an epoch (the loss terms are summed
    there), so on CUDA the host queues the next steps while the device works.

    ``epochs`` is a ceiling: with ``patience`` set, the loop stops after ``patience`` epochs in
    a row that did not beat the best validation score (early stopping: the papers train each
    model to convergence and keep its best epoch). :attr:`FitResult.stop_reason` says which
    ended it; a resumed run that had already run out of patience stops at once.
    ``patience_from``: the epochs up to it train another objective (the warm-up of the hinge
    losses' negatives, :mod:`polyvse.train.negatives`), whose last epoch often scores above the
    papers' objective's first ones: patience counts from the best epoch after them (or from their
    end), while the kept epoch is the best of all. ``ceiling_reason``: the stop reason of a training
    that ran its ceiling out (``schedule`` where ``scheduler`` decays the rate to zero there).
    """
    if ceiling_reason not in STOP_REASONS:
        raise ValueError(f"ceiling_reason must be one of {STOP_REASONS}, got {ceiling_reason!r}")
    if patience is not None and patience < 1:
        raise ValueError(f"patience must be at least 1 epoch, got {patience}")
    if checkpoint_seconds < 0:
        raise ValueError(f"checkpoint_seconds must be at least 0, got {checkpoint_seconds}")
    checkpoint_dir = Path(checkpoint_dir)
    last_path = checkpoint_dir / LAST_CHECKPOINT
    stateful = dict(stateful or {})
    if scheduler is not None:
        stateful["scheduler"] = scheduler
    rows: list[dict] = []
    # the best epoch's state, copied when an epoch beats it: no copy of the initial state is held
    # through the run (at the scale config's 40K latent tokens, 130 MB of the pretraining's peak)
    best = {"epoch": 0, "score": -np.inf, "state": None}
    start = 0

    def write_epochs_log() -> None:
        write_tsv(pd.DataFrame(rows), checkpoint_dir / "epochs.tsv", float_format="%.5g")

    if last_path.exists():
        ckpt = load_torch(last_path, map_location=device)
        if ckpt.get("run_id") != run_id:
            log.info("checkpoint %s belongs to another configuration; starting afresh", last_path)
        elif set(ckpt["model"]) != set(model.state_dict()):
            # same settings, another version of the model's code (e.g. a buffer no longer saved)
            log.info("checkpoint %s holds another model layout; starting afresh", last_path)
        else:
            model.load_state_dict(ckpt["model"])
            optimiser.load_state_dict(ckpt["optimiser"])
            for name, obj in stateful.items():
                obj.load_state_dict(ckpt["state"][name])  # type: ignore[attr-defined]
            rows, best, start = ckpt["log"], ckpt["best"], ckpt["epoch"]
            log.info("resumed from checkpoint %s after epoch %d", last_path, start)
            # a kill between last.pt and its epochs.tsv left the log behind (and its temporary
            # beside it); a run out of patience writes nothing more, so bring the log level now
            write_epochs_log()

    def out_of_patience(done: int) -> bool:
        if patience is None or done <= patience_from:
            return False
        since = patience_from
        top = -np.inf
        for row in rows[patience_from:done]:  # rows[i] is epoch i + 1
            if row[score_name] > top:
                since, top = row["epoch"], row[score_name]
        return done - since >= patience

    written = None  # when this run last wrote the checkpoint
    for epoch in range(start + 1, epochs + 1):
        if out_of_patience(epoch - 1):
            break
        # Seeds per epoch make a resumed run draw the same batches as an uninterrupted one.
        rng = np.random.default_rng([seed, epoch])
        torch.manual_seed(seed * 100_003 + epoch)
        model.train()
        t0 = time.perf_counter()
        sums: dict[str, Tensor] = {}
        bar = tqdm(
            batches(rng),
            total=n_batches,
            desc=f"epoch {epoch}/{epochs}",
            disable=not progress,
            file=sys.stderr,
            mininterval=5.0,
            leave=False,
        )
        for batch in bar:
            with torch.autocast(device.type, dtype=autocast or torch.float32, enabled=autocast is not None):
                terms = step(batch)
            optimiser.zero_grad(set_to_none=True)
            terms["loss"].backward()
            if grad_clip > 0:
                clip_gradient_norm(model.parameters(), grad_clip)
            optimiser.step()
            if scheduler is not None:
                scheduler.step()  # type: ignore[attr-defined]
            if after_step is not None:
                after_step()
            for k, v in terms.items():
                # float64 on the device: the sum Python floats gave, without a sync per step
                term = v.detach().double()
                sums[k] = sums[k] + term if k in sums else term
        # the last step's gradients are not read again (the next step starts by dropping them):
        # validation and the checkpoint get their memory
        optimiser.zero_grad(set_to_none=True)
        model.eval()
        t_val = time.perf_counter()
        with torch.no_grad():
            validated = validate(model)
        validating = time.perf_counter() - t_val
        scores = dict(validated) if isinstance(validated, Mapping) else {score_name: float(validated)}
        score = float(scores[score_name])
        row = {
            "epoch": epoch,
            **{k: float(v) / max(1, n_batches) for k, v in sums.items()},
            **scores,
            "seconds": round(time.perf_counter() - t0, 2),
            "seconds_validating": round(validating, 2),  # of "seconds": what each epoch's selection costs
        }
        rows.append(row)
        if score > best["score"]:
            best["state"] = None  # one copy at a time
            best = {"epoch": epoch, "score": score, "state": copy.deepcopy(model.state_dict())}
        log.info("epoch %d: %s", epoch, "  ".join(f"{k}={v:.4g}" for k, v in row.items() if k != "epoch"))
        final = epoch == epochs or out_of_patience(epoch)
        if not (final or written is None or time.monotonic() - written >= checkpoint_seconds):
            continue
        state = model.state_dict()
        save_torch(
            {
                "run_id": run_id,
                "epoch": epoch,
                "model": state,
                "optimiser": optimiser.state_dict(),
                "log": rows,
                # this epoch the best: its state is the model's, and torch.save writes a storage once
                # (a copy would add a word table's megabytes to every improving epoch's checkpoint)
                "best": {**best, "state": state} if best["epoch"] == epoch else best,
                "state": {name: obj.state_dict() for name, obj in stateful.items()},
            },  # type: ignore[attr-defined]
            last_path,
        )
        write_epochs_log()
        written = time.monotonic()
    # out of patience at the ceiling's last epoch too: converged all the same
    stop_reason = "patience" if out_of_patience(len(rows)) else ceiling_reason
    if best["state"] is None:
        # no epoch validated to a finite score (or none ran): the model as it stands
        log.warning("no epoch of %s validated to a finite score; keeping the last state", checkpoint_dir)
        best["state"] = model.state_dict()
    return FitResult(
        best["state"],
        best["epoch"],
        float(best["score"]),
        pd.DataFrame(rows),
        resumed_from=start,
        stop_reason=stop_reason,
    )
