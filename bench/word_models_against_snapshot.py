"""Compare a run's word models with the README's snapshot: each model's test score beside the snapshot's, the
means by family, and the CPU minutes of the training jobs by family.

The measure docs/learning.md ("What learning costs") reads: a change to how the word models train is kept
only where each family's mean test score stays within a point of the snapshot's and no model falls more than 5
points. Reads ``RUN/results/{dataset}/eval/{variant}.direct.tsv`` (its mean mR over the evaluated languages,
the learning overview's score), ``…/models/{variant}/params.json`` and the jobs' logs (``RUN/logs/*/train*.log``,
their last line's CPU seconds), and ``docs/default_run/learning.tsv``:

    .venv/bin/python bench/word_models_against_snapshot.py /tmp/run
    .venv/bin/python bench/word_models_against_snapshot.py /tmp/run --models   # every model too
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from polyvse.config import WORD_FAMILIES  # noqa: E402
from polyvse.config_files import read_schema  # noqa: E402
from polyvse.plan import build_plan  # noqa: E402

CPU = re.compile(r"done in [0-9.]+ s, CPU ([0-9.]+) s")


def word_models(run: Path, variants: dict, snapshot: pd.DataFrame) -> pd.DataFrame:
    """One row a word model the run finished: its family, test score, the snapshot's, and their epochs."""
    rows = []
    for name, variant in variants.items():
        if variant["model"] not in WORD_FAMILIES:
            continue
        root = run / "results" / variant["dataset"]
        scores, params = root / "eval" / f"{name}.direct.tsv", root / "models" / name / "params.json"
        if not (scores.is_file() and params.is_file()):
            continue
        p = json.loads(params.read_text(encoding="utf-8"))
        old = snapshot.loc[name] if name in snapshot.index else None
        rows.append(
            {
                "variant": name,
                "family": variant["model"],
                "score": round(float(pd.read_csv(scores, sep="\t")["mR"].mean()), 2),
                "snapshot": float(old["score"]) if old is not None else float("nan"),
                "epochs": int(p["epochs_run"]),
                "snapshot epochs": int(old["epochs_run"]) if old is not None else 0,
                "best/run": f"{p['best_epoch']}/{p['epochs_run']}",
                "snapshot best/run": f"{int(old['best_epoch'])}/{int(old['epochs_run'])}" if old is not None else "",
            }
        )
    table = pd.DataFrame(rows)
    if len(table):
        table["change"] = (table["score"] - table["snapshot"]).round(2)
    return table


def cpu_minutes(run: Path, variants: dict) -> pd.Series:
    """CPU minutes of the finished training jobs (``train``, ``train_seeds``) by family."""
    minutes: dict[str, float] = {}
    for log in sorted(run.glob("logs/*/train_*.log")):
        variant = re.sub(r"^train(_seeds)?_", "", log.stem)
        family = variants.get(variant, {}).get("model")
        found = CPU.findall(log.read_text(encoding="utf-8", errors="replace"))
        if family in WORD_FAMILIES and found:
            minutes[family] = minutes.get(family, 0.0) + float(found[-1]) / 60
    return pd.Series(minutes, name="CPU min").round(1)


def snapshot_cpu_minutes(benchmarks: Path, variants: dict) -> pd.Series:
    """The snapshot's CPU minutes of its training jobs by family (its ``benchmarks.tsv``)."""
    jobs = pd.read_csv(benchmarks, sep="\t")
    jobs = jobs[jobs["rule"].isin(["train", "train_seeds"])]
    family = jobs["job"].str.split("/").str[-1].map(lambda v: variants.get(v, {}).get("model"))
    return (jobs.groupby(family)["cpu_seconds"].sum() / 60).round(1).rename("snapshot CPU min")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="the run's directory (results/ and logs/ in it)")
    ap.add_argument("--snapshot", type=Path, default=REPO / "docs" / "default_run" / "learning.tsv")
    ap.add_argument("--models", action="store_true", help="print every model's row too")
    args = ap.parse_args()
    config = yaml.safe_load((args.run / "config" / "config.yaml").read_text(encoding="utf-8"))
    variants = build_plan(config, read_schema(args.run / "config" / "schema.yaml")).config["variants"]
    snapshot = pd.read_csv(args.snapshot, sep="\t").drop_duplicates("variant").set_index("variant")
    models = word_models(args.run, variants, snapshot)
    if models.empty:
        print("no word model finished yet")
        return 1
    pd.set_option("display.width", 200)
    if args.models:
        print(models.sort_values(["family", "variant"]).to_string(index=False), end="\n\n")
    by_family = models.groupby("family").agg(
        models=("variant", "count"),
        mean=("score", "mean"),
        snapshot=("snapshot", "mean"),
        worst=("change", "min"),
        epochs=("epochs", "sum"),
        snapshot_epochs=("snapshot epochs", "sum"),
    )
    by_family["mean change"] = by_family["mean"] - by_family["snapshot"]
    by_family = by_family.join(cpu_minutes(args.run, variants), how="left")
    by_family = by_family.join(snapshot_cpu_minutes(args.snapshot.parent / "benchmarks.tsv", variants), how="left")
    print(by_family.round(2).to_string())
    worst = models.loc[models["change"].idxmin()]
    print(f"\n{len(models)} models; the largest fall: {worst['variant']} {worst['change']:+.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
