"""How far could any model that reads a run's image features find the short colour × shape queries?

Rule ``described_queries`` reads a caption-trained model's precision at k on "a red circle", "two blue
stars"... (polyvse.evaluate.described). This script asks the same of models that are *told* the answers:
classifiers trained on the training images' scene plans, one output per description, on the same image
features, read with the same precision at k on the same test images. A retrieval model that learns from
captions alone has less to go on, so their precision is a ceiling to read the model's against:

- ``base rate``: a random ranking (the share of test images that show the description);
- ``linear probe``: one L2-regularised logistic regression per description on standardised features;
- ``MLP probe``: EmbN's image branch (FC → BN → ReLU → dropout → FC, ``--hidden`` wide) with one output
  per description, trained on all of them at once, its precision printed every 50 epochs.

    .venv/bin/python bench/described_ceiling.py            # the default run's results/m30k
    .venv/bin/python bench/described_ceiling.py --features other.npy   # the same ids, other features
    .venv/bin/python bench/described_ceiling.py --colour-grid 2        # + colour histograms, 2 x 2 cells
    .venv/bin/python bench/described_ceiling.py --train-images 500     # on half the training images

Reads ``results/{dataset}/images.parquet`` and ``image_features/{backbone}.{npy,ids.txt}``; trains on the
CPU in about a minute. Seeded: the same inputs give the same numbers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from polyvse.config_files import read_schema, with_schema_defaults  # noqa: E402
from polyvse.evaluate.described import descriptions, mean_precision, precision_at_k, scene_plans  # noqa: E402


def standardised(features: torch.Tensor, train: torch.Tensor) -> torch.Tensor:
    """``(N, F)`` features with the training rows' mean and standard deviation taken out."""
    mean, std = features[train].mean(0), features[train].std(0)
    return (features - mean) / (std + 1e-6)


def linear_probe_scores(x: torch.Tensor, y: torch.Tensor, train: torch.Tensor, l2: float) -> torch.Tensor:
    """One logistic regression per column of ``y`` ``(N, D)``, fitted on the ``train`` rows (L-BFGS):
    every row's scores ``(N, D)``."""
    scores = []
    for d in range(y.shape[1]):
        w = torch.zeros(x.shape[1], requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        opt = torch.optim.LBFGS([w, b], max_iter=100)

        def closure() -> torch.Tensor:
            opt.zero_grad()
            logits = x[train] @ w + b
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y[train, d]) + l2 * (w**2).sum()
            loss.backward()
            return loss

        opt.step(closure)
        scores.append((x @ w + b).detach())
    return torch.stack(scores, 1)


def mlp_probe_scores(
    x: torch.Tensor, y: torch.Tensor, train: torch.Tensor, hidden: int, epochs: int, every: int
) -> list[tuple[int, torch.Tensor]]:
    """EmbN's image branch with one logit per column of ``y``, trained on the ``train`` rows (Adam, batches
    of 64): (epoch, every row's scores ``(N, D)``) after every ``every`` epochs."""
    net = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], hidden),
        torch.nn.BatchNorm1d(hidden),
        torch.nn.ReLU(),
        torch.nn.Dropout(0.2),
        torch.nn.Linear(hidden, y.shape[1]),
    )
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-4)
    xt, yt = x[train], y[train]
    out = []
    for epoch in range(1, epochs + 1):
        net.train()
        for batch in torch.randperm(len(xt)).split(64):
            opt.zero_grad()
            torch.nn.functional.binary_cross_entropy_with_logits(net(xt[batch]), yt[batch]).backward()
            opt.step()
        if epoch % every == 0:
            net.eval()
            with torch.no_grad():
                out.append((epoch, net(x)))
    return out


