"""The grounded-speech family's settings (speech_grounding_thesis_2021): a speech variant's
merged settings, and the checks of speech variants and tables, which the workflow runs after
``polyvse.config.check_config`` (its entry in ``polyvse.families``). Kept free of torch: the
workflow reads it while building the DAG.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from polyvse.config import (
    SPEECH_FAMILY,
    ConfigError,
    dataset_langs,
    family_variants,
    layout_reports,
    report_row_variants,
    variant_seed,
)
from polyvse.speech.tts import LANGUAGE_VOICES  # no torch: tts imports numpy and pandas only

SPEECH_LOSS_OPTIONS: dict[str, frozenset[str]] = {
    "hypersphere": frozenset({"lambda_a", "lambda_u", "t", "alpha", "uniformity_kind", "normalize"}),
    "triplet": frozenset({"margin", "similarity", "use_random", "use_hardest"}),
    "infonce": frozenset({"similarity"}),
    "mms": frozenset({"margin", "similarity"}),
    "mms_sched": frozenset({"base", "growth", "every", "max_margin", "similarity"}),
    "mms_adapt": frozenset({"alpha", "similarity", "detach_margin"}),
}
"""Keyword options each loss of ``speech.training.loss`` takes (the constructors of
``polyvse.losses.speech_objectives.OBJECTIVES``; a test keeps the two in step)."""

SPEECH_ADAPTERS = ("synthetic", "places_speech")


def speech_variant_settings(config: Mapping, variant: str) -> dict[str, Any]:
    """Everything one grounded-speech training depends on: ``speech.model`` and
    ``speech.training`` merged with the variant's overrides, its dataset and languages."""
    speech = config.get("speech", {})
    v = config["variants"][variant]
    model = copy.deepcopy(dict(speech.get("model", {})))
    model.update(copy.deepcopy(dict(v.get("model_options") or {})))
    training = copy.deepcopy(dict(speech.get("training", {})))
    training.update(copy.deepcopy(dict(v.get("training_options") or {})))
    dataset = v["dataset"]
    return {
        "dataset": dataset,
        "langs": dataset_langs(config, dataset),
        "model": model,
        "training": training,
        "seed": variant_seed(config, v),
    }


def speech_variant_dataset(config: Mapping, variant: str) -> str:
    return config["variants"][variant]["dataset"]


def speech_report_variants(config: Mapping, report: str) -> list[str]:
    """Variants a speech report reads, in row order, without repeats."""
    return report_row_variants(config, report)


def speech_report_dataset(config: Mapping, report: str) -> str:
    return speech_variant_dataset(config, speech_report_variants(config, report)[0])


def _check_tts(tts: Mapping) -> None:
    """The voice pool of synthetic speech: known languages, non-empty ranges."""
    for lang in tts.get("accents") or {}:
        if lang not in LANGUAGE_VOICES:
            raise ConfigError(
                f"speech.tts.accents.{lang}", f"no synthetic speech in {lang!r}; it has {sorted(LANGUAGE_VOICES)}"
            )
    for key in ("rate_wpm", "pitch"):
        if key in tts and tts[key][0] > tts[key][1]:
            raise ConfigError(f"speech.tts.{key}", f"range {list(tts[key])}: low is above high")


def check_speech_config(config: Mapping, schema: Mapping | None = None) -> None:
    """What the schema cannot check, for every speech variant and report: its dataset speaks
    (adapter synthetic with profile all and voiced languages, or places_speech), its overrides are
    settings of ``speech.model`` / ``speech.training`` (checked against the schema's
    ``$defs`` when ``schema`` is given), its loss options are its loss's, its encoder fits its
    languages and widths; a speech report's rows come from one dataset; the tts voice pool."""
    speech = config.get("speech") or {}
    datasets = config.get("datasets", {})
    variants = {name: config["variants"][name] for name in family_variants(config, SPEECH_FAMILY)}
    validators = {}
    if schema is not None:
        import jsonschema

        defs = schema.get("$defs", {})
        validators = {
            part: jsonschema.Draft202012Validator(defs[f"speech_{part}"])
            for part in ("model", "training")
            if f"speech_{part}" in defs
        }
    _check_tts(speech.get("tts") or {})
    for name in variants:
        key = f"variants.{name}"
        ds_name = speech_variant_dataset(config, name)
        if ds_name not in datasets:
            raise ConfigError(f"{key}.dataset", f"unknown dataset {ds_name!r}")
        ds = datasets[ds_name]
        if ds["adapter"] not in SPEECH_ADAPTERS:
            raise ConfigError(
                f"{key}.dataset",
                f"dataset {ds_name!r} has adapter {ds['adapter']!r}; spoken "
                f"captions come from adapter synthetic or places_speech",
            )
        if ds["adapter"] == "synthetic" and ds["synthetic"]["profile"] != "all":
            raise ConfigError(
                f"datasets.{ds_name}.synthetic.profile",
                f"speech variant {name} trains on this dataset: a speech dataset needs profile all "
                f"(a caption per image in every language)",
            )
        langs = dataset_langs(config, ds_name)
        if ds["adapter"] == "synthetic":
            unvoiced = [l for l in langs if l not in LANGUAGE_VOICES]
            if unvoiced:
                raise ConfigError(
                    f"datasets.{ds_name}.langs",
                    f"no espeak-ng voice configured for {unvoiced}; synthetic speech has {sorted(LANGUAGE_VOICES)}",
                )
        settings = speech_variant_settings(config, name)
        for part in ("model", "training"):
            base = speech.get(part, {})
            for opt in variants[name].get(f"{part}_options") or {}:
                if opt not in base:
                    raise ConfigError(f"{key}.{part}_options.{opt}", f"not a setting of speech.{part}")
            if part in validators:
                error = jsonschema.exceptions.best_match(validators[part].iter_errors(settings[part]))
                if error is not None:
                    where = ".".join(str(p) for p in error.absolute_path)
                    raise ConfigError(f"{key}.{part}_options" + (f".{where}" if where else ""), error.message)
        tr, model = settings["training"], settings["model"]
        loss = tr["loss"]
        for opt in tr.get("loss_options") or {}:
            if opt not in SPEECH_LOSS_OPTIONS[loss]:
                raise ConfigError(
                    f"{key}.training_options.loss_options.{opt}",
                    f"loss {loss} takes {', '.join(sorted(SPEECH_LOSS_OPTIONS[loss]))}",
                )
        if model["sharing"] != "none" and len(langs) < 2:
            raise ConfigError(f"{key}.model_options.sharing", "a shared encoder needs at least two languages")
        if model["internal_attention"] and len(model["widths"]) < 3:
            raise ConfigError(f"{key}.model_options.internal_attention", "needs at least two residual stages in widths")
        attention_dims = [model["widths"][-1]] if model["pooling"] != "avg" else []
        if model["internal_attention"]:
            attention_dims.append(model["widths"][-2])
        for dim in attention_dims:
            if dim % model["heads"]:
                raise ConfigError(f"{key}.model_options.heads", f"{model['heads']} heads do not divide width {dim}")
    for report in layout_reports(config, "speech"):
        used = {config["variants"][v]["dataset"] for v in speech_report_variants(config, report) if v in variants}
        if len(used) > 1:
            raise ConfigError(
                f"reports.{report}",
                f"rows come from several datasets {sorted(used)}; a table's columns are one dataset's view pairs",
            )
