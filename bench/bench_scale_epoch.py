"""Benchmark: an EmbN and a SMALR training epoch at the scale config's sizes (config/scale/m30k.yaml),
projected from measured steps, with the training's optimiser (polyvse.optim: "lazy", the default of
training.lazy_word_updates, steps the word tables by SparseAdam and the rest by fused Adam; "fused", dense
fused Adam on everything) and, for EmbN, the foreach Adam it replaced. Run:
.venv/bin/python bench/bench_scale_epoch.py [--threads N] [--steps N] [--device cpu|cuda]
.venv/bin/python bench/bench_scale_epoch.py --epoch smalr --device cuda [--amp bf16] [--optimiser lazy|fused]

The first form times single steps on one batch and projects an epoch. ``--epoch`` runs whole epochs
through the training's own loop (polyvse.train.loop.run_epochs over the ragged EncodedCaptions, the
language-balanced ImageGroupedBatches sampler, collate with the features on the device, the
checkpoint at the epoch's end) on synthetic data of the scale config's sizes, with Zipf-distributed
word ids, and reports the loop's measured epoch seconds; ``--sync-check`` counts the host-device
synchronisations a CUDA step makes and where (torch.cuda.set_sync_debug_mode).

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

Target: an EmbN epoch of the scale config in at most 10 minutes on 2 CPU cores, at least 3x
faster than the 10-12 s a step measured before (about 30 minutes an epoch); a SMALR epoch in at most 60 s
on an H100 (--device cuda).
"""

from __future__ import annotations

import argparse
import collections
import math
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from polyvse.models.embn import EmbN, EmbNConfig
from polyvse.models.hem import SMALR, HEMConfig
from polyvse.optim import adam, clip_gradient_norm, lazy_word_tables
from polyvse.text.encoded import EncodedCaptions
from polyvse.train.data import ImageGroupedBatches, collate, device_batches
from polyvse.train.loop import run_epochs
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


N_IMAGES, CAPTIONS_PER_LANG = 29_000, 5


def scale_captions(family: str, seed: int = 0) -> EncodedCaptions:
    """Training sentences of the scale config's sizes, as the training holds them: 29,000 images
    with 5 sentences each in every language (EmbN: English; SMALR: the ten languages, MT-augmented),
    8-20 ids each, word ids Zipf-distributed (exponent 1.1) over each language's block of the table."""
    rng = np.random.default_rng(seed)
    n_langs = SMALR_LANGS if family == "smalr" else 1
    per_lang = SMALR_VOCAB // SMALR_LANGS if family == "smalr" else VOCAB
    n = N_IMAGES * CAPTIONS_PER_LANG * n_langs
    lang = np.repeat(np.arange(n_langs), N_IMAGES * CAPTIONS_PER_LANG)
    image_row = np.tile(np.repeat(np.arange(N_IMAGES), CAPTIONS_PER_LANG), n_langs)
    lengths = rng.integers(8, 21, n)
    rank = rng.zipf(1.1, int(lengths.sum())) % (per_lang - 1)
    ids = 1 + rank + np.repeat(lang * per_lang, lengths)
    lengths_t = torch.from_numpy(lengths)
    return EncodedCaptions(
        ids=torch.from_numpy(ids.astype(np.int32)),
        offsets=torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(lengths_t, 0)]),
        lengths=lengths_t,
        image_row=torch.from_numpy(image_row),
        lang=torch.from_numpy(lang),
        langs=[f"l{i}" for i in range(n_langs)],
        frame=None,
    )


def model_and_objective(family: str, device: torch.device) -> tuple[torch.nn.Module, object]:
    generator = torch.Generator().manual_seed(0)
    if family == "smalr":
        model = smalr_model(device, generator)
        return model, SMALRObjective(generator=torch.Generator(device=device).manual_seed(0))
    return EmbN(EmbNConfig(vocab_size=VOCAB, image_dim=IMAGE_DIM)).to(device), EmbNObjective()


