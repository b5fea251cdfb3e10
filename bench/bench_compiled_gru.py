"""Benchmark: a word model's GRU as ``nn.GRU`` against its recurrence written as a loop and compiled by
``torch.compile`` (inductor), forward + backward on one thread, at the default word models' shapes; and
what compiling costs, in a fresh process with an empty cache and with the cache the first one filled.

The question it answers: on a CPU, ``nn.GRU`` records about ten autograd operations a time step, and a
default word model's GRU (64 hidden units) costs its time steps, not its arithmetic (docs/learning.md,
"Cheaper steps"). A compiled loop fuses each step's gates; whether that pays depends on what one
training saves against what its process spends compiling. Run:

    .venv/bin/python bench/bench_compiled_gru.py [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
from torch import Tensor, nn

# (name, sentences a step, time steps, input width): MULE(10)'s universal embedding into its GRU,
# LIWE(10)'s word embeddings (two such GRUs a step), EmbN's FastText words
SHAPES = [("MULE(10)", 160, 40, 128), ("LIWE(10)", 160, 40, 300), ("EmbN(en)", 32, 15, 300)]
HIDDEN = 64


def recurrence(x: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor) -> Tensor:
    """``nn.GRU``'s function (batch first, one layer, one direction): ``(S, T, D) -> (S, T, H)``."""
    gates_in = F.linear(x, w_ih, b_ih)
    h = x.new_zeros(x.shape[0], w_hh.shape[1])
    outputs = []
    for t in range(x.shape[1]):
        i_r, i_z, i_n = gates_in[:, t].chunk(3, 1)
        h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, 1)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        h = (1 - z) * torch.tanh(i_n + r * h_n) + z * h
        outputs.append(h)
    return torch.stack(outputs, 1)


def milliseconds(step, repeats: int) -> float:
    for _ in range(2):
        step()
    start = time.perf_counter()
    for _ in range(repeats):
        step()
    return 1e3 * (time.perf_counter() - start) / repeats


def measure(repeats: int) -> dict:
    """Compile seconds and the two forms' forward + backward ms at every shape of :data:`SHAPES`."""
    torch.set_num_threads(1)
    out: dict = {}
    for name, sentences, steps, width in SHAPES:
        torch.manual_seed(0)
        gru = nn.GRU(width, HIDDEN, batch_first=True)
        params = (gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0)
        x = torch.randn(sentences, steps, width, requires_grad=True)
        compiled = torch.compile(recurrence, dynamic=False)
        start = time.perf_counter()
        compiled(x, *params).sum().backward()
        compile_s = time.perf_counter() - start
        diff = float((compiled(x, *params) - gru(x)[0]).abs().max())
        out[name] = {
            "compile_s": round(compile_s, 1),
            "max_diff": diff,
            "nn.GRU_ms": round(milliseconds(lambda: gru(x)[0].sum().backward(), repeats), 1),
            "compiled_ms": round(milliseconds(lambda: compiled(x, *params).sum().backward(), repeats), 1),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.repeats)))
        return
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache}
        for run in ("empty cache", "warm cache"):
            child = [sys.executable, __file__, "--child", "--repeats", str(args.repeats)]
            result = json.loads(subprocess.run(child, env=env, check=True, capture_output=True, text=True).stdout)
            for name, r in result.items():
                print(
                    f"{run:>11} {name:>9}: compile {r['compile_s']:6.1f} s; nn.GRU {r['nn.GRU_ms']:6.1f} ms, "
                    f"compiled {r['compiled_ms']:6.1f} ms (max difference {r['max_diff']:.1e})"
                )


if __name__ == "__main__":
    main()
