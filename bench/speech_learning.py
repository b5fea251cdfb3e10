"""Train grounded-speech variants outside Snakemake and report whether they learn.

For each variant of ``config/config.yaml`` named on the command line: the training the rule
``speech_train`` runs (the config validated against ``config/schema.yaml``, the settings of
``polyvse.speech.settings.speech_variant_settings``, ``polyvse.train.speech.train_speech`` on one
thread), then its test retrieval. One JSON line per training goes to ``--out``: the per-epoch
validation curve (``val_recall``, ``val_image_recall``), the best epoch, the test mean image R@10
(mean of the ``X&I`` pairs' averaged R@10) and its chance level, and the training's seconds.

    .venv/bin/python bench/speech_learning.py infonce triplet --out /tmp/learning.jsonl \
        --training '{"epochs": 16}'

``--stats-baseline`` fits, instead, the simplest model that could find the captions' content: per
language, each utterance's per-bin mean and standard deviation of its log-Mel frames (80 numbers),
a ridge map to the image features' 64 principal components (its weight chosen on the validation
split) and cosine retrieval; its test mean image R@10 says how far above chance the data allow a
linear reader of bag-of-frames statistics to go.

``--training`` / ``--model`` (JSON) override ``speech.training`` / ``speech.model`` for every variant
named, after the variant's own overrides; ``--results`` is the workflow's results folder (the
spoken dataset's utterances, log-Mel stores and image features must be there).
The numbers of ``docs/speech_learning.md`` come from this script.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def load_config(path: Path) -> dict[str, Any]:
    """The config with the schema's defaults filled in, as the workflow sees it."""
    from snakemake.utils import validate

    cfg = yaml.safe_load(path.read_text())
    validate(cfg, str(ROOT / "config" / "schema.yaml"))
    return cfg


def image_r10(table: Any) -> float:
    """Mean over the language-image pairs of the averaged R@10 (the tables' image retrieval)."""
    return float(table.loc[table["kind"] == "image", "r10"].mean())


def every_split(cfg: dict[str, Any], base: Path, langs: list[str]) -> tuple[Any, dict[str, Any]]:
    """A dataset's image features and its train, val and test view sets, as the workflow's speech rules read them."""
    from polyvse.speech.run import load_views

    stem = cfg["image_features"]["backbone"]
    return load_views(
        base / "utterances.parquet",
        [base / "logmel" / f"{lang}.npz" for lang in langs],
        base / "image_features" / f"{stem}.npy",
        base / "image_features" / f"{stem}.ids.txt",
        langs,
        splits=("train", "val", "test"),
    )


def run_variant(
    cfg: dict[str, Any],
    variant: str,
    results: Path,
    training: dict[str, Any],
    model: dict[str, Any],
    seed: int | None,
) -> dict[str, Any]:
    import torch

    from polyvse.evaluate.speech import evaluate_views
    from polyvse.speech.settings import speech_variant_settings
    from polyvse.train.speech import train_speech

    torch.set_num_threads(1)
    settings = speech_variant_settings(cfg, variant)
    settings["training"].update(training)
    settings["model"].update(model)
    if seed is not None:
        settings["seed"] = seed
    dataset, langs = settings["dataset"], settings["langs"]
    base = results / dataset
    features, views = every_split(cfg, base, langs)
    with tempfile.TemporaryDirectory() as tmp:
        start, cpu = time.perf_counter(), time.process_time()
        trained = train_speech(views["train"], views["val"], features, settings, Path(tmp), threads=1, progress=False)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    feats = torch.from_numpy(features.astype("float32"))
    table = evaluate_views(trained.model, views["test"], feats, trained.normalize, 64, "cpu")
    log = trained.fit.log.to_dict("records")
    n_test = len(views["test"])
    return {
        "variant": variant,
        "training": {k: settings["training"][k] for k in ("epochs", "batch_size", "lr", "loss", "framework")},
        "overrides": {"training": training, "model": model},
        "seed": settings["seed"],
        "val_recall": [round(float(r["val_recall"]), 2) for r in log],
        "val_image_recall": [round(float(r["val_image_recall"]), 2) for r in log],
        "best_epoch": int(trained.fit.best_epoch),
        "val_peak": round(float(trained.fit.best_score), 2),
        "val_chance": round(100.0 * (1 + 5 + 10) / 3 / len(views["val"]), 2),
        "test_image_r10": round(image_r10(table), 2),
        "test_chance_r10": round(100.0 * 10 / n_test, 2),
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "loss": [round(float(r["loss"]), 3) for r in log if "loss" in r],
    }


