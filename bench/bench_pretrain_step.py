"""Benchmark: a latent-vocabulary pretraining step at the scale config's size (SMALR §3.1: 40K latent
tokens of size 512, the scorer's query space the FastText size 300, the cosine scorer of
config/scale/m30k.yaml, p = 0.2, M = 20) with both straight-through modes, each in its own process
so that its peak memory is its own. Run:
.venv/bin/python bench/bench_pretrain_step.py [--threads N] [--words N] [--steps N]

A batch is 450 images x 2 captions (900 sentences of 8-20 words) drawn from a joint vocabulary of
198,275 words (the scale config's ten languages, human + MT captions). An epoch is projected for
its 1,450,000 training sentences (145,000 a language: 1,612 batches, as the scale run's pretraining
log reports them; docs/scale_run/ has that run's measured epoch).

Target: one epoch at 40K tokens in at most 30 minutes on 2 cores, at most 3 GB peak.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import torch

from polyvse.models.latent_vocab import LatentVocabulary, LatentVocabularyConfig
from polyvse.optim import adam
from polyvse.train.objectives_smalr import LatentVocabularyObjective

EPOCH_SENTENCES = 1_450_000
SENTENCES_PER_BATCH = 450 * 2


def measure(mode: str, words: int, steps: int, threads: int) -> dict:
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = LatentVocabulary(LatentVocabularyConfig(vocab_size=words, straight_through=mode, scorer="cosine"))
    model.generator = torch.Generator().manual_seed(0)
    objective = LatentVocabularyObjective(0.05, 10)
    opt = adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(1)
    lengths = torch.randint(8, 21, (SENTENCES_PER_BATCH,), generator=gen)
    # word frequencies fall off as in text (Zipf, frequency ∝ 1 / rank): thousands of distinct words a batch
    zipf = 1.0 / torch.arange(1, words, dtype=torch.float64)
    tokens = torch.multinomial(zipf, SENTENCES_PER_BATCH * 20, replacement=True, generator=gen).view(-1, 20) + 1
    tokens[torch.arange(20) >= lengths[:, None]] = 0
    batch = {
        "tokens": tokens,
        "lengths": lengths,
        "image_of_sentence": torch.arange(450).repeat_interleave(2),
        "images": torch.zeros(450, 1),
        "lang": torch.zeros(SENTENCES_PER_BATCH, dtype=torch.long),
    }
    times = []
    for _ in range(steps + 1):
        t0 = time.perf_counter()
        loss = objective(model, batch)["loss"]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    rest = sorted(times[1:])
    return {
        "mode": mode,
        "distinct_words": int(torch.unique(tokens[tokens > 0]).numel()),
        "seconds_per_step": rest[len(rest) // 2],
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--words", type=int, default=198_275)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--mode", help=argparse.SUPPRESS)  # one measurement, in a child process
    args = ap.parse_args()
    if args.mode:
        print(json.dumps(measure(args.mode, args.words, args.steps, args.threads)))
        return
    batches = -(-EPOCH_SENTENCES // SENTENCES_PER_BATCH)
    print(
        f"threads={args.threads} words={args.words} latent_tokens=40000 batch={SENTENCES_PER_BATCH} sentences "
        f"batches_per_epoch={batches}"
    )
    print("straight_through\tdistinct_words\tseconds_per_step\tprojected_epoch_minutes\tpeak_rss_gb")
    for mode in ("top_m", "softmax"):
        child = subprocess.run(
            [
                sys.executable,
                __file__,
                "--mode",
                mode,
                "--threads",
                str(args.threads),
                "--words",
                str(args.words),
                "--steps",
                str(args.steps),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(child.stdout)
        print(
            f"{mode}\t{r['distinct_words']}\t{r['seconds_per_step']:.2f}\t{r['seconds_per_step'] * batches / 60:.1f}\t"
            f"{r['peak_rss_gb']:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
