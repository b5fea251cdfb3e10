"""Benchmark: an EmbN and a SMALR training epoch at the scale config's sizes (config/scale/m30k.yaml),
projected from measured steps, with the training's optimiser (polyvse.optim: "lazy", the default of
training.lazy_word_updates, steps the word tables by SparseAdam and the rest by fused Adam; "fused", dense
fused Adam on everything) and, for EmbN, the foreach Adam it replaced. Run:
.venv/bin/python bench/bench_scale_epoch.py [--threads N] [--steps N] [--device cpu|cuda]

Sizes: the papers' EmbN (word 300, GRU 512, image FC 2048, joint 512; MULE §"Model", SMALR §4), a
batch of 450 images x 2 captions (MULE's public code, the scale config's `training`), a word table
of 22,899 rows (the English training types of the synthetic data at 29,000 images, data_stats),
sentences of 8-20 tokens (the synthetic captions' lengths), image features of 1,280 (EfficientNet-
Lite0). An English epoch is a pass over its 145,000 training captions: 162 steps of 900 sentences.

SMALR (SMALR §3, §4) at the same batch: ten languages, a word table of 125,000 rows (the scale data's
types over ten languages, as bench_pretrain_step.py), 40,000 latent tokens of 512-D (each word mapped to
one, as after pretraining), K = 5,000 language-specific words a language of 50-D, MCLM and the language
classifier on (eq. 4, SMALRObjective's defaults). An epoch passes over every training sentence once:
SMALR's MT augmentation gives every image five sentences in each of the ten languages, 1,450,000 in all.

Target (issue 14): an EmbN epoch of the scale config in at most 10 minutes on 2 CPU cores, at least 3x
faster than the 10-12 s a step measured before (about 30 minutes an epoch); a SMALR epoch in at most 60 s
on an H100 (--device cuda).
"""

from __future__ import annotations

import argparse
import math
import time

import torch

from polyvse.models.embn import EmbN, EmbNConfig
from polyvse.models.hem import SMALR, HEMConfig
from polyvse.optim import adam, clip_gradient_norm, lazy_word_tables
from polyvse.train.objectives import EmbNObjective
from polyvse.train.objectives_smalr import SMALRObjective

VOCAB = 22_899
IMAGE_DIM = 1280
IMAGES_PER_BATCH, CAPTIONS_PER_IMAGE = 450, 2
EPOCH_CAPTIONS = 29_000 * 5
SMALR_LANGS, SMALR_VOCAB, N_LATENT, K_SPECIFIC = 10, 125_000, 40_000, 5_000
SMALR_EPOCH_CAPTIONS = 29_000 * 5 * SMALR_LANGS


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


def smalr_model(device: torch.device, generator: torch.Generator) -> SMALR:
    """SMALR at the papers' sizes, every word on a random latent token, the first K of each language specific."""
    config = HEMConfig(
        vocab_size=SMALR_VOCAB,
        image_dim=IMAGE_DIM,
        n_langs=SMALR_LANGS,
        n_latent=N_LATENT,
        n_specific=SMALR_LANGS * K_SPECIFIC,
    )
    latent_of_word = torch.randint(0, N_LATENT, (SMALR_VOCAB,), generator=generator)
    latent_of_word[0] = -1  # padding
    per_lang = SMALR_VOCAB // SMALR_LANGS
    specific_of_word = torch.full((SMALR_VOCAB,), -1, dtype=torch.long)
    for lang in range(SMALR_LANGS):
        specific_of_word[lang * per_lang + 1 : lang * per_lang + 1 + K_SPECIFIC] = torch.arange(K_SPECIFIC) + (
            lang * K_SPECIFIC
        )
    return SMALR(config, latent_of_word, specific_of_word).to(device)


def step_seconds(optimiser: str, steps: int, device: torch.device, family: str = "embn") -> float:
    """Median seconds of a training step (forward, backward, gradient clipping, Adam) after one warm-up."""
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    data = batch(device, generator)
    if family == "smalr":
        model = smalr_model(device, generator)
        per_lang = SMALR_VOCAB // SMALR_LANGS
        lang = torch.arange(len(data["tokens"])) % SMALR_LANGS  # balanced batches: every language alike
        data["tokens"] = torch.where(data["tokens"] > 0, data["tokens"] % per_lang + lang[:, None] * per_lang, 0)
        data["tokens"] = data["tokens"].to(device)
        data["lang"] = lang.to(device)
        objective = SMALRObjective(generator=torch.Generator(device=device).manual_seed(0))
    else:
        model = EmbN(EmbNConfig(vocab_size=VOCAB, image_dim=IMAGE_DIM)).to(device)
        objective = EmbNObjective()
    # "lazy": the training's default (training.lazy_word_updates): word tables with sparse
    # gradients stepped by SparseAdam, the rest by fused Adam
    lazy = lazy_word_tables(model) if optimiser == "lazy" else []
    params = list(model.parameters())
    if optimiser == "foreach":
        opt = torch.optim.Adam(params, lr=1e-4, foreach=True)
    else:
        opt = adam(params, lr=1e-4, lazy=lazy)
    times = []
    for _ in range(steps + 1):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = objective(model, data)["loss"]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        clip_gradient_norm(params, 2.0)
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
    smalr_per_epoch = math.ceil(SMALR_EPOCH_CAPTIONS / (IMAGES_PER_BATCH * CAPTIONS_PER_IMAGE))
    print(
        f"SMALR: vocabulary={SMALR_VOCAB} latent={N_LATENT} specific={SMALR_LANGS}x{K_SPECIFIC} "
        f"steps_per_epoch={smalr_per_epoch}"
    )
    print("model\toptimiser\tseconds_per_step\tprojected_epoch_minutes")
    for family, optimiser, steps in (
        ("embn", "lazy", per_epoch),
        ("embn", "fused", per_epoch),
        ("embn", "foreach", per_epoch),
        ("smalr", "lazy", smalr_per_epoch),
        ("smalr", "fused", smalr_per_epoch),
    ):
        s = step_seconds(optimiser, args.steps, device, family)
        print(f"{family}\t{optimiser}\t{s:.3f}\t{s * steps / 60:.1f}", flush=True)


if __name__ == "__main__":
    main()
