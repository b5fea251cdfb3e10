"""Settings of a translator variant's runs (the Translator poster: source model, FS / T1 / T2
target models) from the variant and the config's ``translator`` block. Kept free of torch:
the workflow reads it while building the DAG.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from polyvse.config import TRANSLATOR_FAMILY, ConfigError, family_variants, variant_seed

CONFIG_KEY = "translator"
STAGES = ("source", "target")


def translator_block(config: Mapping, variant: str) -> dict:
    """The settings of a translator variant: the config's ``translator`` block, its ``model``
    under the variant's ``model_options`` and its other keys under ``training_options`` (a
    nested block such as ``target_training`` merged key by key), with the variant's dataset,
    ``source`` and ``target`` (its ``train_langs``) and seed."""
    v = config["variants"][variant]
    block = copy.deepcopy(dict(config.get(CONFIG_KEY) or {}))
    block["model"] = {**block.get("model", {}), **(v.get("model_options") or {})}
    for key, value in (v.get("training_options") or {}).items():
        nested = isinstance(block.get(key), Mapping) and isinstance(value, Mapping)
        block[key] = {**block[key], **value} if nested else copy.deepcopy(value)
    block["dataset"] = v["dataset"]
    block["source"], block["target"] = (list(v["train_langs"]) + [None, None])[:2]
    block["seed"] = variant_seed(config, v)
    return block


def check_translator_config(config: Mapping) -> None:
    """What the schema cannot check, for every translator variant: two distinct languages of
    its dataset, and overrides that are settings of the translator block."""
    datasets = config.get("datasets", {})
    block = config.get(CONFIG_KEY) or {}
    for name in family_variants(config, TRANSLATOR_FAMILY):
        v, key = config["variants"][name], f"variants.{name}"
        langs = list(v["train_langs"])
        if len(langs) != 2:
            raise ConfigError(f"{key}.train_langs", f"a translator variant takes [source, target], got {langs}")
        have = datasets[v["dataset"]].get("langs") or []
        for lang in langs:
            if lang not in have:
                raise ConfigError(f"{key}.train_langs", f"{lang!r} is not in datasets.{v['dataset']}.langs")
        for opt in v.get("model_options") or {}:
            if opt not in (block.get("model") or {}):
                raise ConfigError(f"{key}.model_options.{opt}", "not a setting of translator.model")
        for opt, value in (v.get("training_options") or {}).items():
            if opt == "model" or opt not in block:
                raise ConfigError(f"{key}.training_options.{opt}", "not a setting of the translator block")
            if isinstance(block[opt], Mapping):
                if not isinstance(value, Mapping):
                    raise ConfigError(f"{key}.training_options.{opt}", "expected a mapping of its settings")
                for sub in value:
                    if sub not in block[opt]:
                        raise ConfigError(f"{key}.training_options.{opt}.{sub}", f"not a setting of translator.{opt}")


def translator_settings(config: Mapping, variant: str, stage: str) -> dict:
    """Settings of one training stage (``source`` or ``target``) of a translator variant:
    sizes, the stage's optimisation block, margin, text settings and seed; the target stage
    also the image branch its models start from (``image_branch``)."""
    block = translator_block(config, variant)
    if stage not in STAGES:
        raise ConfigError(CONFIG_KEY, f"unknown training stage {stage!r} (source or target)")
    settings = {
        "model": dict(block["model"]),
        "training": dict(block[f"{stage}_training"]),
        "margin": float(block["margin"]),
        "text": dict(config.get("text", {})),
        "seed": block["seed"],
        "device": block["device"],
    }
    if stage == "target":  # not the source's: its run id stays the same under either setting
        settings["image_branch"] = block["image_branch"]
    return settings


def needs_source_model(config: Mapping, variant: str, protocol: str) -> bool:
    """Whether a target run of ``protocol`` reads the trained source model: T1 and T2
    (their text encoder), and every protocol when the variant's ``image_branch`` is ``source``."""
    return protocol != "FS" or translator_block(config, variant)["image_branch"] == "source"
