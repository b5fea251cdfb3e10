"""The runs of an mlmme variant (MLMME Table 1's columns) and their settings, from the
variant and the config's ``mlmme`` block (Calixto et al. 2017, Table 1 and §4). Kept free
of torch: the workflow reads it while building the DAG.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from polyvse.config import MLMME_FAMILY, ConfigError, family_variants, variant_seed

CONFIG_KEY = "mlmme"


def beta_run_name(beta: float) -> str:
    """``b75`` for β = .75: the run's directory name (no dot in a path component)."""
    return f"b{round(100 * float(beta))}"


def mlmme_runs(settings: Mapping) -> dict[str, dict]:
    """Table 1's columns in order: ``vse_{lang}`` (one language, β = 1) for every
    language, then ``b{100β}`` (every language) for every β of ``settings["betas"]``.

    settings: the config's ``mlmme`` block. Returns name → {langs, beta}.
    """
    langs = list(settings["langs"])
    runs = {f"vse_{lang}": {"langs": [lang], "beta": 1.0} for lang in langs}
    for beta in settings["betas"]:
        name = beta_run_name(beta)
        if name in runs:
            raise ConfigError(f"{CONFIG_KEY}.betas", f"β = {beta} repeats a β of the list (to two decimals)")
        runs[name] = {"langs": langs, "beta": float(beta)}
    return runs


def replica_offset(run: str) -> tuple[str, int]:
    """``("b75", 2)`` for the seed replica ``b75-s2`` (polyvse.report.findings), ``(run, 0)`` otherwise."""
    base, sep, k = run.rpartition("-s")
    return (base, int(k)) if sep and k.isdigit() and int(k) > 0 else (run, 0)


def mlmme_block(config: Mapping, variant: str) -> dict:
    """The settings of an mlmme variant: the config's ``mlmme`` block, its ``model`` and
    ``training`` under the variant's ``model_options`` / ``training_options``, with the
    variant's dataset, languages (``langs``) and seed."""
    v = config["variants"][variant]
    block = copy.deepcopy(dict(config.get(CONFIG_KEY) or {}))
    block["model"] = {**block.get("model", {}), **(v.get("model_options") or {})}
    block["training"] = {**block.get("training", {}), **(v.get("training_options") or {})}
    block["dataset"] = v["dataset"]
    block["langs"] = list(v["train_langs"])
    block["seed"] = variant_seed(config, v)
    return block


def variant_runs(config: Mapping, variant: str) -> dict[str, dict]:
    """An mlmme variant's runs (:func:`mlmme_runs`), named as its directories under results/{dataset}/mlmme/{variant}/."""
    return mlmme_runs(mlmme_block(config, variant))


def run_settings(config: Mapping, variant: str, run: str) -> dict:
    """Everything one run depends on: the variant's settings (:func:`mlmme_block`), the run's
    languages and β, the text settings and the seed (the variant's, plus k for a seed replica ``{run}-s{k}``)."""
    block = mlmme_block(config, variant)
    runs = mlmme_runs(block)
    run, offset = replica_offset(run)
    if run not in runs:
        raise ConfigError(f"variants.{variant}", f"no run named {run!r} (runs: {', '.join(runs)})")
    return {
        **runs[run],
        "model": dict(block["model"]),
        "training": dict(block["training"]),
        "contrastive": block["contrastive"],
        "n_contrastive": int(block["n_contrastive"]),
        "contrastive_pool": block["contrastive_pool"],
        "margin": float(block["margin"]),
        "reduction": block["reduction"],
        "text": dict(config.get("text", {})),
        "seed": block["seed"] + offset,
    }


def check_mlmme_config(config: Mapping) -> None:
    """What the schema cannot check, for every mlmme variant: the dataset has its languages,
    its overrides are settings of the mlmme block, its run names are distinct."""
    datasets = config.get("datasets", {})
    block = config.get(CONFIG_KEY) or {}
    for name in family_variants(config, MLMME_FAMILY):
        v, key = config["variants"][name], f"variants.{name}"
        have = datasets[v["dataset"]].get("langs") or []
        missing = [lang for lang in v["train_langs"] if lang not in have]
        if missing:
            raise ConfigError(f"{key}.train_langs", f"{', '.join(missing)} not in datasets.{v['dataset']}.langs")
        for part in ("model", "training"):
            for opt in v.get(f"{part}_options") or {}:
                if opt not in (block.get(part) or {}):
                    raise ConfigError(f"{key}.{part}_options.{opt}", f"not a setting of mlmme.{part}")
        mlmme_runs(mlmme_block(config, name))
