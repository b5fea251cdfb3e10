"""The earlier config dialect, recognised and rewritten into the present one.

Until the one-dialect change (docs/architecture.md, The config dialect), speech models and
tables lived under ``speech.variants`` / ``speech.reports``, and MLMME Table 1 and the
Translator curve were switched on by name in ``extra_reports`` with their dataset, languages
and caption in the ``mlmme`` / ``translator`` blocks. Now every model is a ``variants:``
entry (``model: speech | mlmme | translator``) and every table a ``reports:`` entry whose
layout says what it shows. :func:`migrate` rewrites a config of the earlier dialect;
:func:`earlier_dialect_key` names the first key that shows one, so the workflow can say so.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

# The defaults these keys had in the earlier schema: a config that left them out meant these.
_MLMME_DEFAULTS = {
    "dataset": "m30k",
    "langs": ["en", "de"],
    "caption": "MLMME vs VSE: image–sentence ranking (Calixto et al. 2017, Table 1 layout)",
}
_TRANSLATOR_DEFAULTS = {
    "dataset": "m30k",
    "source": "de",
    "target": "fr",
    "caption": "Translator: recall against the number of target-language training examples (poster Figure 3 layout)",
}
_REPORT_NAMES = {"mlmme_table1": ("mlmme", "mlmme"), "translator_curve": ("translator", "translator_curve")}


def earlier_dialect_key(config: Mapping) -> str | None:
    """The first key that only the earlier dialect has (dotted), or None."""
    if "extra_reports" in config:
        return "extra_reports"
    speech = config.get("speech") or {}
    for key in ("variants", "reports"):
        if key in speech:
            return f"speech.{key}"
    for block, defaults in (("mlmme", _MLMME_DEFAULTS), ("translator", _TRANSLATOR_DEFAULTS)):
        for key in defaults:
            if key in (config.get(block) or {}):
                return f"{block}.{key}"
    return None


def _free_name(name: str, taken: Mapping) -> str:
    candidate, k = name, 2
    while candidate in taken:
        candidate, k = f"{name}_{k}", k + 1
    return candidate


def migrate(config: Mapping) -> dict[str, Any]:
    """A copy of ``config`` in the present dialect (unchanged when it already is).

    speech.variants.X → variants.X (model speech; its ``model`` / ``training`` overrides become
    ``model_options`` / ``training_options``; dataset ``spoken`` unless it named one);
    speech.reports.T → reports.T (layout speech); any_to_any rows' ``speech_variant`` → ``variant``;
    extra_reports mlmme_table1 / translator_curve → a variant (model mlmme / translator, with the
    block's dataset and languages) and a report of one row (layout mlmme / translator_curve,
    with the block's caption). A variant name already taken gets a suffix (``_2``, ...).
    """
    out = copy.deepcopy(dict(config))
    variants = dict(out.get("variants") or {})
    reports = dict(out.get("reports") or {})
    speech = dict(out.get("speech") or {})
    renamed: dict[str, str] = {}
    for name, v in (speech.pop("variants", None) or {}).items():
        v = dict(v or {})
        new = _free_name(name, variants)
        renamed[name] = new
        entry: dict[str, Any] = {"model": "speech", "dataset": v.pop("dataset", "spoken")}
        if v.get("seed") is not None:
            entry["seed"] = v["seed"]
        if v.get("model"):
            entry["model_options"] = v["model"]
        if v.get("training"):
            entry["training_options"] = v["training"]
        variants[new] = entry
    for name, rep in (speech.pop("reports", None) or {}).items():
        rep = copy.deepcopy(dict(rep))
        rep["rows"] = [{**row, "variant": renamed.get(row["variant"], row["variant"])} for row in rep.get("rows", [])]
        reports[name] = {"layout": "speech", **rep}
    for rep in reports.values():
        for row in rep.get("rows") or []:
            if row.get("speech_variant"):
                row["variant"] = renamed.get(row["speech_variant"], row["speech_variant"])
                del row["speech_variant"]
    for report in out.pop("extra_reports", None) or []:
        block_name, layout = _REPORT_NAMES[report]
        defaults = _MLMME_DEFAULTS if block_name == "mlmme" else _TRANSLATOR_DEFAULTS
        block = dict(out.get(block_name) or {})
        given = {k: block.pop(k, d) for k, d in defaults.items()}
        langs = given["langs"] if block_name == "mlmme" else [given["source"], given["target"]]
        variant = _free_name(block_name, variants)
        variants[variant] = {"model": block_name, "dataset": given["dataset"], "train_langs": list(langs)}
        reports[report] = {
            "layout": layout,
            "caption": given["caption"],
            "rows": [{"name": "MLMME" if block_name == "mlmme" else "Translator", "variant": variant}],
        }
        if block or block_name in out:
            out[block_name] = block
    for block_name, defaults in (("mlmme", _MLMME_DEFAULTS), ("translator", _TRANSLATOR_DEFAULTS)):
        if block_name in out:  # blocks of tables that were not switched on: their moved keys go
            out[block_name] = {k: v for k, v in (out[block_name] or {}).items() if k not in defaults}
    if speech or "speech" in out:
        out["speech"] = speech
    out["variants"] = variants
    out["reports"] = reports
    return out
