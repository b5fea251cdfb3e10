"""What a table row needs from the translation stage, and what runs without it.

Rows that train on MT-augmented captions, test on translated captions (a language
without human captions, the Trans. to En and CLC protocols), map rare words with a
dictionary, or start from a pretraining on augmented captions need machine
translation; the Translator needs a bilingual dictionary. A real-data config with
an offline backend (``transfer``, ``dictionary``) and no ``translate.dictionaries`` has neither:
:func:`prune_to_available` then leaves those rows (and figure points, and the
Translator curve) out of the run, so that everything else — the human-only rows of
every table — runs, and says which were left out and how to bring them back.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from polyvse.config import WORD_LAYOUTS, human_langs, protocol_langs, row_sources, variant_settings

HOW_TO_TRANSLATE = (
    "give MUSE-format dictionaries in translate.dictionaries, or translate.backend: googletrans "
    "(online) or a module:Class backend"
)


def dictionaries_available(config: Mapping, dataset: str) -> bool:
    """A synthetic dataset writes its own MUSE dictionaries; other data need translate.dictionaries."""
    return bool(config["translate"].get("dictionaries")) or config["datasets"][dataset]["adapter"] == "synthetic"


def mt_available(config: Mapping, dataset: str) -> bool:
    """Whether the translation stage can run on ``dataset``: an online or custom backend, or dictionaries."""
    return config["translate"]["backend"] not in ("transfer", "dictionary") or dictionaries_available(config, dataset)


def variant_mt_needs(config: Mapping, variant: str, protocol: str = "direct") -> list[str]:
    """Why training or testing ``variant`` with ``protocol`` needs MT or dictionaries (empty: it needs neither)."""
    v = config["variants"][variant]
    human = human_langs(config, v["dataset"])
    reasons = []
    if v.get("captions") == "augmented":
        reasons.append("trains on MT-augmented captions")
    if protocol != "direct":
        reasons.append(f"protocol {protocol} translates the queries")
    translated = [l for l in protocol_langs(config, variant, protocol) if l not in human]
    if translated:
        reasons.append(f"tests {', '.join(translated)} on translated captions")
    settings = variant_settings(config, variant)
    if (settings.get("vocabulary") or {}).get("dictionary_threshold"):
        reasons.append("maps rare words with a dictionary")
    pretrain = settings["model_options"].get("pretrain")
    if pretrain and (config.get("pretrain", {}).get(pretrain) or {}).get("captions", "augmented") == "augmented":
        reasons.append(f"starts from pretraining {pretrain} on augmented captions")
    return reasons


def _missing(config: Mapping, sources: list[tuple[str, str]]) -> list[str]:
    out = []
    for variant, protocol in sources:
        dataset = config["variants"][variant]["dataset"]
        reasons = variant_mt_needs(config, variant, protocol)
        if reasons and not mt_available(config, dataset):
            out.append(f"{variant} ({'; '.join(reasons)})")
        elif any("dictionary" in r for r in reasons) and not dictionaries_available(config, dataset):
            out.append(f"{variant} (maps rare words with a dictionary)")
    return out


def prune_to_available(config: Mapping) -> tuple[dict[str, Any], list[str]]:
    """``config`` without the rows, figure points and Translator curves that need unavailable MT or
    dictionaries, and one line for each thing left out. A table keeps a note naming its left-out
    rows; a table or figure left with nothing is dropped. Unchanged (and no lines) when MT is there.
    """
    pruned: dict[str, Any] = copy.deepcopy(dict(config))
    lines: list[str] = []
    for name, rep in list(pruned.get("reports", {}).items()):
        if rep.get("layout") == "translator_curve":
            variant = rep["rows"][0]["variant"] if rep.get("rows") else None
            dataset = (config.get("variants", {}).get(variant) or {}).get("dataset")
            if dataset in pruned["datasets"] and not dictionaries_available(config, dataset):
                del pruned["reports"][name]
                lines.append(f"reports.{name}: the Translator's alignment needs a bilingual dictionary")
            continue
        if rep.get("layout", "smalr") not in WORD_LAYOUTS:
            continue  # speech, mlmme and joint models read human captions only
        kept, dropped = [], []
        for row in rep["rows"]:
            missing = _missing(config, row_sources(row))
            (dropped if missing else kept).append((row, missing))
        if not dropped:
            continue
        for row, missing in dropped:
            lines.append(f"reports.{name} row {row['name']!r}: {'; '.join(missing)}")
        if kept:
            rep["rows"] = [row for row, _ in kept]
            rep["notes"] = list(rep.get("notes") or []) + [
                "Left out of this run, for want of machine translation or dictionaries: "
                + ", ".join(row["name"] for row, _ in dropped)
                + f" ({HOW_TO_TRANSLATE})."
            ]
        else:
            del pruned["reports"][name]
    for name, fig in list(pruned.get("figures", {}).items()):
        points = []
        for point in fig["points"]:
            refs = list(point.get("variants") or []) + list((point.get("per_dataset") or {}).values())
            missing = _missing(config, [(r, "direct") for r in refs])
            if missing:
                lines.append(f"figures.{name} point {point.get('label') or point['series']!r}: {'; '.join(missing)}")
            else:
                points.append(point)
        if points:
            fig["points"] = points
        else:
            del pruned["figures"][name]
    return pruned, lines
