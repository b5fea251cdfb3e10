"""Benchmark: seconds per grounded-speech training step (three audio encoders and the image
encoder, forward + backward + Adam) on this machine, for each pooling, at the default
config's widths and at the thesis' (§2.4.2.2). Run:
.venv/bin/python bench/bench_speech_step.py [--threads N] [--paper] [--device cpu|cuda] [--amp]

Utterances are random log-Mel of the default data's lengths (en/hi about 4 s, ja 5 s:
400-500 frames, padded to the longest of the batch as the loader gives them; the trunk
convolves them packed, ``polyvse.models.frame_layout``).

--amp adds the step under bf16 autocast (speech.training.amp: bf16) beside float32's, the
two measured alternately.

Target (2-core CPU, one thread, default widths): an average-pooling step under 0.25 s at batch
16, the default's (32 steps an epoch), so that an epoch with its validation stays under 10 s and a
speech training that converges in 12-16 epochs under about two and a half minutes.
"""

from __future__ import annotations

import argparse
import time

import torch

from polyvse.models.speech_encoders import PAPER_WIDTHS
from polyvse.models.grounded_speech import build_speech_model
from polyvse.losses.multiview import multiview_loss
from polyvse.losses.speech_objectives import make_objective

LANGS = ("en", "hi", "ja")
MEAN_FRAMES = {"en": 400, "hi": 410, "ja": 510}


def step_seconds(
    widths: tuple[int, ...],
    pooling: str,
    batch: int = 16,
    ff_dim: int = 256,
    repeats: int = 5,
    device: torch.device = torch.device("cpu"),
    amp: bool = False,
) -> float:
    torch.manual_seed(0)
    model = build_speech_model({"widths": list(widths), "pooling": pooling, "ff_dim": ff_dim, "heads": 8}, LANGS, 1280)
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    objective = make_objective("infonce")
    speech = {}
    for lang in LANGS:
        lengths = torch.randint(int(MEAN_FRAMES[lang] * 0.6), int(MEAN_FRAMES[lang] * 1.4), (batch,))
        speech[lang] = (torch.randn(batch, int(lengths.max()), 40).to(device), lengths.to(device))
    data = {"image": torch.randn(batch, 1280).to(device), "speech": speech}
    times = []
    for _ in range(repeats + 1):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            loss = multiview_loss("full_graph", model.views(data), objective)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return sorted(times[1:])[len(times[1:]) // 2]  # median, the first step is warm-up


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--paper", action="store_true", help="also the thesis' widths 128-1024 (slow on a CPU)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--amp", action="store_true", help="also under bf16 autocast (speech.training.amp: bf16)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    sizes = [("default", (16, 16, 32, 32, 64), 16, 256)]
    if args.paper:
        sizes.append(("thesis", PAPER_WIDTHS, 128, 2048))
    print(f"threads={args.threads} device={torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'}")
    print("size     pooling      batch  s/step" + ("  s/step_bf16" if args.amp else ""))
    for name, widths, batch, ff_dim in sizes:
        for pooling in ("avg", "mhsa", "transformer"):
            s = step_seconds(widths, pooling, batch, ff_dim, device=device)
            line = f"{name:8} {pooling:12} {batch:5}  {s:.3f}"
            if args.amp:
                line += f"  {step_seconds(widths, pooling, batch, ff_dim, device=device, amp=True):.3f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
