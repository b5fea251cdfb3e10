"""The runs of MLMME Table 1 and their settings, from the config's ``mlmme``
block (Calixto et al. 2017, Table 1 and §4). Kept free of torch: the workflow
reads it while building the DAG.
"""

from __future__ import annotations

from collections.abc import Mapping

from polyvse.config import ConfigError

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


def run_settings(config: Mapping, run: str) -> dict:
    """Everything one run depends on: the ``mlmme`` block, the run's languages
    and β, the text settings and the seed (the config's, plus k for a seed replica ``{run}-s{k}``)."""
    block = config[CONFIG_KEY]
    runs = mlmme_runs(block)
    run, offset = replica_offset(run)
    if run not in runs:
        raise ConfigError(f"{CONFIG_KEY}.betas", f"no run named {run!r} (runs: {', '.join(runs)})")
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
        "seed": int(config.get("seed", 0)) + offset,
    }


def check_mlmme_config(config: Mapping) -> None:
    """What the schema cannot check: the dataset exists and has the languages; run names are distinct."""
    block = config[CONFIG_KEY]
    datasets = config.get("datasets", {})
    if block["dataset"] not in datasets:
        raise ConfigError(f"{CONFIG_KEY}.dataset", f"unknown dataset {block['dataset']!r}")
    have = datasets[block["dataset"]].get("langs") or []
    missing = [lang for lang in block["langs"] if lang not in have]
    if missing:
        raise ConfigError(f"{CONFIG_KEY}.langs", f"{', '.join(missing)} not in datasets.{block['dataset']}.langs")
    mlmme_runs(block)
