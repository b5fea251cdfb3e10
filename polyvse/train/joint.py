"""Training of one joint text–speech–image variant (:mod:`polyvse.models.joint`).

The thesis' training (speech_grounding_thesis_2021 §3.1.2) on more views: Adam with the linear
warm-up and step decay of :mod:`polyvse.train.speech_schedule`, batches of datapoints, each batch's K
views (the image, each spoken language, each written language) contrasted by the variant's
multiview framework (§2.3, §4.1) with its pairwise objective (§3.1.4.1). A datapoint is an image
with its utterance in every spoken language and, in every written language, the caption that
was spoken (``speech.tts.cap_idx``; the first caption where none was spoken), so that the text
and speech views of a language say the same sentence. After every epoch the model retrieves
between every ordered pair of views on the validation split (mean of R@1/5/10); the best epoch
is kept. The epoch loop, checkpoints and resumption are :func:`polyvse.train.loop.run_epochs`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from polyvse.data.tables import spoken_captions
from polyvse.models.joint import JointModel, build_joint_model
from polyvse.speech.data import ViewSet
from polyvse.evaluate.speech import ordered_pair_retrieval
from polyvse.train.speech import fit_multiview, retrieval_normalizes, steps_per_epoch
from polyvse.text.encoded import padded_tokens
from polyvse.text.vocab import Vocabulary
from polyvse.train.loop import FitResult, fingerprint, resolve_device

log = logging.getLogger(__name__)


@dataclass
class JointViews:
    """The datapoints of one split: N images, their utterances (``speech``, a :class:`ViewSet` over
    the same images in the same order, or None) and their written captions.

    image_ids ``(N,)``; image_rows ``(N,)`` rows of the feature matrix; text ``{lang: (tokens (N, T),
    lengths (N,))}``.
    """

    image_ids: list[str]
    image_rows: np.ndarray
    speech: ViewSet | None
    text: dict[str, tuple[Tensor, Tensor]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.image_ids)

    @property
    def speech_langs(self) -> tuple[str, ...]:
        return self.speech.langs if self.speech is not None else ()

    def truncated(self, fraction: float) -> "JointViews":
        """The same set with the utterances' truncation caps (thesis §2.4.2.1) computed on it."""
        speech = self.speech.truncated(fraction) if self.speech is not None else None
        return JointViews(self.image_ids, self.image_rows, speech, self.text)

    def batch(self, index: np.ndarray | Sequence[int], features: Tensor, device: torch.device | str) -> dict[str, Any]:
        """``{"image": (B, F), "speech": {lang: (x, lengths)}, "text": {lang: (tokens (B, T), lengths (B,))}}``."""
        index = np.asarray(index, dtype=np.int64)
        if self.speech is not None:
            out = self.speech.batch(index, features, device)
        else:
            rows = torch.as_tensor(self.image_rows[index], dtype=torch.long)
            out = {"image": features[rows].to(device), "speech": {}}
        rows_t = torch.as_tensor(index, dtype=torch.long)
        text = {}
        for lang, (tokens, lengths) in self.text.items():
            lens = lengths[rows_t]
            text[lang] = (tokens[rows_t, : int(lens.max())].to(device), lens)
        out["text"] = text
        return out

    def batches(self, batch_size: int, rng: np.random.Generator | None = None) -> Iterator[np.ndarray]:
        """Index arrays of ``batch_size`` datapoints (the last one smaller), shuffled by ``rng``."""
        order = rng.permutation(len(self)) if rng is not None else np.arange(len(self))
        for lo in range(0, len(order), batch_size):
            yield order[lo : lo + batch_size]


def joint_views(
    captions: pd.DataFrame,
    split: str,
    text_langs: Sequence[str],
    vocab: Vocabulary | None,
    max_len: int,
    cap_idx: int,
    image_index: Mapping[str, int],
    speech: ViewSet | None,
) -> JointViews:
    """The datapoints of ``split`` that have every view: the speech set's images (or, without
    speech, the split's captioned images in captions order) that have a caption in every
    written language. Raises ValueError when none has."""
    chosen = spoken_captions(captions, split, text_langs, cap_idx) if text_langs else captions.iloc[:0]
    by_lang = {lang: chosen[chosen["lang"] == lang].set_index("image_id")["text"] for lang in text_langs}
    if speech is not None:
        candidates = list(speech.image_ids)
    else:
        candidates = list(dict.fromkeys(captions.loc[captions["split"] == split, "image_id"]))
    keep = [i for i, image_id in enumerate(candidates) if all(image_id in by_lang[l].index for l in text_langs)]
    if not keep:
        raise ValueError(f"no {split} image has every view (written {list(text_langs)}, spoken {speech_langs(speech)})")
    image_ids = [candidates[i] for i in keep]
    if speech is not None and len(keep) < len(candidates):
        speech = ViewSet(
            speech.langs,
            image_ids,
            speech.image_rows[keep],
            speech.stores,
            {lang: rows[keep] for lang, rows in speech.store_rows.items()},
            dict(speech.max_frames),
        )
    missing = [i for i in image_ids if i not in image_index]
    if missing:
        raise KeyError(f"{len(missing)} {split} images have no image features, e.g. {missing[:3]}")
    text = {}
    for lang in text_langs:
        assert vocab is not None
        text[lang] = padded_tokens([vocab.encode(t, lang, max_len) for t in by_lang[lang].loc[image_ids].tolist()])
    rows = np.array([image_index[i] for i in image_ids], dtype=np.int64)
    return JointViews(image_ids, rows, speech, text)


