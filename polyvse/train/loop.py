"""The epoch loop: Adam, per-epoch validation, best-epoch selection, and a
checkpoint after every epoch that a re-run resumes from.

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
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn
from tqdm import tqdm

from polyvse.io import save_torch, write_tsv
from polyvse.train.data import EncodedCaptions, ImageGroupedBatches, collate

log = logging.getLogger(__name__)

Objective = Callable[[nn.Module, dict[str, Tensor]], dict[str, Tensor]]
"""Maps (model, batch) to named loss terms; the term ``loss`` is optimised."""


@dataclass
class TrainSettings:
    epochs: int = 10
    lr: float = 1e-3
    weight_decay: float = 0.0
    images_per_batch: int = 128
    captions_per_image: int = 2
    grad_clip: float = 2.0
    seed: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class FitResult:
    best_state: dict
    best_epoch: int
    best_score: float
    log: pd.DataFrame
    resumed_from: int = 0
    extra: dict = field(default_factory=dict)


def fingerprint(*parts: object) -> str:
    """A short stable hash of JSON-serialisable parts."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def resolve_device(name: str) -> torch.device:
    """``auto`` picks CUDA when present, else CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def fit(model: nn.Module, objective: Objective, train: EncodedCaptions, features: Tensor,
        validate: Callable[[nn.Module], float], settings: TrainSettings, checkpoint_dir: Path,
        run_id: str, device: torch.device, progress: bool = True) -> FitResult:
    """Train ``model`` and return the state of its best epoch by ``validate``.

    features: ``(N, F)`` image features indexed by ``train.image_row``.
    ``validate(model) -> score`` (higher is better, e.g. validation mR).
    A checkpoint ``checkpoint_dir/last.pt`` is written after every epoch; if it
    exists with the same ``run_id`` the loop resumes after its last epoch.
    """
    checkpoint_dir = Path(checkpoint_dir)
    last_path = checkpoint_dir / "last.pt"
    model.to(device)
    optimiser = torch.optim.Adam([p for p in model.parameters() if p.requires_grad],
                                 lr=settings.lr, weight_decay=settings.weight_decay)
    rows: list[dict] = []
    best = {"epoch": 0, "score": -np.inf, "state": copy.deepcopy(model.state_dict())}
    start = 0
    if last_path.exists():
        ckpt = torch.load(last_path, map_location=device, weights_only=False)
        if ckpt.get("run_id") == run_id:
            model.load_state_dict(ckpt["model"])
            optimiser.load_state_dict(ckpt["optimiser"])
            rows, best, start = ckpt["log"], ckpt["best"], ckpt["epoch"]
            log.info("resumed from checkpoint %s after epoch %d", last_path, start)
        else:
            log.info("checkpoint %s belongs to another configuration; starting afresh", last_path)

    batches = ImageGroupedBatches(train.image_row, settings.images_per_batch, settings.captions_per_image)
    features = features.float()
    for epoch in range(start + 1, settings.epochs + 1):
        # Seeds per epoch make a resumed run draw the same batches as an uninterrupted one.
        rng = np.random.default_rng([settings.seed, epoch])
        torch.manual_seed(settings.seed * 100_003 + epoch)
        model.train()
        t0 = time.perf_counter()
        sums: dict[str, float] = {}
        bar = tqdm(batches.epoch(rng), total=len(batches), desc=f"epoch {epoch}/{settings.epochs}",
                   disable=not progress, file=sys.stderr, mininterval=5.0, leave=False)
        for rows_ix in bar:
            batch = collate(train, rows_ix, features, device)
            terms = objective(model, batch)
            optimiser.zero_grad(set_to_none=True)
            terms["loss"].backward()
            if settings.grad_clip > 0:
                nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
            optimiser.step()
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + float(v.detach())
        model.eval()
        with torch.no_grad():
            score = float(validate(model))
        row = {"epoch": epoch, **{k: v / len(batches) for k, v in sums.items()}, "val_mR": score,
               "seconds": round(time.perf_counter() - t0, 2)}
        rows.append(row)
        if score > best["score"]:
            best = {"epoch": epoch, "score": score, "state": copy.deepcopy(model.state_dict())}
        log.info("epoch %d: %s", epoch, "  ".join(f"{k}={v:.4g}" for k, v in row.items() if k != "epoch"))
        save_torch({"run_id": run_id, "epoch": epoch, "model": model.state_dict(),
                    "optimiser": optimiser.state_dict(), "log": rows, "best": best}, last_path)
        write_tsv(pd.DataFrame(rows), checkpoint_dir / "epochs.tsv", float_format="%.5g")
    return FitResult(best["state"], best["epoch"], float(best["score"]), pd.DataFrame(rows), resumed_from=start)