def whole_epoch(family: str, device: torch.device, amp: str, optimiser: str, batches: int | None, workers: int) -> dict:
    """One epoch through run_epochs (the training's loop, its checkpoint included) with the batches
    drawn as polyvse.train.run draws them (``workers`` loader processes); returns the loop's epoch
    seconds, the whole call's, and the steps run. Prints the time every 200 batches."""
    torch.manual_seed(0)
    captions = scale_captions(family)
    sampler = ImageGroupedBatches.for_captions(captions, IMAGES_PER_BATCH, CAPTIONS_PER_IMAGE, "balanced")
    n_batches = min(len(sampler), batches or len(sampler))
    features = torch.randn(N_IMAGES, IMAGE_DIM, generator=torch.Generator().manual_seed(1)).to(device)
    model, objective = model_and_objective(family, device)
    lazy = lazy_word_tables(model) if optimiser == "lazy" else []
    opt = adam(list(model.parameters()), lr=1e-4, lazy=lazy)

    def epoch_batches(rng: np.random.Generator):
        start = time.perf_counter()
        for i, batch in enumerate(device_batches(sampler, captions, features, device, rng, n_batches, workers)):
            if i and i % 200 == 0:
                print(f"  {i} batches in {time.perf_counter() - start:.1f} s", flush=True)
            yield batch

    with tempfile.TemporaryDirectory() as tmp:
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        result = run_epochs(
            model,
            opt,
            epoch_batches,
            n_batches,
            lambda b: objective(model, b),
            lambda m: 0.0,
            epochs=1,
            seed=0,
            checkpoint_dir=Path(tmp),
            run_id=family,
            device=device,
            grad_clip=2.0,
            progress=False,
            autocast=torch.bfloat16 if amp == "bf16" else None,
        )
        wall = time.perf_counter() - t0
    row = result.log.iloc[0]
    peak = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else float("nan")
    return {
        "sampler": sampler_seconds(captions, sampler, 50),
        "steps": n_batches,
        "epoch_seconds": float(row["seconds"]),
        "wall": wall,
        "loss": float(row["loss"]),
        "peak_gib": peak,
    }


def sampler_seconds(captions: EncodedCaptions, sampler: ImageGroupedBatches, batches: int) -> float:
    """Host seconds a batch of the sampler and collate alone, over ``batches`` batches (the floor
    of a step whose device work hides behind the host's)."""
    features = torch.randn(N_IMAGES, IMAGE_DIM)
    t0 = time.perf_counter()
    for i, rows in enumerate(sampler.epoch(np.random.default_rng(0))):
        if i >= batches:
            break
        collate(captions, rows, features, torch.device("cpu"))
    return (time.perf_counter() - t0) / batches


def training_step(family: str, device: torch.device, amp: str, optimiser: str):
    """The scale data, its sampler, the image features on ``device``, and one training step as a
    function of a batch (forward under ``amp``, backward, clipping, Adam), as run_epochs runs it."""
    captions = scale_captions(family)
    sampler = ImageGroupedBatches.for_captions(captions, IMAGES_PER_BATCH, CAPTIONS_PER_IMAGE, "balanced")
    features = torch.randn(N_IMAGES, IMAGE_DIM).to(device)
    model, objective = model_and_objective(family, device)
    lazy = lazy_word_tables(model) if optimiser == "lazy" else []
    opt = adam(list(model.parameters()), lr=1e-4, lazy=lazy)
    params = list(model.parameters())

    def step(batch: dict[str, torch.Tensor]) -> None:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp == "bf16"):
            loss = objective(model, batch)["loss"]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        clip_gradient_norm(params, 2.0)
        opt.step()

    return captions, sampler, features, step


