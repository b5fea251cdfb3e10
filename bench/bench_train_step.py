"""Benchmark: seconds per EmbN training step (forward + backward + Adam) on
this machine, for the model sizes and sentence lengths the default config and
the papers use. Run: .venv/bin/python bench/bench_train_step.py [--threads N]

Targets (2-core CPU, default sizes): a step under 0.15 s, so that one default
training of ~12 epochs x ~40 steps stays well under a minute.
"""

from __future__ import annotations

import argparse
import time

import torch

from polyvse.models.embn import EmbN, EmbNConfig
from polyvse.train.objectives import EmbNObjective


def step_seconds(
    gru_hidden: int,
    image_hidden: int,
    seq_len: int,
    batch_images: int = 128,
    captions_per_image: int = 2,
    repeats: int = 5,
) -> float:
    torch.manual_seed(0)
    model = EmbN(
        EmbNConfig(
            vocab_size=5000,
            image_dim=1280,
            word_dim=300,
            gru_hidden=gru_hidden,
            image_hidden=image_hidden,
            joint_dim=512,
        )
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    objective = EmbNObjective()
    s = batch_images * captions_per_image
    batch = {
        "images": torch.randn(batch_images, 1280),
        "tokens": torch.randint(1, 5000, (s, seq_len)),
        "lengths": torch.randint(seq_len // 2, seq_len + 1, (s,)),
        "lang": torch.zeros(s, dtype=torch.long),
        "image_of_sentence": torch.arange(batch_images).repeat_interleave(captions_per_image),
    }
    times = []
    for _ in range(repeats + 1):
        t0 = time.perf_counter()
        loss = objective(model, batch)["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    return sorted(times[1:])[len(times[1:]) // 2]  # median, first step is warm-up


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print("gru_hidden\timage_hidden\tseq_len\tseconds_per_step")
    for gru, img in ((128, 1024), (256, 1024), (512, 2048)):
        for seq_len in (15, 40):
            print(f"{gru}\t{img}\t{seq_len}\t{step_seconds(gru, img, seq_len):.3f}", flush=True)


if __name__ == "__main__":
    main()
