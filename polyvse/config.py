"""Checks of a configuration beyond its schema, and per-variant settings.

The schema (config/schema.yaml) checks keys and types; this module checks what
a schema cannot: that names refer to things that exist. Errors name the key.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A configuration error; the message starts with the offending key."""

    def __init__(self, key: str, reason: str):
        self.key = key
        super().__init__(f"config key {key}: {reason}")


PROTOCOLS = ("direct", "to_en")
"""Evaluation protocols: queries in their own language, or translated into English."""

_PROFILE_HUMAN = {"m30k": ["en", "de", "fr", "cs"], "coco": ["en", "zh", "ja"]}


def dataset_langs(config: Mapping, dataset: str) -> list[str]:
    return list(config["datasets"][dataset].get("langs") or [])


def human_langs(config: Mapping, dataset: str) -> list[str]:
    """Languages with human captions, known from the dataset's adapter and profile."""
    ds = config["datasets"][dataset]
    langs = dataset_langs(config, dataset)
    if ds["adapter"] == "synthetic":
        profile = ds["synthetic"]["profile"]
        human = _PROFILE_HUMAN.get(profile, langs)
    else:  # multi30k
        human = _PROFILE_HUMAN["m30k"]
    return [l for l in langs if l in human]


def protocol_langs(config: Mapping, variant: str, protocol: str) -> list[str]:
    """Languages an evaluation covers: the variant's, or (to_en) every human language."""
    if protocol == "to_en":
        return human_langs(config, config["variants"][variant]["dataset"])
    return variant_eval_langs(config, variant)


def needs_translations(config: Mapping, variant: str, protocol: str = "direct") -> bool:
    """Whether training or testing this variant needs the translation stage."""
    v = config["variants"][variant]
    human = human_langs(config, v["dataset"])
    return (v.get("captions") == "augmented" or protocol != "direct"
            or any(l not in human for l in protocol_langs(config, variant, protocol)))


def variant_eval_langs(config: Mapping, variant: str) -> list[str]:
    v = config["variants"][variant]
    return list(v.get("eval_langs") or v["train_langs"])


def variant_settings(config: Mapping, variant: str) -> dict[str, Any]:
    """Everything one training run depends on: family defaults and training
    settings merged with the variant's overrides."""
    v = config["variants"][variant]
    model = copy.deepcopy(config.get("models", {}).get(v["model"], {}))
    model.update(v.get("model_options") or {})
    training = copy.deepcopy(config.get("training", {}))
    training.update(v.get("training_options") or {})
    return {"model": v["model"], "model_options": model, "training": training,
            "train_langs": list(v["train_langs"]), "eval_langs": variant_eval_langs(config, variant),
            "captions": v.get("captions", "human"), "text": dict(config.get("text", {})),
            "seed": int(config.get("seed", 0))}


def row_sources(row: Mapping) -> list[tuple[str, str]]:
    """(variant, protocol) pairs one table row reads."""
    if row.get("per_dataset"):
        return [(c["variant"], c.get("protocol", "direct")) for c in row["per_dataset"].values()]
    protocol = row.get("protocol", "direct")
    if row.get("variant"):
        return [(row["variant"], protocol)]
    return [(v, protocol) for v in row.get("per_language", {}).values()]


def report_evaluations(config: Mapping, report: str) -> list[tuple[str, str]]:
    """(variant, protocol) evaluations a report reads, in row order, without repeats."""
    out: list[tuple[str, str]] = []
    for row in config["reports"][report]["rows"]:
        for pair in row_sources(row):
            if pair not in out:
                out.append(pair)
    return out


def report_variants(config: Mapping, report: str) -> list[str]:
    """Variants a report reads, in row order, without repeats."""
    return list(dict.fromkeys(v for v, _ in report_evaluations(config, report)))


def report_datasets(config: Mapping, report: str) -> list[str]:
    rep = config["reports"][report]
    return list(rep["datasets"]) if rep.get("layout") == "mule_mt" else [rep["dataset"]]