def speech_langs(speech: ViewSet | None) -> list[str]:
    return list(speech.langs) if speech is not None else []


@torch.no_grad()
def embed_joint_views(
    model: JointModel, views: JointViews, features: Tensor, batch_size: int = 64, device: torch.device | str = "cpu"
) -> dict[str, np.ndarray]:
    """Every view of ``views`` embedded: ``{view name: (N, D)}`` float32 in datapoint order.

    Datapoints are batched by the length of their first utterance (less padding); the audio
    encoders mask padding, so the result does not depend on the batching.
    """
    model.eval()
    n = len(views)
    lengths = views.speech.lengths(views.speech.langs[0]) if views.speech is not None else np.zeros(n)
    order = np.argsort(lengths, kind="stable")
    out = {name: np.empty((n, model.embed_dim), dtype=np.float32) for name in model.view_names}
    for lo in range(0, n, batch_size):
        index = order[lo : lo + batch_size]
        for name, emb in zip(model.view_names, model.views(views.batch(index, features, device))):
            out[name][index] = emb.float().cpu().numpy()
    return out


@dataclass
class TrainedJointModel:
    model: JointModel
    vocab: Vocabulary | None
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
            "family": "joint",
            "config": self.model.config,
            "state_dict": self.model.state_dict(),
            "vocab": self.vocab.state_dict() if self.vocab is not None else None,
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
            "views": self.model.view_names,
            "vocabulary_size": len(self.vocab) if self.vocab is not None else 0,
            "val_recall": round(float(self.fit.best_score), 3),
            **self.fit.summary(),
            "max_frames": self.max_frames,
        }


def train_joint(
    train: JointViews,
    val: JointViews,
    features: np.ndarray,
    vocab: Vocabulary | None,
    word_vectors: Tensor | None,
    settings: Mapping[str, Any],
    checkpoint_dir: Path,
    threads: int = 1,
    progress: bool = True,
) -> TrainedJointModel:
    """Train one joint variant. ``settings``: ``polyvse.train.joint_settings.joint_variant_settings``;
    ``features`` ``(N_images, F)`` indexed by the views' ``image_rows``; ``word_vectors``
    ``(len(vocab), word_dim)`` initial word embeddings or None (random)."""
    torch.set_num_threads(max(1, int(threads)))  # the job's threads: no oversubscription beside other jobs
    tr, seed = settings["training"], int(settings["seed"])
    torch.manual_seed(seed)
    device = resolve_device(tr["device"])
    train = train.truncated(tr["truncate_fraction"])
    feats = torch.from_numpy(np.array(features, dtype=np.float32))  # a copy: the features may be a read-only memmap
    model = build_joint_model(
        settings["model"],
        train.speech_langs,
        list(train.text),
        feats.shape[1],
        len(vocab) if vocab is not None else 0,
        word_vectors,
    ).to(device)
    normalize = retrieval_normalizes(tr["loss"], tr.get("loss_options") or {})

    def validate(m: torch.nn.Module) -> dict[str, float]:
        table = ordered_pair_retrieval(
            embed_joint_views(model, val, feats, tr["eval_batch_size"], device), model.view_names, normalize
        )
        return {"val_recall": float(table["mr"].mean())}

    speech_caps = dict(train.speech.max_frames) if train.speech is not None else {}
    run_id = fingerprint(settings, len(train), len(val), list(feats.shape), speech_caps)
    log.info(
        "training a joint model of views %s with %s (%s framework) on %d datapoints, %d validation; "
        "%d parameters, %d steps of %d; device %s%s, %d threads",
        ", ".join(model.view_names),
        tr["loss"],
        tr["framework"],
        len(train),
        len(val),
        model.parameter_count(),
        steps_per_epoch(len(train), int(tr["batch_size"])) * int(tr["epochs"]),
        int(tr["batch_size"]),
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
    return TrainedJointModel(model, vocab, result, dict(settings), speech_caps)
