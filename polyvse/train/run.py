"""One training run of a model variant, from canonical tables to a trained model."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from polyvse.evaluate.embed import mean_validation_recall
from polyvse.models.registry import build_model
from polyvse.text.vocab import Vocabulary
from polyvse.train.data import encode_captions
from polyvse.train.loop import FitResult, TrainSettings, fingerprint, fit, resolve_device
from polyvse.train.objectives import EmbNObjective

log = logging.getLogger(__name__)


@dataclass
class TrainedModel:
    model: torch.nn.Module
    vocab: Vocabulary
    fit: FitResult
    max_len: int

    def saved(self) -> dict:
        """The dict the train rule writes (model.pt)."""
        return {"family": self.model.family, "config": self.model.config.as_dict(),
                "state_dict": self.model.state_dict(), "vocab": self.vocab.state_dict(),
                "best_epoch": self.fit.best_epoch, "val_mR": self.fit.best_score, "max_len": self.max_len}

    def parameter_summary(self) -> dict:
        train, test = self.model.parameter_counts()
        return {"params_train": int(train), "params_test": int(test), "best_epoch": int(self.fit.best_epoch),
                "val_mR": round(float(self.fit.best_score), 3), "epochs_run": int(len(self.fit.log)),
                "resumed_from_epoch": int(self.fit.resumed_from)}


def training_captions(captions: pd.DataFrame, split: str, langs: list[str], which: str = "human") -> pd.DataFrame:
    """The captions a variant sees: one split, its languages, human (or all) origins."""
    keep = (captions["split"] == split) & captions["lang"].isin(langs)
    if which == "human":
        keep &= captions["origin"] == "human"
    return captions[keep].reset_index(drop=True)


def train_variant(captions: pd.DataFrame, features: np.ndarray, image_ids: list[str],
                  vocab_counts: Mapping[str, Mapping[str, int]], settings: Mapping,
                  checkpoint_dir: Path, threads: int = 1, progress: bool = True) -> TrainedModel:
    """Train one variant as ``settings`` (see polyvse.config.variant_settings) describes."""
    torch.set_num_threads(threads)  # the job's threads: no oversubscription beside other jobs
    langs, tr, text = settings["train_langs"], settings["training"], settings["text"]
    torch.manual_seed(settings["seed"])
    vocab = Vocabulary.from_counts({l: vocab_counts[l] for l in langs}, text["min_count"], text["segmenter"])
    image_index = {img: i for i, img in enumerate(image_ids)}
    train_caps = training_captions(captions, "train", langs, settings["captions"])
    if train_caps.empty:
        raise ValueError(f"no training captions for languages {langs}")
    train_enc = encode_captions(train_caps, vocab, image_index, text["max_len"])
    val_by_lang = {}
    for lang in langs:
        val = training_captions(captions, "val", [lang], "human")
        if not val.empty:
            val_by_lang[lang] = encode_captions(val, vocab, image_index, text["max_len"])
    if not val_by_lang:
        raise ValueError(f"no validation captions for languages {langs}: cannot select the best epoch")
    device = resolve_device(tr["device"])
    feats = torch.from_numpy(np.asarray(features, dtype=np.float32))
    model = build_model(settings["model"], vocab, feats.shape[1], settings["model_options"])
    objective = EmbNObjective(tr["margin"], tr["top_k"], tr["sentence_weight"], tr["neighbourhood_weight"])
    loop = TrainSettings(epochs=tr["epochs"], lr=tr["lr"], weight_decay=tr["weight_decay"],
                         images_per_batch=tr["images_per_batch"], captions_per_image=tr["captions_per_image"],
                         grad_clip=tr["grad_clip"], seed=settings["seed"])
    run_id = fingerprint(settings, len(vocab), feats.shape, len(train_caps))
    log.info("training %s on %s: %d sentences, %d images, vocabulary %d, device %s, %d threads",
             settings["model"], "+".join(langs), len(train_caps), train_enc.image_row.unique().numel(),
             len(vocab), device, threads)
    result = fit(model, objective, train_enc, feats,
                 lambda m: mean_validation_recall(m, feats, val_by_lang), loop,
                 checkpoint_dir, run_id, device, progress)
    model.load_state_dict(result.best_state)
    model.cpu()
    log.info("best epoch %d, validation mR %.2f", result.best_epoch, result.best_score)
    return TrainedModel(model, vocab, result, text["max_len"])
