"""Settings of the Translator poster's runs (source model, FS / T1 / T2 target
models) from the config's ``translator`` block. Kept free of torch: the
workflow reads it while building the DAG.
"""

from __future__ import annotations

from collections.abc import Mapping

from polyvse.config import ConfigError

CONFIG_KEY = "translator"


def check_translator_config(config: Mapping) -> None:
    """What the schema cannot check: the dataset exists and has both languages."""
    block = config[CONFIG_KEY]
    datasets = config.get("datasets", {})
    if block["dataset"] not in datasets:
        raise ConfigError(f"{CONFIG_KEY}.dataset", f"unknown dataset {block['dataset']!r}")
    have = datasets[block["dataset"]].get("langs") or []
    for key in ("source", "target"):
        if block[key] not in have:
            raise ConfigError(f"{CONFIG_KEY}.{key}", f"{block[key]!r} is not in datasets.{block['dataset']}.langs")
    if block["source"] == block["target"]:
        raise ConfigError(f"{CONFIG_KEY}.target", "source and target are the same language")


def translator_settings(config: Mapping, stage: str) -> dict:
    """Settings of one training stage (``source`` or ``target``): sizes, the
    stage's optimisation block, margin, text settings and seed; the target stage
    also the image branch its models start from (``image_branch``)."""
    block = config[CONFIG_KEY]
    if stage not in ("source", "target"):
        raise ConfigError(CONFIG_KEY, f"unknown training stage {stage!r} (source or target)")
    settings = {
        "model": dict(block["model"]),
        "training": dict(block[f"{stage}_training"]),
        "margin": float(block["margin"]),
        "text": dict(config.get("text", {})),
        "seed": int(config.get("seed", 0)),
        "device": block["device"],
    }
    if stage == "target":  # not the source's: its run id stays the same under either setting
        settings["image_branch"] = block["image_branch"]
    return settings


def needs_source_model(config: Mapping, protocol: str) -> bool:
    """Whether a target run of ``protocol`` reads the trained source model: T1 and T2
    (their text encoder), and every protocol when ``translator.image_branch`` is ``source``."""
    return protocol != "FS" or config[CONFIG_KEY]["image_branch"] == "source"