def check_config(config: Mapping) -> None:
    """Raise :class:`ConfigError` on the first reference to something missing."""
    datasets = config.get("datasets", {})
    if not datasets:
        raise ConfigError("datasets", "no dataset is configured")
    for name, ds in datasets.items():
        if ds["adapter"] == "multi30k":
            root = (ds.get("multi30k") or {}).get("root")
            if not root:
                raise ConfigError(f"datasets.{name}.multi30k.root", "adapter multi30k needs the checkout's path")
            if not Path(root).is_dir():
                raise ConfigError(f"datasets.{name}.multi30k.root", f"directory {root} does not exist")
    from polyvse.text.fasttext_vectors import check_pretrained_paths  # here: it imports ConfigError from us

    check_pretrained_paths(config)
    feats = config.get("image_features", {})
    if feats.get("backbone") == "precomputed":
        for key in ("precomputed_features", "precomputed_ids"):
            if not feats.get(key):
                raise ConfigError(f"image_features.{key}", "backbone precomputed needs this file")
            if not Path(feats[key]).is_file():
                raise ConfigError(f"image_features.{key}", f"file {feats[key]} does not exist")
    if feats.get("backbone") == "resnet152":
        path = feats.get("weights_path")
        if not path or not Path(path).is_file():
            raise ConfigError("image_features.weights_path",
                              f"backbone resnet152 needs local ImageNet weights (torchvision's resnet152 .pth); "
                              f"{path!r} is not a file")
    for name, v in config.get("variants", {}).items():
        if v["dataset"] not in datasets:
            raise ConfigError(f"variants.{name}.dataset", f"unknown dataset {v['dataset']!r}")
        langs = dataset_langs(config, v["dataset"])
        for lang in list(v["train_langs"]) + list(v.get("eval_langs") or []):
            if lang not in langs:
                raise ConfigError(f"variants.{name}", f"language {lang!r} is not in datasets.{v['dataset']}.langs")
        family = config.get("models", {}).get(v["model"], {})
        for key in v.get("model_options") or {}:
            if key not in family:
                raise ConfigError(f"variants.{name}.model_options.{key}", f"not a setting of model {v['model']}")
        for key in v.get("training_options") or {}:
            if key not in config.get("training", {}):
                raise ConfigError(f"variants.{name}.training_options.{key}", "not a training setting")
    for name, rep in config.get("reports", {}).items():
        layout = rep.get("layout", "smalr")
        for ds in report_datasets(config, name):
            if ds not in datasets:
                raise ConfigError(f"reports.{name}.{'datasets' if layout == 'mule_mt' else 'dataset'}",
                                  f"unknown dataset {ds!r}")
        for i, row in enumerate(rep["rows"]):
            key = f"reports.{name}.rows[{i}]"
            given = [k for k in ("variant", "per_language", "per_dataset") if row.get(k)]
            if layout == "mule_mt" and given != ["per_dataset"]:
                raise ConfigError(key, "a mule_mt row gives per_dataset (dataset → variant, protocol)")
            if layout == "smalr" and (len(given) != 1 or given == ["per_dataset"]):
                raise ConfigError(key, "give exactly one of variant or per_language")
            for ds in (row.get("per_dataset") or {}):
                if ds not in report_datasets(config, name):
                    raise ConfigError(key, f"dataset {ds!r} is not one of reports.{name}.datasets")
            for ref, protocol in row_sources(row):
                if ref not in config.get("variants", {}):
                    raise ConfigError(key, f"unknown variant {ref!r}")
                v_ds = config["variants"][ref]["dataset"]
                if layout == "smalr" and v_ds != rep["dataset"]:
                    raise ConfigError(key, f"variant {ref!r} is trained on another dataset than {rep['dataset']!r}")
                if protocol == "to_en" and "en" not in config["variants"][ref]["train_langs"]:
                    raise ConfigError(key, f"protocol to_en needs a variant trained on English; {ref!r} is not")
            for ds, cell in (row.get("per_dataset") or {}).items():
                if config["variants"][cell["variant"]]["dataset"] != ds:
                    raise ConfigError(key, f"variant {cell['variant']!r} is not trained on dataset {ds!r}")
            for lang, ref in (row.get("per_language") or {}).items():
                if lang not in variant_eval_langs(config, ref):
                    raise ConfigError(key, f"variant {ref!r} is not evaluated on {lang!r}")