def colour_histograms(paths: list[Path], grid: int, size: int = 64) -> np.ndarray:
    """``(N, grid² × 15)`` hand-made colour features of the images at ``paths``: in each cell of a ``grid`` ×
    ``grid`` split, the share of its pixels in each of 12 hue bins (saturated, not dark) and that of black,
    white and grey ones: colour, told to the probes outright, to see whether colour is what they lack."""
    from PIL import Image

    step, out = size // grid, []
    for path in paths:
        hsv = np.asarray(Image.open(path).convert("HSV").resize((size, size)), dtype=np.float32) / 255
        hue, sat, val = hsv[..., 0], hsv[..., 1], hsv[..., 2]
        chromatic = (sat > 0.35) & (val > 0.25)
        bins = np.minimum((hue * 12).astype(int), 11)
        cells = []
        for gy in range(grid):
            for gx in range(grid):
                cell = (slice(gy * step, (gy + 1) * step), slice(gx * step, (gx + 1) * step))
                c, v, s = chromatic[cell], val[cell], sat[cell]
                hist = np.bincount(bins[cell][c], minlength=12) / c.size
                grey = ~c
                cells.append([*hist, (grey & (v < 0.25)).mean(), (grey & (v > 0.75) & (s < 0.2)).mean()])
                cells[-1].append((grey & (v >= 0.25) & ((v <= 0.75) | (s >= 0.2))).mean())
        out.append(np.concatenate(cells))
    return np.asarray(out, dtype=np.float32)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO / "config" / "config.yaml")
    parser.add_argument("--results", type=Path, default=REPO / "results")
    parser.add_argument("--dataset", default="m30k")
    parser.add_argument("--features", type=Path, default=None, help="another (N, F) .npy in the run's id order")
    parser.add_argument(
        "--colour-grid", type=int, default=0, help="append colour histograms of the images on an N x N grid"
    )
    parser.add_argument("--l2", type=float, default=1e-2, help="the linear probes' L2 weight")
    parser.add_argument("--hidden", type=int, default=256, help="the MLP probe's hidden width (the default EmbN's)")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument(
        "--train-images", type=int, default=0, help="train the probes on N of the training images (seeded draw)"
    )
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    torch.set_num_threads(1)

    config = yaml.safe_load(args.config.read_text(encoding="utf-8"))
    with_schema_defaults(config, read_schema(REPO / "config" / "schema.yaml"))
    synthetic = config["datasets"][args.dataset]["synthetic"]
    queries = config["described_queries"]
    root = args.results / args.dataset
    backbone = config["image_features"]["backbone"]
    ids = (root / "image_features" / f"{backbone}.ids.txt").read_text(encoding="utf-8").split()
    features = np.load(args.features or root / "image_features" / f"{backbone}.npy")
    images = pd.read_parquet(root / "images.parquet", columns=["image_id", "split", "path"]).set_index("image_id")
    split = images["split"].to_dict()
    if args.colour_grid:
        colours = colour_histograms([root / images.at[i, "path"] for i in ids], args.colour_grid)
        features = np.concatenate([features, colours], axis=1)
    scenes = scene_plans(ids, synthetic["seed"], synthetic["lexicon"])
    wanted = descriptions(queries["counts"])
    labels = torch.tensor([[d.shown_in(scenes[i]) for d in wanted] for i in ids], dtype=torch.float32)
    train = torch.tensor([split[i] == "train" for i in ids])
    if args.train_images:  # a learning curve: how the ceiling grows with the images it learns from
        rows = np.flatnonzero(train.numpy())
        if not 0 < args.train_images <= len(rows):
            parser.error(f"--train-images: expected 1 to {len(rows)}, got {args.train_images}")
        train = torch.zeros_like(train)
        train[np.random.default_rng(0).choice(rows, args.train_images, replace=False)] = True
    test = [k for k, i in enumerate(ids) if split[i] == "test"]
    x = standardised(torch.from_numpy(np.asarray(features, dtype=np.float32)), train)
    k, min_relevant = queries["k"], queries["min_relevant"]

    def read(scores: torch.Tensor) -> tuple[float, int]:
        found = []
        for d, description in enumerate(wanted):
            relevant = {ids[t] for t in test if labels[t, d] > 0}
            ranked = [ids[test[r]] for r in torch.argsort(scores[test, d], descending=True, stable=True)]
            found.append((description, len(relevant), precision_at_k(ranked, relevant, k)))
        return mean_precision(found, min_relevant)

    base = [
        (description, int(labels[test, d].sum()), float(labels[test, d].mean())) for d, description in enumerate(wanted)
    ]
    mean, counted = mean_precision(base, min_relevant)
    print(
        f"{counted} descriptions shown in {min_relevant}+ of {len(test)} test images, probes trained on "
        f"{int(train.sum())} images; precision at {k}:"
    )
    print(f"  base rate      {mean:.3f}")
    print(f"  linear probe   {read(linear_probe_scores(x, labels, train, args.l2))[0]:.3f}  (L2 {args.l2})")
    for epoch, scores in mlp_probe_scores(x, labels, train, args.hidden, args.epochs, every=50):
        print(f"  MLP probe      {read(scores)[0]:.3f}  (epoch {epoch})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