def sync_check(family: str, device: torch.device, amp: str, optimiser: str) -> collections.Counter:
    """Host-device synchronisations of three training steps, counted by the Python line that
    caused them (torch.cuda.set_sync_debug_mode warns at each)."""
    captions, sampler, features, step = training_step(family, device, amp, optimiser)
    where: collections.Counter = collections.Counter()
    batches = sampler.epoch(np.random.default_rng(0))
    for i in range(4):
        batch = collate(captions, next(batches), features, device)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if i > 0:  # the first step warms up
                torch.cuda.set_sync_debug_mode("warn")
            step(batch)
            torch.cuda.set_sync_debug_mode("default")
        for w in caught:
            if "synchroniz" in str(w.message):
                where[f"{Path(w.filename).name}:{w.lineno}"] += 1
    return where


def profile_steps(family: str, device: torch.device, amp: str, optimiser: str, steps: int = 5) -> str:
    """torch.profiler over ``steps`` CUDA training steps after one warm-up: the wall time of the
    steps, the device's busy time (the sum of its kernels), and the ops that cost most of each."""
    captions, sampler, features, one = training_step(family, device, amp, optimiser)
    draws = sampler.epoch(np.random.default_rng(0))
    batches = [collate(captions, next(draws), features, device) for _ in range(steps + 1)]

    one(batches[0])
    torch.cuda.synchronize()
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as prof:
        t0 = time.perf_counter()
        for batch in batches[1:]:
            one(batch)
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    events = prof.key_averages()
    # the device's own events (kernels, copies): the ops that launched them carry the same time again
    busy = sum(e.self_device_time_total for e in events if e.device_type == torch.autograd.DeviceType.CUDA) / 1e6
    head = f"{steps} steps: wall {wall / steps * 1e3:.1f} ms a step, device busy {busy / steps * 1e3:.1f} ms a step\n"
    return head + events.table(sort_by="self_device_time_total", row_limit=12, max_name_column_width=50)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--epoch", choices=["embn", "smalr"], help="run whole epochs of this model (see above)")
    ap.add_argument("--amp", choices=["off", "bf16"], default="off", help="with --epoch: training.amp")
    ap.add_argument("--optimiser", choices=["lazy", "fused"], default="lazy", help="with --epoch")
    ap.add_argument("--batches", type=int, help="with --epoch: stop the epoch after this many batches")
    ap.add_argument("--sync-check", action="store_true", help="with --epoch on CUDA: count syncs a step")
    ap.add_argument("--profile", action="store_true", help="with --epoch on CUDA: torch.profiler over 5 steps")
    ap.add_argument("--workers", type=int, help="with --epoch: loader processes (training.loader_workers; 1 on CUDA)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if args.epoch:
        if args.profile:
            print(profile_steps(args.epoch, device, args.amp, args.optimiser))
            return
        if args.sync_check:
            found = sync_check(args.epoch, device, args.amp, args.optimiser)
            print(f"{args.epoch} amp={args.amp} optimiser={args.optimiser}: {sum(found.values())} syncs in 3 steps")
            for line, count in found.most_common():
                print(f"  {count:4d}  {line}")
            return
        workers = args.workers if args.workers is not None else int(device.type == "cuda")
        r = whole_epoch(args.epoch, device, args.amp, args.optimiser, args.batches, workers)
        name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"cpu x{args.threads}"
        print(
            f"{args.epoch}\tdevice={name}\tamp={args.amp}\toptimiser={args.optimiser}\tworkers={workers}\t"
            f"steps={r['steps']}\t"
            f"epoch_seconds={r['epoch_seconds']:.1f}\twall_with_checkpoint={r['wall']:.1f}\t"
            f"seconds_per_step={r['epoch_seconds'] / r['steps']:.4f}\tmean_loss={r['loss']:.4f}\t"
            f"peak_gpu_gib={r['peak_gib']:.2f}\thost_sampler_seconds_per_step={r['sampler']:.4f}",
            flush=True,
        )
        return
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
