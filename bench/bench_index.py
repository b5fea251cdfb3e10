"""Benchmark: the vector index (polyvse.vector_index) over a million embeddings of a trained model.

The vectors are the model's image embeddings (``embed_images``) of its dataset's backbone features, the ids
those of the dataset's images repeated: each of the ``--vectors`` is the embedding of a mixture
``a · f_i + (1 − a) · f_j`` of two real images' features (a seeded draw, a ~ U(0.5, 1)), so they lie where the
model puts images, not in a Gaussian cloud. The queries are the model's embeddings of its test captions (a
text model) in its languages, as `polyvse query --text` embeds them. The build and the search each run in a
process of their own, so that each one's peak memory is its own:

- build: the seconds to train the cells and add every vector, and the process's peak resident memory;
- search: one query at a time, as `polyvse query` sends them, the median and 99th-percentile latency and the
  peak resident memory of a process that opened the index and answered them;
- recall@10: the share of the exact top 10 (a dot product with every vector) the index returns.

Run (after a default run, or on any text model of results/): .venv/bin/python bench/bench_index.py
[--model results/m30k/models/embn_en] [--vectors 1000000] [--queries 1000] [--threads 2]

Targets (2 CPU cores, 1,000,000 vectors): recall@10 ≥ 0.95, median ≤ 20 ms, p99 ≤ 50 ms, peak memory ≤ 2 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def vectors_of(model_dir: Path, n: int, seed: int, out: Path) -> tuple[int, list[str]]:
    """Write ``n`` image embeddings of ``model_dir``'s model to ``out`` (.npy) in batches; return the dimension
    and the real image ids they repeat."""
    import torch

    from polyvse.query import embed_image_features, features_file, open_model

    tm = open_model(model_dir)
    features_path, _ = features_file(tm)
    features = np.load(features_path).astype(np.float32)
    ids = features_path.with_suffix(".ids.txt").read_text().split()
    rng = np.random.default_rng(seed)
    dim = int(embed_image_features(tm, torch.from_numpy(features[:1])).shape[1])
    stored = np.lib.format.open_memmap(out, mode="w+", dtype=np.float32, shape=(n, dim))
    with torch.no_grad():
        for start in range(0, n, 50_000):
            m = min(50_000, n - start)
            i, j = rng.integers(0, len(features), m), rng.integers(0, len(features), m)
            a = rng.uniform(0.5, 1.0, (m, 1)).astype(np.float32)
            mixed = a * features[i] + (1 - a) * features[j]
            stored[start : start + m] = embed_image_features(tm, torch.from_numpy(mixed)).numpy()
    stored.flush()
    return dim, ids


def queries_of(model_dir: Path, count: int, seed: int) -> np.ndarray:
    """``count`` human captions of the model's languages (a seeded draw over every split), embedded as
    `polyvse query --text` embeds a sentence."""
    import pandas as pd
    import torch

    from polyvse.evaluate.embed import embed_sentences
    from polyvse.query import open_model
    from polyvse.text.encoded import encode_captions

    tm = open_model(model_dir)
    captions = pd.read_parquet(tm.dataset_dir / "captions.parquet")
    captions = captions[(captions["origin"] == "human") & captions["lang"].isin(tm.langs)].reset_index(drop=True)
    rng = np.random.default_rng(seed)
    chosen = captions.iloc[np.sort(rng.choice(len(captions), min(count, len(captions)), replace=False))]
    with torch.no_grad():
        encoded = encode_captions(chosen, tm.vocab, {i: 0 for i in chosen["image_id"]}, tm.max_len)
        return embed_sentences(tm.model, encoded).cpu().numpy()


def build_step(vectors: Path, directory: Path) -> dict:
    from polyvse.vector_index import VectorIndex

    start = time.perf_counter()
    index = VectorIndex.build(np.load(vectors, mmap_mode="r"), directory)
    return {"build_s": time.perf_counter() - start, "cells": index.meta["cells"], "build_peak_mb": peak_mb()}


def search_step(directory: Path, queries: Path, k: int) -> dict:
    from polyvse.vector_index import VectorIndex

    start = time.perf_counter()
    index = VectorIndex.open(directory)
    opened = time.perf_counter() - start
    q = np.load(queries)
    rows, seconds = [], []
    for vector in q:
        start = time.perf_counter()
        rows.append(index.search(vector[None], k)[1][0])
        seconds.append(time.perf_counter() - start)
    np.save(directory / "found.npy", np.stack(rows))
    ms = 1000 * np.asarray(seconds)
    return {
        "open_s": opened,
        "median_ms": float(np.median(ms)),
        "p99_ms": float(np.percentile(ms, 99)),
        "probe": index.settings.probe,
        "rerank": index.settings.rerank,
        "search_peak_mb": peak_mb(),
    }


def peak_mb() -> float:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss, not inherited from the parent that forked it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def exact_rows(vectors: Path, queries: np.ndarray, k: int) -> np.ndarray:
    """The exact top ``k`` of every query, a block of vectors at a time (ties to the lower row)."""
    from polyvse.vector_index import exact_top_k

    x = np.load(vectors, mmap_mode="r")
    best_s = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    best_r = np.zeros((len(queries), 0), dtype=np.int64)
    for start in range(0, len(x), 100_000):
        s, r = exact_top_k(x[start : start + 100_000], queries, k)
        s, r = np.concatenate([best_s, s], axis=1), np.concatenate([best_r, r + start], axis=1)
        order = np.lexsort((r, -s), axis=1)[:, :k]
        best_s, best_r = np.take_along_axis(s, order, axis=1), np.take_along_axis(r, order, axis=1)
    return best_r


def in_subprocess(step: str, threads: int, *args: str) -> dict:
    """Run ``step`` of this script in a fresh process with ``threads`` OpenMP threads (faiss's)."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    out = subprocess.run([sys.executable, __file__, step, *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"bench_index {step}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("build", "search"):
        step, *args = sys.argv[1:]
        result = (
            build_step(Path(args[0]), Path(args[1]))
            if step == "build"
            else search_step(Path(args[0]), Path(args[1]), int(args[2]))
        )
        print(json.dumps(result))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, default=Path("results/m30k/models/embn_en"))
    p.add_argument("--vectors", type=int, default=1_000_000)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        dim, ids = vectors_of(args.model, args.vectors, args.seed, root / "vectors.npy")
        queries = queries_of(args.model, args.queries, args.seed)
        np.save(root / "queries.npy", queries)
        made = time.perf_counter() - start
        built = in_subprocess("build", args.threads, str(root / "vectors.npy"), str(root / "index"))
        searched = in_subprocess("search", args.threads, str(root / "index"), str(root / "queries.npy"), "10")
        exact = exact_rows(root / "vectors.npy", queries, 10)
        found = np.load(root / "index" / "found.npy")
        recall = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, exact)]))
    print(
        f"model {args.model}: {args.vectors:,} vectors of {dim}-D (ids of {len(ids):,} real images repeated, made in "
        f"{made:.0f} s), {len(queries)} text queries, {args.threads} threads"
    )
    print(
        f"build {built['build_s']:.1f} s ({built['cells']} cells), peak memory {built['build_peak_mb']:.0f} MB; "
        f"open {searched['open_s']:.2f} s; query median {searched['median_ms']:.2f} ms, "
        f"p99 {searched['p99_ms']:.2f} ms (probe {searched['probe']}, rerank {searched['rerank']}), "
        f"peak memory {searched['search_peak_mb']:.0f} MB; recall@10 {recall:.4f}"
    )


if __name__ == "__main__":
    main()
