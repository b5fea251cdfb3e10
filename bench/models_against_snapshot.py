"""Compare a run's trained models with the README's snapshot: each model's test score beside the snapshot's,
the means by family, and the CPU minutes of the training jobs by family (the snapshot's of the same jobs).

The measure docs/learning.md ("What learning costs") reads: a change to how a family trains is kept only
where the family's mean test score stays within a point of the snapshot's and no model falls more than 5
points. The score is the learning overview's (``polyvse.report.learning``): a word model's mean test mR over
its evaluated languages (``RUN/results/{dataset}/eval/{variant}.direct.tsv``), a speech model's mean image
R@10 (``…/speech/{variant}/eval.tsv``), a joint model's over the pairs with the image
(``…/joint/{variant}/eval.tsv``). Reads each model's ``params.json``, the training jobs' benchmarks and
logs (``RUN/benchmarks/``, ``RUN/logs/``: the CPU seconds a job's log records, as the benchmarks rule
reads them), and ``docs/default_run/learning.tsv`` and ``benchmarks.tsv``:

    .venv/bin/python bench/models_against_snapshot.py /tmp/run
    .venv/bin/python bench/models_against_snapshot.py /tmp/run --models   # every model too
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
import json
import sys
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from polyvse.config import WORD_FAMILIES  # noqa: E402
from polyvse.config_files import read_schema  # noqa: E402
from polyvse.plan import build_plan  # noqa: E402
from polyvse.report.benchmarks import gather_benchmarks, job_cpu_seconds, job_family, job_log_paths  # noqa: E402
from polyvse.report.learning import joint_score, speech_score, word_score  # noqa: E402


def model_files(root: Path, name: str, family: str) -> tuple[Path, Path, Callable[[pd.DataFrame], tuple[float, float]]]:
    """(its test evaluation, its params.json, the score function) of a model under ``root``
    (``RUN/results/{dataset}``)."""
    if family in WORD_FAMILIES:
        return root / "eval" / f"{name}.direct.tsv", root / "models" / name / "params.json", word_score
    where = root / family / name
    return where / "eval.tsv", where / "params.json", speech_score if family == "speech" else joint_score


def trained_models(run: Path, variants: dict, snapshot: pd.DataFrame) -> pd.DataFrame:
    """One row a word, speech or joint model the run finished: its family, test score, the snapshot's, and
    their epochs."""
    rows = []
    for name, variant in variants.items():
        family = variant["model"]
        if family not in (*WORD_FAMILIES, "speech", "joint"):
            continue
        scores, params, score = model_files(run / "results" / variant["dataset"], name, family)
        if not (scores.is_file() and params.is_file()):
            continue
        p = json.loads(params.read_text(encoding="utf-8"))
        old = snapshot.loc[name] if name in snapshot.index else None
        rows.append(
            {
                "variant": name,
                "family": family,
                "score": round(score(pd.read_csv(scores, sep="\t"))[0], 2),
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


MODEL_RULES = ("train", "train_seeds", "speech_train", "speech_train_seeds", "joint_train", "joint_train_seeds")


def training_jobs(benchmarks: pd.DataFrame, variants: dict) -> pd.DataFrame:
    """The rows of ``benchmarks`` (:func:`gather_benchmarks`) that trained a word, speech or joint model
    (:data:`MODEL_RULES`), with its ``variant`` (a seed group's first) and ``family``."""
    jobs = benchmarks[benchmarks["rule"].isin(MODEL_RULES)].copy()
    jobs["variant"] = jobs["job"].str.split("/").str[-1]
    jobs["family"] = [
        job_family(r, j, {v: s["model"] for v, s in variants.items()}) for r, j in zip(jobs["rule"], jobs["job"])
    ]
    return jobs


def cpu_minutes(run: Path, variants: dict) -> tuple[pd.Series, set[str]]:
    """CPU minutes by family of the run's finished training jobs (their logs' own measure,
    :func:`job_cpu_seconds`), and the variants those jobs trained."""
    jobs = training_jobs(gather_benchmarks(run / "benchmarks"), variants)
    jobs["cpu_seconds"] = [
        job_cpu_seconds(job_log_paths(run / "logs", r, j)) for r, j in zip(jobs["rule"], jobs["job"])
    ]
    jobs = jobs.dropna(subset=["cpu_seconds"])
    return (jobs.groupby("family")["cpu_seconds"].sum() / 60).round(1).rename("CPU min"), set(jobs["variant"])


def snapshot_cpu_minutes(benchmarks: Path, variants: dict, finished: set[str]) -> pd.Series:
    """The snapshot's CPU minutes by family of its training jobs (its ``benchmarks.tsv``) that the run
    finished too."""
    jobs = training_jobs(pd.read_csv(benchmarks, sep="\t"), variants)
    jobs = jobs[jobs["variant"].isin(finished)]
    return (jobs.groupby("family")["cpu_seconds"].sum() / 60).round(1).rename("snapshot CPU min")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="the run's directory (results/ and logs/ in it)")
    ap.add_argument("--snapshot", type=Path, default=REPO / "docs" / "default_run" / "learning.tsv")
    ap.add_argument("--models", action="store_true", help="print every model's row too")
    args = ap.parse_args()
    config = yaml.safe_load((args.run / "config" / "config.yaml").read_text(encoding="utf-8"))
    variants = build_plan(config, read_schema(args.run / "config" / "schema.yaml")).config["variants"]
    snapshot = pd.read_csv(args.snapshot, sep="\t").drop_duplicates("variant").set_index("variant")
    models = trained_models(args.run, variants, snapshot)
    if models.empty:
        print("no model finished yet")
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
    minutes, finished = cpu_minutes(args.run, variants)
    by_family = by_family.join(minutes, how="left")
    by_family = by_family.join(
        snapshot_cpu_minutes(args.snapshot.parent / "benchmarks.tsv", variants, finished), how="left"
    )
    print(by_family.round(2).to_string())
    worst = models.loc[models["change"].idxmin()]
    print(f"\n{len(models)} models; the largest fall: {worst['variant']} {worst['change']:+.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
