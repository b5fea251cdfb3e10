"""Benchmark: what the padding of a speech batch costs, and what packing the batch wins back.

One audio encoder at the default config's widths, forward + backward over a batch of 32 log-Mel
utterances whose lengths follow the default data's (English: mean ~390 frames, the batch's longest
~670 after the thesis' 5 % truncation, so ~40 % of the padded frames are padding), timed
(a) padded to the batch's longest; (b) sorted by length and cut into k chunks, each padded to its own
longest (the padding mostly gone, but k smaller convolutions); (c) packed, as the trunk runs: the
utterances one after another in one row, zero gaps as wide as each resolution's convolutions read,
starts on the strides' grid, the row's width rounded up to one of 8 widths an octave
(``polyvse.models.frame_layout``); (d) every utterance cut to the mean length (the floor: no
padding at all). Run: .venv/bin/python bench/bench_speech_padding.py [--threads N]

Every convolution call costs ~0.25 ms forward and backward whatever its size, so chunks, which multiply the
calls, win little back on a CPU; packing keeps one call a layer. The measured figures are in
docs/benchmarks.md. Packing without the rounded widths was no faster in a whole training: oneDNN builds a
kernel for every new input shape, and a packed row's width, the sum of the batch's lengths, is new at
almost every step.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from polyvse.models.speech_encoders import build_audio_encoder
from polyvse.speech.batching import pad_batch

WIDTHS = [16, 16, 32, 32, 64]  # config/config.yaml speech.model.widths
BATCH = 32


def utterance_lengths(rng: np.random.Generator, n: int, mean: float = 390.0, cap: int = 678) -> np.ndarray:
    """Lengths (frames) spread as the default data's English utterances: ~N(mean, 0.45·mean), whose 95th
    percentile is the truncation cap, within [80, cap]."""
    return np.clip(rng.normal(mean, 0.45 * mean, size=n), 80, cap).astype(int)


def encoder_seconds(utterances: list[np.ndarray], chunks: int, packed: bool = False, repeats: int = 5) -> float:
    """Seconds for one forward + backward of the encoder over the batch, in ``chunks`` length-sorted parts."""
    torch.manual_seed(0)
    encoder = build_audio_encoder("avg", widths=WIDTHS, ff_dim=256)
    encoder.cnn.packed = packed
    order = np.argsort([len(u) for u in utterances])

    def step() -> None:
        outputs = []
        for part in np.array_split(order, chunks):
            x, lengths = pad_batch([utterances[i] for i in part])
            outputs.append(encoder(x, lengths))
        torch.cat(outputs).sum().backward()

    for _ in range(2):
        step()
    t0 = time.perf_counter()
    for _ in range(repeats):
        step()
    return (time.perf_counter() - t0) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    lengths = utterance_lengths(rng, BATCH)
    utterances = [rng.normal(size=(n, 40)).astype(np.float32) for n in lengths]
    padding = 1 - lengths.mean() / lengths.max()
    print(f"batch of {BATCH}: mean {lengths.mean():.0f} frames, longest {lengths.max()}, padding {100 * padding:.0f} %")
    for chunks in (1, 2, 3, 4):
        what = "padded to the longest" if chunks == 1 else f"{chunks} length-sorted chunks"
        print(f"  {what:>24}: {1e3 * encoder_seconds(utterances, chunks):6.1f} ms")
    print(f"  {'packed':>24}: {1e3 * encoder_seconds(utterances, 1, packed=True):6.1f} ms")
    mean = int(lengths.mean())
    floor = encoder_seconds([u[:mean] for u in utterances], 1)
    print(f"  {'all cut to the mean':>24}: {1e3 * floor:6.1f} ms (the floor without padding)")


if __name__ == "__main__":
    main()
