"""One job, several trainings: a variant and its seed replicas train one after the other in one job
(the workflow's ``*_seeds`` rules), which reads their shared inputs once. A training rule's
per-training params and outputs are then lists, one item per training, where a job of one training
has single values; :func:`per_training` reads both alike, and :func:`job_trainings` gives each
training of a job with the files it writes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from polyvse.io import save_torch, write_json, write_tsv
from polyvse.train.checkpoints import claim_for_inputs
from polyvse.train.loop import FitResult


def per_training(*values: Any) -> list[tuple]:
    """Zip per-training values: each a single value (a path, or a dict of settings: a job of one
    training) or a sequence of them (a group's, in member order). ``[(a0, b0, …), (a1, b1, …)]``."""
    lists = [[v] if isinstance(v, (str, dict)) else list(v) for v in values]
    sizes = {len(items) for items in lists}
    if len(sizes) != 1:
        raise ValueError(f"per-training values of different lengths: {[len(items) for items in lists]}")
    return list(zip(*lists))


def first_of(value: Any) -> Any:
    """The first training's value: what the group's members share (their inputs' settings)."""
    return value if isinstance(value, (str, dict)) else next(iter(value))


@dataclass(frozen=True)
class Training:
    """One training of a job: its settings, its checkpoint folder, and the files it writes."""

    settings: dict
    checkpoint_dir: Path
    model: str  # model.pt: the best epoch's model
    epochs: str  # epochs.tsv: one row an epoch
    params: str  # params.json: the training's summary
    evaluation: str  # the job's test evaluation of the model

    @property
    def name(self) -> str:
        """The model's folder name: the variant (or MLMME run), ``…-s{k}`` for a seed replica."""
        return Path(self.model).parent.name


def job_trainings(params: Any, outputs: Any, inputs: Iterable[str]) -> Iterator[Training]:
    """A training job's trainings in member order, from its rule's ``params`` (``settings``,
    ``checkpoint_dir``) and ``outputs`` (``model``, ``epochs``, ``params``, ``evaluation``), each a single
    value or one a member (:func:`per_training`). Each checkpoint folder is claimed for the job's
    ``inputs`` as its training comes up, so a checkpoint trained from other files is dropped
    (polyvse.train.checkpoints)."""
    inputs = list(inputs)
    members = per_training(
        params.settings, params.checkpoint_dir, outputs.model, outputs.epochs, outputs.params, outputs.evaluation
    )
    for settings, checkpoint_dir, *files in members:
        training = Training(settings, Path(checkpoint_dir), *files)
        claim_for_inputs(training.checkpoint_dir, inputs)
        yield training


class Trained(Protocol):
    """What the word, speech, joint and MLMME trainers return; the pretraining and the Translator
    write their own files."""

    fit: FitResult

    def saved(self) -> dict: ...

    def summary(self) -> dict: ...


def write_trained(trained: Trained, training: Training, summary: dict[str, Any]) -> dict:
    """Write ``training``'s epochs.tsv, params.json (``summary``) and model.pt; return what model.pt
    holds, from which the job evaluates the model as a user will load it."""
    write_tsv(trained.fit.log, training.epochs, float_format="%.5g")
    write_json(summary, training.params)
    saved = trained.saved()
    save_torch(saved, training.model)
    return saved
