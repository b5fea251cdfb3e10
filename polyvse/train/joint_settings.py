"""The joint family's settings (polyvse.models.joint): a variant's merged settings, and the checks of its
variants and of the any_to_any reports, which the workflow runs after ``polyvse.config.check_config``
(its entry in ``polyvse.families``), so that the family's rules live beside it."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from polyvse.config import (
    JOINT_FAMILY,
    ConfigError,
    human_langs,
    variant_seed,
)
from polyvse.speech.settings import SPEECH_LOSS_OPTIONS


def joint_variant_settings(config: Mapping, variant: str) -> dict[str, Any]:
    """Everything one joint training depends on: ``speech.model`` + ``models.joint`` and
    ``speech.training``, merged with the variant's overrides; its languages and dataset."""
    v = config["variants"][variant]
    speech = config.get("speech", {})
    options = dict(v.get("model_options") or {})
    joint = copy.deepcopy(dict(config.get("models", {}).get(JOINT_FAMILY, {})))
    model = copy.deepcopy(dict(speech.get("model", {})))
    model.update({k: val for k, val in options.items() if k in model})
    joint.update({k: val for k, val in options.items() if k in joint})
    model["text"] = joint
    training = copy.deepcopy(dict(speech.get("training", {})))
    training.update(copy.deepcopy(dict(v.get("training_options") or {})))
    return {
        "dataset": v["dataset"],
        "text_langs": list(v["train_langs"]),
        "speech_langs": list(v.get("speech_langs") or []),
        "model": model,
        "training": training,
        "text": dict(config.get("text", {})),
        "cap_idx": int((speech.get("tts") or {}).get("cap_idx", 0)),
        "seed": variant_seed(config, v),
    }


def check_joint_config(config: Mapping, schema: Mapping | None = None) -> None:
    """Raise :class:`ConfigError` on the first bad joint variant or any_to_any report; ``schema``
    (config/schema.yaml, loaded) checks the variants' overrides of speech.model and speech.training."""
    for name, v in config.get("variants", {}).items():
        if v["model"] == JOINT_FAMILY:
            _check_joint_variant(config, name, schema)
    for name, rep in config.get("reports", {}).items():
        if rep.get("layout") == "any_to_any":
            _check_any_to_any_report(config, name)


def _check_joint_variant(config: Mapping, name: str, schema: Mapping | None) -> None:
    """A joint variant: a dataset with written captions and, for spoken languages, utterances
    (synthetic profile all); overrides that name settings of models.joint, speech.model or
    speech.training, valid against their schema; a loss's own options."""
    v, key = config["variants"][name], f"variants.{name}"
    ds_name = v["dataset"]
    ds = config["datasets"][ds_name]
    if v.get("captions", "human") != "human" or v.get("eval_langs") or any((v.get("vocabulary") or {}).values()):
        raise ConfigError(
            key, "a joint model trains on human captions of its languages (no captions, eval_langs, vocabulary)"
        )
    if v.get("speech_langs"):
        if ds["adapter"] != "synthetic":
            raise ConfigError(
                f"{key}.dataset",
                f"dataset {ds_name!r} has adapter {ds['adapter']!r}: a joint model with speech_langs needs "
                "a written and a spoken caption of every image (adapter synthetic, profile all)",
            )
        if ds["synthetic"]["profile"] != "all":
            raise ConfigError(
                f"datasets.{ds_name}.synthetic.profile",
                f"joint variant {name} hears this dataset: a speech dataset needs profile all "
                "(a caption per image in every language)",
            )
    human = human_langs(config, ds_name)
    written = [l for l in v["train_langs"] if l not in human]
    if written:
        raise ConfigError(f"{key}.train_langs", f"dataset {ds_name!r} has no human captions in {written}")
    speech = config.get("speech", {})
    joint = config.get("models", {}).get(JOINT_FAMILY, {})
    for opt in v.get("model_options") or {}:
        if opt not in joint and opt not in speech.get("model", {}):
            raise ConfigError(f"{key}.model_options.{opt}", "not a setting of models.joint or speech.model")
    for opt in v.get("training_options") or {}:
        if opt not in speech.get("training", {}):
            raise ConfigError(f"{key}.training_options.{opt}", "not a setting of speech.training")
    settings = joint_variant_settings(config, name)
    if schema is not None:
        import jsonschema

        defs = schema.get("$defs", {})
        parts = {
            "model_options": ("speech_model", {k: x for k, x in settings["model"].items() if k != "text"}),
            "training_options": ("speech_training", settings["training"]),
        }
        for part, (ref, value) in parts.items():
            error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(defs[ref]).iter_errors(value))
            if error is not None:
                where = ".".join(str(p) for p in error.absolute_path)
                raise ConfigError(f"{key}.{part}" + (f".{where}" if where else ""), error.message)
    tr = settings["training"]
    for opt in tr.get("loss_options") or {}:
        if opt not in SPEECH_LOSS_OPTIONS[tr["loss"]]:
            raise ConfigError(
                f"{key}.training_options.loss_options.{opt}",
                f"loss {tr['loss']} takes {', '.join(sorted(SPEECH_LOSS_OPTIONS[tr['loss']]))}",
            )
    text = settings["model"]["text"]
    ft_dim = (config.get("fasttext") or {}).get("dim", 300)
    if text["word_vectors"] == "fasttext" and int(text["word_dim"]) != int(ft_dim):
        raise ConfigError(
            f"{key}.model_options.word_dim", f"word_vectors fasttext needs word_dim = fasttext.dim ({ft_dim})"
        )


def _check_any_to_any_report(config: Mapping, report: str) -> None:
    """An any_to_any report: its first row a joint variant, every row's model of the report's dataset.

    That every row names one joint or speech variant, directly, is checked with the other
    reports of a family's layout (``polyvse.config.check_config``)."""
    rep, variants = config["reports"][report], config.get("variants", {})
    for i, row in enumerate(rep["rows"]):
        where = f"reports.{report}.rows[{i}]"
        v = variants[row["variant"]]
        if i == 0 and v["model"] != JOINT_FAMILY:
            raise ConfigError(where, "the first row of an any_to_any report is the joint model")
        if v["dataset"] != rep["dataset"]:
            raise ConfigError(
                where, f"its model is trained on {v['dataset']!r}, the report's dataset is {rep['dataset']!r}"
            )
