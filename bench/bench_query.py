"""Benchmark: `polyvse query` against 30,000 images, model load and per-query time.

A model of the default EmbN size with random weights (the cost does not depend on
the values) is saved as the train rule saves it, beside a dataset directory of
30,000 test images' backbone features (1280-D, random); the first query embeds and
caches them (``query/test_images.npz``), later queries read the cache.
Run: .venv/bin/python bench/bench_query.py [--images 30000] [--queries 20] [--threads 2]

Targets: model load at most 3 s, a query at most 100 ms
on 2 CPU cores once the model is loaded and the index cached.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from polyvse.io import save_torch
from polyvse.models.embn import EmbN, EmbNConfig
from polyvse.query import embed_text, open_model, test_images, top_k
from polyvse.text.vocab import Vocabulary

WORDS = ["a", "red", "blue", "green", "circle", "square", "star", "small", "large", "left", "right", "there", "is"]


def build(root: Path, n_images: int) -> Path:
    dataset = root / "results" / "bench"
    model_dir = dataset / "models" / "embn_en"
    (dataset / "image_features").mkdir(parents=True)
    model_dir.mkdir(parents=True)
    ids = [f"img-{i:06d}" for i in range(n_images)]
    pd.DataFrame({"image_id": ids, "split": "test", "path": [f"images/{i}.png" for i in ids]}).to_parquet(
        dataset / "images.parquet", index=False
    )
    rng = np.random.default_rng(0)
    np.save(dataset / "image_features" / "efficientnet_lite0.npy", rng.random((n_images, 1280), dtype=np.float32))
    (dataset / "image_features" / "efficientnet_lite0.ids.txt").write_text("\n".join(ids) + "\n")
    vocab = Vocabulary(["en"], {"en": WORDS})
    torch.manual_seed(0)
    model = EmbN(
        EmbNConfig(vocab_size=len(vocab), image_dim=1280, word_dim=300, gru_hidden=64, image_hidden=256, joint_dim=128)
    )
    save_torch(
        {
            "family": model.family,
            "config": model.config.as_dict(),
            "state_dict": model.state_dict(),
            "vocab": vocab.state_dict(),
            "best_epoch": 1,
            "val_mR": 0.0,
            "max_len": 40,
        },
        model_dir / "model.pt",
    )
    return model_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=30000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import polyvse.query"], check=True)
    start_up = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build(Path(tmp), args.images)
        t = time.perf_counter()
        tm = open_model(model_dir)
        load = time.perf_counter() - t
        t = time.perf_counter()
        test_images(tm)
        first = time.perf_counter() - t
        times = []
        rng = np.random.default_rng(1)
        for _ in range(args.queries):
            text = " ".join(rng.choice(WORDS, size=6))
            t = time.perf_counter()
            index = test_images(tm)  # from the cache, as every later query
            top_k(embed_text(tm, text, "en"), index, 5)
            times.append(time.perf_counter() - t)
    print(f"a new process imports polyvse.query (torch, pandas) in {start_up:.2f} s")
    print(f"model load {load:.2f} s; first query's index of {args.images} images built and cached in {first:.2f} s")
    print(
        f"query against the cached index: median {1000 * np.median(times):.0f} ms, max {1000 * max(times):.0f} ms "
        f"over {args.queries} queries ({args.threads} threads)"
    )


if __name__ == "__main__":
    main()
