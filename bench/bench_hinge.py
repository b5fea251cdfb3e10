"""Benchmark: the top-K hinge of the text families' triplet losses (polyvse.losses.triplet) on the CPU, forward
and backward, at the shapes of a default ten-language step (16 images with a caption in each of ten languages),
in three forms: one row per positive pair (the definition, ``gathered_top_k_hinge``), each anchor's positives in
slots (the CPU trainings' form, ``top_k_hinge``), and fixed shapes (the accelerator's, ``dense_top_k_hinge``).
Run: .venv/bin/python bench/bench_hinge.py [--threads N]

Target: none; it measures which form makes the ten-language text steps cheapest on a CPU (the default DAG's
trainings are most of its time, docs/learning.md "What learning costs"). The forms give the same value up to
the order of the sum.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from polyvse.losses.triplet import dense_top_k_hinge, gathered_top_k_hinge, top_k_hinge


def shapes(images: int, langs: int) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Distance-matrix masks of one step: positive pairs and negatives of the neighbourhood constraints
    (sentence × sentence), the image-anchored and the sentence-anchored multimodal terms."""
    image_of = torch.arange(images).repeat_interleave(langs)  # (S,)
    same = image_of.unsqueeze(0) == image_of.unsqueeze(1)
    eye = torch.eye(len(image_of), dtype=torch.bool)
    described = torch.arange(images).unsqueeze(1) == image_of.unsqueeze(0)  # (B, S)
    return {
        "neighbourhood (S x S)": (same & ~eye, ~same),
        "image-anchored (B x S)": (described, ~described),
        "sentence-anchored (S x B)": (described.T, ~described.T),
    }


def seconds(fn, dist: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        d = dist.clone().requires_grad_(True)
        start = time.perf_counter()
        fn(d, positive, negative, 0.05, 10).backward()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"top-K hinge, forward + backward, median of {args.repeats} (ms), {args.threads} thread(s)")
    forms = {
        "a row per positive pair": gathered_top_k_hinge,
        "slots (CPU)": top_k_hinge,
        "fixed shapes": dense_top_k_hinge,
    }
    print(f"| term | {' | '.join(forms)} | largest value difference |")
    print("|---|" + "--:|" * (len(forms) + 1))
    for name, (positive, negative) in shapes(16, 10).items():
        dist = torch.rand(positive.shape) * 2
        ms = [seconds(form, dist, positive, negative, args.repeats) * 1e3 for form in forms.values()]
        values = [float(form(dist, positive, negative)) for form in forms.values()]
        delta = max(values) - min(values)
        print(f"| {name} | {' | '.join(f'{m:.3f}' for m in ms)} | {delta:.2e} |")


if __name__ == "__main__":
    main()
