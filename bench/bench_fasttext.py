"""Benchmark: seconds to train one language's skip-gram FastText model (300-D).

Run: .venv/bin/python bench/bench_fasttext.py [--epochs 5] [--bucket 2000000]

Corpora timed, with 1 and 2 threads:

* the embedded synthetic data (``build_dataset("m30k", 1000, 100, 200)``):
  English (5,000 training sentences) and German, and the Multi30K-like
  augmented size (the human sentences repeated to 20,000 lines);
* a Zipf-distributed corpus of 20,000 sentences of 12 words over 20,000
  random letter words, closer to a real vocabulary (with FastText's frequent-
  word subsampling, the synthetic corpora's ~50-word vocabulary makes most
  tokens skipped, so they understate the cost).

Target: under a minute per language on 2 cores.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from polyvse.data.synthetic import build_dataset
from polyvse.text.fasttext_vectors import train_fasttext
from polyvse.text.tokenize import tokenize


def zipf_corpus(n_sentences: int, n_words: int, length: int, seed: int = 0) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, size=rng.integers(3, 10))) for _ in range(n_words)]
    p = 1.0 / np.arange(1, n_words + 1)
    ids = rng.choice(n_words, size=(n_sentences, length), p=p / p.sum())
    return [[words[i] for i in row] for row in ids]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--bucket", type=int, default=2_000_000)
    args = ap.parse_args()
    ds = build_dataset("m30k", 1000, 100, 200, seed=0)
    train = ds.captions[ds.captions["split"] == "train"]
    corpora = {}
    for lang in ("en", "de"):
        corpora[f"synthetic {lang}"] = [tokenize(t, lang) for t in train.loc[train["lang"] == lang, "text"]]
    corpora["synthetic de x4 (20k lines)"] = corpora["synthetic de"] * 4
    corpora["zipf 20k sentences, 20k words"] = zipf_corpus(20_000, 20_000, 12)
    print(f"dim {args.dim}, epochs {args.epochs}, bucket {args.bucket}")
    for name, sentences in corpora.items():
        for threads in (1, 2):
            t0 = time.perf_counter()
            model = train_fasttext(sentences, dim=args.dim, epochs=args.epochs, threads=threads, bucket=args.bucket)
            seconds = time.perf_counter() - t0
            print(
                f"{name:32s} {len(sentences):6d} sentences {len(model.model.words):6d} words "
                f"threads {threads}: {seconds:6.1f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
