"""Measure the Translator's target models outside Snakemake: FS, T1 and T2 at each number of examples,
with the translator block's settings changed. The Translator evidence of docs/learning.md was measured with it.

Reads the data stages, the source model and the matrix M of the default run from ``results/`` (``snakemake
--cores all results/translator_curve.tsv`` first), trains each target model as rule ``translator_train`` would
(polyvse.train.translator.train_target) and prints its best epoch, validation mR and test mR, then the sum of
the validation mR over the curve (what a setting is chosen on):

    .venv/bin/python bench/translator_trials.py
    .venv/bin/python bench/translator_trials.py --set target_training.dropout=0.5 --protocols FS,T1 --examples 50,200
    .venv/bin/python bench/translator_trials.py --set model.dropout=0.25 --train-source   # the source too

A ``--set`` key is one of the translator block's (``target_training.patience=15``, ``model.freeze_embeddings=true``),
its value read as YAML. ``--train-source`` trains the source model with the changed settings instead of reading
the run's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from snakemake.utils import validate  # noqa: E402

from bench.learning_curves import overridden  # noqa: E402
from polyvse.data.tables import read_captions  # noqa: E402
from polyvse.io import load_torch  # noqa: E402
from polyvse.text.vocab import read_counts  # noqa: E402
from polyvse.models.trained import load_model  # noqa: E402
from polyvse.train.translator import evaluate_target, train_source, train_target  # noqa: E402
from polyvse.train.translator_runs import translator_block, translator_settings  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="translator")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a translator block key")
    parser.add_argument("--protocols", default="FS,T1,T2")
    parser.add_argument("--examples", default="", help="comma-separated n (default: the block's)")
    parser.add_argument("--train-source", action="store_true", help="train the source with the changed settings")
    parser.add_argument("--config", type=Path, default=REPO / "config" / "config.yaml")
    parser.add_argument("--results", type=Path, default=REPO / "results")
    args = parser.parse_args(argv)

    config = yaml.safe_load(args.config.read_text(encoding="utf-8"))
    validate(config, str(REPO / "config" / "schema.yaml"))  # fills the schema's defaults
    overridden(config["translator"], args.set)
    block = translator_block(config, args.variant)
    if (block["target_captions"], block["word_vectors"]) != ("human", "fasttext"):
        parser.error("measures human target captions over FastText vectors (the default's) only")
    source_lang, target_lang = block["source"], block["target"]
    dataset = config["variants"][args.variant]["dataset"]
    root = args.results / dataset
    run_dir = root / "translator" / args.variant
    backbone = config["image_features"]["backbone"]
    ids = (root / "image_features" / f"{backbone}.ids.txt").read_text(encoding="utf-8").split()
    features = np.load(root / "image_features" / f"{backbone}.npy")
    captions = read_captions(root / "captions.parquet")

    def vectors(lang: str) -> tuple[dict, np.ndarray]:
        return read_counts(root / "vocab" / "human" / f"{lang}.tsv"), np.load(
            root / "fasttext" / "human" / f"{lang}.npy"
        )

    if args.train_source:
        counts, table = vectors(source_lang)
        with tempfile.TemporaryDirectory() as checkpoints:
            trained = train_source(
                captions,
                features,
                ids,
                source_lang,
                counts,
                table,
                translator_settings(config, args.variant, "source"),
                Path(checkpoints),
                progress=False,
            )
        source = trained.model
        print(
            f"source: best epoch {trained.fit.best_epoch} of {trained.fit.epochs_run}, val mR {trained.fit.best_score:.2f}"
        )
    else:
        source = load_model(load_torch(run_dir / "source" / "model.pt"))[0]
    matrix = np.load(run_dir / "align" / "translator.npy")
    settings = translator_settings(config, args.variant, "target")
    counts, table = vectors(target_lang)
    examples = [int(n) for n in args.examples.split(",")] if args.examples else sorted(block["examples"])
    total = 0.0
    for protocol in args.protocols.split(","):
        for n in examples:
            started = time.perf_counter()
            with tempfile.TemporaryDirectory() as checkpoints:
                trained = train_target(
                    protocol,
                    n,
                    captions,
                    features,
                    ids,
                    target_lang,
                    counts,
                    table,
                    settings,
                    Path(checkpoints),
                    source=source,
                    matrix=matrix if protocol == "T2" else None,
                    progress=False,
                )
            test = evaluate_target(
                trained.model, trained.vocab, captions, features, ids, target_lang, settings["text"]["max_len"]
            )
            fit = trained.fit
            total += fit.best_score
            print(
                f"{protocol}/n{n}: best epoch {fit.best_epoch} of {fit.epochs_run}, val mR {fit.best_score:.2f}, "
                f"test mR {test['mR']:.2f} ({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
    print(f"sum of validation mR: {total:.2f} {' '.join(args.set) or '(the config as it is)'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
