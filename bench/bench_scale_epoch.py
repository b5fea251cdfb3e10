"""Benchmark: an EmbN training epoch at the scale config's sizes (config/scale/m30k.yaml), projected
from measured steps, with the training's optimiser (fused Adam, polyvse.optim) and, for comparison,
the foreach Adam it replaced. Run:
.venv/bin/python bench/bench_scale_epoch.py [--threads N] [--steps N] [--device cpu|cuda]

Sizes: the papers' EmbN (word 300, GRU 512, image FC 2048, joint 512; MULE §"Model", SMALR §4), a
batch of 450 images x 2 captions (MULE's public code, the scale config's `training`), a word table
of 22,899 rows (the English training types of the synthetic data at 29,000 images, data_stats),
sentences of 8-20 tokens (the synthetic captions' lengths), image features of 1,280 (EfficientNet-
Lite0). An English epoch is a pass over its 145,000 training captions: 162 steps of 900 sentences.

Target (issue 14): an EmbN epoch of the scale config in at most 10 minutes on 2 CPU cores, at least 3x
faster than the 10-12 s a step measured before (about 30 minutes an epoch).
"""

from __future__ import annotations

import argparse
import math
import time

import torch

from polyvse.models.embn import EmbN, EmbNConfig
from polyvse.optim import adam
from polyvse.train.objectives import EmbNObjective

VOCAB = 22_899
IMAGE_DIM = 1280
IMAGES_PER_BATCH, CAPTIONS_PER_IMAGE = 450, 2
EPOCH_CAPTIONS = 29_000 * 5


def batch(device: torch.device, generator: torch.Generator) -> dict[str, torch.Tensor]:
    s = IMAGES_PER_BATCH * CAPTIONS_PER_IMAGE
    lengths = torch.randint(8, 21, (s,), generator=generator)
    tokens = torch.randint(1, VOCAB, (s, int(lengths.max())), generator=generator)
    tokens[torch.arange(tokens.shape[1]) >= lengths[:, None]] = 0  # padding past each length
    return {
        "images": torch.randn(IMAGES_PER_BATCH, IMAGE_DIM, generator=generator).to(device),
        "tokens": tokens.to(device),
        "lengths": lengths,
        "lang": torch.zeros(s, dtype=torch.long, device=device),
        "image_of_sentence": torch.arange(IMAGES_PER_BATCH).repeat_interleave(CAPTIONS_PER_IMAGE).to(device),
    }


def step_seconds(optimiser: str, steps: int, device: torch.device) -> float:
    """Median seconds of a training step (forward, backward, gradient clipping, Adam) after one warm-up."""
    torch.manual_seed(0)
    model = EmbN(EmbNConfig(vocab_size=VOCAB, image_dim=IMAGE_DIM)).to(device)
    params = list(model.parameters())
    opt = adam(params, lr=1e-4) if optimiser == "fused" else torch.optim.Adam(params, lr=1e-4, foreach=True)
    objective = EmbNObjective()
    generator = torch.Generator().manual_seed(0)
    data = batch(device, generator)
    times = []
    for _ in range(steps + 1):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = objective(model, data)["loss"]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 2.0)
        opt.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    rest = sorted(times[1:])
    return rest[len(rest) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    per_epoch = math.ceil(EPOCH_CAPTIONS / (IMAGES_PER_BATCH * CAPTIONS_PER_IMAGE))
    print(
        f"device={device} threads={args.threads} vocabulary={VOCAB} batch={IMAGES_PER_BATCH}x{CAPTIONS_PER_IMAGE} "
        f"steps_per_epoch={per_epoch}"
    )
    print("optimiser\tseconds_per_step\tprojected_epoch_minutes")
    for optimiser in ("fused", "foreach"):
        s = step_seconds(optimiser, args.steps, device)
        print(f"{optimiser}\t{s:.3f}\t{s * per_epoch / 60:.1f}", flush=True)


if __name__ == "__main__":
    main()
