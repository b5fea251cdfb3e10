"""Benchmark: one audio encoder's forward + backward as the trunk is built, against the three forms it
replaced, over batches of 16 log-Mel utterances (a training step's batch of one language) of the
default data's lengths.

* built: the batch packed, its utterances one after another with zero frames between them
  (``polyvse.models.frame_layout``), the convolutions as channels-last 2-D convolutions over
  frames-major tensors (``polyvse.models.speech_encoders.frame_conv``) and the masked batch norm's
  backward written out (``_MaskedNorm``);
* padded: the same, each utterance padded to the batch's longest;
* 1-D convolutions: padded, ``nn.Conv1d`` on contiguous ``(B, C, T)``, which oneDNN reorders to its
  blocked layout and back in every call;
* 1-D convolutions and autograd through the norm's forward operations (the trunk before the three above).

Batch lengths differ from batch to batch, as in training (oneDNN generates a kernel per shape and
caches it, so the first pass over the batches is timed apart). Run:
.venv/bin/python bench/bench_speech_trunk.py [--threads N] [--batches N]
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator

import numpy as np
import torch
from torch import Tensor

from polyvse.models import speech_encoders
from polyvse.speech.batching import pad_batch

WIDTHS = [16, 16, 32, 32, 64]  # config/config.yaml speech.model.widths


def autograd_norm(x: Tensor, m: Tensor, n: Tensor, weight: Tensor, bias: Tensor, eps: float):
    """The masked batch norm's forward in autograd's hands: ``_MaskedNorm.apply``'s signature and values."""
    xm = x * m
    mean = xm.sum(dim=(0, 2)) / n
    var = ((xm * x).sum(dim=(0, 2)) / n - mean * mean).clamp(min=0.0)
    scale = torch.rsqrt(var + eps) * weight
    shift = bias - mean * scale
    return torch.addcmul(shift[None, :, None], x, scale[None, :, None]) * m, mean.detach(), var.detach()


class _AutogradNorm:
    apply = staticmethod(autograd_norm)


@contextlib.contextmanager
def trunk(form: str) -> Iterator[None]:
    """The encoder module's convolution and norm swapped for ``form``'s while inside."""
    conv, norm = speech_encoders.frame_conv, speech_encoders._MaskedNorm
    if form not in ("built", "padded"):
        speech_encoders.frame_conv = lambda c, x: c(x.contiguous())  # type: ignore[assignment]
    if form == "1-D convolutions, autograd norm":
        speech_encoders._MaskedNorm = _AutogradNorm  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        speech_encoders.frame_conv, speech_encoders._MaskedNorm = conv, norm


def batches(n: int, size: int, rng: np.random.Generator) -> list[tuple[Tensor, Tensor]]:
    """``n`` batches of ``size`` utterances spread as the default data's English ones (mean ~370
    frames after the trailing silence's cut, the 5 % truncation's cap ~650)."""
    out = []
    for _ in range(n):
        lengths = np.clip(rng.normal(370, 0.45 * 370, size=size), 80, 650).astype(int)
        out.append(pad_batch([rng.normal(size=(k, 40)).astype(np.float32) for k in lengths]))
    return out


def seconds(encoder: torch.nn.Module, data: list[tuple[Tensor, Tensor]]) -> float:
    start = time.perf_counter()
    for x, lengths in data:
        encoder(x, lengths).sum().backward()
    return (time.perf_counter() - start) / len(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batches", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data = batches(args.batches, args.batch_size, np.random.default_rng(0))
    print(
        f"{args.batches} batches of {args.batch_size}, {len({x.shape[1] for x, _ in data})} lengths, "
        f"{args.threads} thread(s)"
    )
    forms = ("built", "padded", "1-D convolutions", "1-D convolutions, autograd norm")
    times: dict[str, list[float]] = {form: [] for form in forms}
    for rep in range(3):  # interleaved, so that a machine's drift touches every form alike
        for form in forms:
            torch.manual_seed(0)
            encoder = speech_encoders.build_audio_encoder("avg", widths=WIDTHS, ff_dim=256)
            encoder.cnn.packed = form == "built"
            with trunk(form):
                first = seconds(encoder, data)
                times[form].append(seconds(encoder, data))
            if rep == 0:
                print(f"  {form:>32}: first pass {1e3 * first:6.1f} ms a batch")
    for form in forms:
        print(f"  {form:>32}: {1e3 * min(times[form]):6.1f} ms a batch (best of 3 passes)")


if __name__ == "__main__":
    main()