def stats_baseline(cfg: dict[str, Any], results: Path, dataset: str = "spoken") -> dict[str, Any]:
    """Bag of log-Mel statistics + a ridge map to the images' principal components (see above)."""
    import numpy as np

    from polyvse.evaluate.speech import diagonal_recalls

    langs = cfg["datasets"][dataset]["langs"]
    features, views = every_split(cfg, results / dataset, langs)

    def statistics(split: str, lang: str) -> np.ndarray:
        v = views[split]
        frames = [np.asarray(v.stores[lang][int(r)]) for r in v.store_rows[lang]]
        return np.array([np.concatenate([f.mean(0), f.std(0)]) for f in frames])

    def r10(a: np.ndarray, b: np.ndarray) -> float:
        a = a / np.linalg.norm(a, axis=1, keepdims=True)
        b = b / np.linalg.norm(b, axis=1, keepdims=True)
        return (diagonal_recalls(a @ b.T)[0][10] + diagonal_recalls(b @ a.T)[0][10]) / 2

    images = {split: np.asarray(features, dtype=np.float64)[views[split].image_rows] for split in views}
    mean = images["train"].mean(0)
    components = np.linalg.svd(images["train"] - mean, full_matrices=False)[2][:64].T
    target = {split: (x - mean) @ components for split, x in images.items()}
    per_lang = {}
    for lang in langs:
        x = {split: statistics(split, lang) for split in views}
        mu, sd = x["train"].mean(0), x["train"].std(0) + 1e-6
        x = {split: (v - mu) / sd for split, v in x.items()}
        gram = x["train"].T @ x["train"]
        fits = {}
        for ridge in (0.1, 1.0, 10.0, 100.0, 1000.0):
            w = np.linalg.solve(gram + ridge * np.eye(gram.shape[0]), x["train"].T @ target["train"])
            fits[ridge] = (r10(x["val"] @ w, target["val"]), w)
        ridge = max(fits, key=lambda k: fits[k][0])
        per_lang[lang] = {"ridge": ridge, "test_r10": round(r10(x["test"] @ fits[ridge][1], target["test"]), 2)}
    n_test = len(views["test"])
    return {
        "variant": "stats_baseline",
        "per_lang": per_lang,
        "test_image_r10": round(float(np.mean([p["test_r10"] for p in per_lang.values()])), 2),
        "test_chance_r10": round(100.0 * 10 / n_test, 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="*")
    parser.add_argument("--stats-baseline", action="store_true", help="the bag-of-statistics linear baseline")
    parser.add_argument("--config", type=Path, default=ROOT / "config" / "config.yaml")
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--training", type=json.loads, default={})
    parser.add_argument("--model", type=json.loads, default={})
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    cfg = load_config(args.config)
    rows = (run_variant(cfg, v, args.results, args.training, args.model, args.seed) for v in args.variants)
    if args.stats_baseline:
        rows = iter([stats_baseline(cfg, args.results)])
    for row in rows:
        row["label"] = args.label
        line = json.dumps(row)
        print(line, flush=True)
        if args.out is not None:
            with open(args.out, "a") as f:
                f.write(line + "\n")


if __name__ == "__main__":
    main()
