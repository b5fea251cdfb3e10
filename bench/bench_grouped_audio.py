"""Benchmark: whether the speech trainings' three per-language audio encoders would be cheaper as one grouped
network. Forward + backward of the default widths' convolution stack (a 1 × 1 input convolution, then four
stages of four kernel-9 convolutions with batch norm and ReLU, the first of each stage of stride 2) over 16
utterances of 450 log-Mel frames, three ways: three encoders one after another (as a step runs them), one
network whose every convolution is grouped by language (``groups=3``, three times the channels), and one
shared encoder over the 48 utterances. Run: .venv/bin/python bench/bench_grouped_audio.py [--threads N]

Target: none; it measures a lever of docs/learning.md ("What learning costs"): grouping pays only if the
encoders' convolutions cost their launches more than their arithmetic.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

WIDTHS = (16, 16, 32, 32, 64)  # config/config.yaml speech.model.widths
N_MELS, FRAMES, BATCH = 40, 450, 16


def conv_stack(groups: int) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv1d(N_MELS * groups, WIDTHS[0] * groups, 1, groups=groups)]
    channels = WIDTHS[0] * groups
    for width in WIDTHS[1:]:
        for unit in range(4):
            stride = 2 if unit == 0 else 1
            layers += [
                nn.Conv1d(channels, width * groups, 9, stride=stride, padding=4, groups=groups),
                nn.BatchNorm1d(width * groups),
                nn.ReLU(),
            ]
            channels = width * groups
    return nn.Sequential(*layers)


def milliseconds(networks: list[nn.Sequential], inputs: list[torch.Tensor], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for network, x in zip(networks, inputs):
            network(x).sum().backward()
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:]) * 1e3  # the first pass is warm-up


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    ways = {
        "three encoders, one after another": ([conv_stack(1) for _ in range(3)], [(BATCH, N_MELS)] * 3),
        "one network grouped by language": ([conv_stack(3)], [(BATCH, 3 * N_MELS)]),
        "one shared encoder, 48 utterances": ([conv_stack(1)], [(3 * BATCH, N_MELS)]),
    }
    print(f"forward + backward, median of {args.repeats - 1} (ms), {args.threads} thread(s)")
    for name, (networks, shapes) in ways.items():
        inputs = [torch.randn(*shape, FRAMES) for shape in shapes]
        print(f"| {name} | {milliseconds(networks, inputs, args.repeats):.1f} |")


if __name__ == "__main__":
    main()
