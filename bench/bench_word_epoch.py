"""Benchmark: seconds an epoch of a default word model on one thread, with and without the cheaper steps
of docs/learning.md ("Cheaper steps"): LIWE's word layers over the batch's distinct words
(``polyvse.models.liwe.CharacterWords``) against the layers over every word position (``before``), and
the training's GRUs as the CPU's recurrence from the input gates of the valid positions or distinct words
(``polyvse.models.gru_recurrence``) against ``nn.GRU`` over every padded position (``nn_gru``).

Reads the default run's data stages from ``results/`` (``snakemake --cores all data`` first), trains each
variant for ``--epochs`` epochs (rule ``train``'s settings, no early stopping) once a setting, and prints the
median epoch (training and validation) and the whole run (start-up and test included):

    .venv/bin/python bench/bench_word_epoch.py liwe_s_10 coco_liwe_l_10 --epochs 3
    .venv/bin/python bench/bench_word_epoch.py liwe_s_10 smalr_10 --settings nn_gru now nn_gru now
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import polyvse.models.gru_recurrence as gru_recurrence  # noqa: E402
import polyvse.models.liwe as liwe  # noqa: E402
from learning_curves import main as learning_curves  # noqa: E402


def every_occurrence(self: liwe.CharacterWords, chars):  # the layers over every word position
    return self.layers(self.char_embeddings(chars).flatten(1)), torch.arange(chars.shape[0])


@contextlib.contextmanager
def setting(name: str) -> Iterator[None]:
    """``now``: the code as it is; ``before``: LIWE's layers over every word position; ``nn_gru``: every
    GRU as ``nn.GRU`` over the padded batch."""
    distinct, takes = liwe.CharacterWords.distinct, gru_recurrence.takes_recurrence
    if name == "before":
        liwe.CharacterWords.distinct = every_occurrence
    elif name == "nn_gru":
        gru_recurrence.takes_recurrence = lambda gru, inputs: False
    elif name != "now":
        raise SystemExit(f"unknown setting {name!r}: before, nn_gru or now")
    try:
        yield
    finally:
        liwe.CharacterWords.distinct, gru_recurrence.takes_recurrence = distinct, takes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--settings", nargs="+", default=["before", "now"])
    ap.add_argument("--out", type=Path, default=Path("/tmp/bench_word_epoch.tsv"))
    args = ap.parse_args()
    args.out.unlink(missing_ok=True)
    for variant in args.variants:
        for name in args.settings:
            started = time.perf_counter()
            with setting(name), contextlib.redirect_stdout(sys.stderr):
                learning_curves(
                    [variant, "--label", name, "--out", str(args.out)]
                    + ["--set", f"training.epochs={args.epochs}", "--set", "training.patience=null"]
                )
            total = time.perf_counter() - started
            rows = pd.read_csv(args.out, sep="\t")
            mine = rows[(rows["variant"] == variant) & (rows["label"] == name)]["seconds"].tolist()
            print(
                f"{variant}\t{name}\tmedian epoch {statistics.median(mine):.2f} s\t"
                f"whole run {total:.1f} s (start-up and test included)",
                flush=True,
            )


if __name__ == "__main__":
    main()
