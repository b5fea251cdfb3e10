"""Benchmark: retrieval evaluation at MSCOCO 5K-test scale, time and peak memory.

5,000 test images x 25,000 captions (five an image) x 10 languages, 512-D unit
embeddings (random: the cost does not depend on the values), scored and ranked as
``polyvse.evaluate.embed.retrieval_for`` does for one language at a time: one
``(S, N)`` float32 score matrix, ranks blockwise (``polyvse.evaluate.retrieval``).
Run: .venv/bin/python bench/bench_eval_scale.py [--images 5000] [--langs 10] [--threads 2]

Target: under 3 GB peak resident memory on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch

from polyvse.evaluate.retrieval import bidirectional_retrieval


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--captions-per-image", type=int, default=5)
    parser.add_argument("--langs", type=int, default=10)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(0)
    images = torch.nn.functional.normalize(torch.randn(args.images, args.dim, generator=gen), dim=1)
    image_of_sentence = np.repeat(np.arange(args.images), args.captions_per_image)
    t0 = time.perf_counter()
    for lang in range(args.langs):
        # sentences near their image, so that recalls are neither 0 nor 100
        noise = torch.randn(len(image_of_sentence), args.dim, generator=gen)
        txt = torch.nn.functional.normalize(images[torch.from_numpy(image_of_sentence)] + 1.5 * noise, dim=1)
        t = time.perf_counter()
        scores = (txt @ images.T).numpy()
        res = bidirectional_retrieval(scores, image_of_sentence)
        del scores, txt
        print(
            f"language {lang + 1}: {len(image_of_sentence)} x {args.images} scored and ranked in "
            f"{time.perf_counter() - t:.1f} s, mR {res.mean_recall:.1f}, peak RSS so far {peak_rss_gb():.2f} GB"
        )
    print(
        f"{args.langs} languages x {len(image_of_sentence)} captions x {args.images} images: "
        f"{time.perf_counter() - t0:.1f} s, peak RSS {peak_rss_gb():.2f} GB ({args.threads} threads)"
    )


if __name__ == "__main__":
    main()
