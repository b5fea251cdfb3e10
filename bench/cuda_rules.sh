#!/usr/bin/env bash
# The training rules themselves on a CUDA machine, through Snakemake as a user runs them (step
# `rules` of bench/cuda_session.sh): the default config's data stages for their inputs first, on the
# machine's CPUs, then the trainings, side by side on its one GPU (training.device: auto picks it).
# Ends with one `rule` line a training job that finished (bench/rules_on_device.py), beside its time
# in the kept default run on 2 CPU cores (docs/default_run/benchmarks.tsv). Each phase has its own
# time limit so that the lines of the jobs that did finish are printed within the step's.
set -u
PY=${PY:-python3}
TRAININGS=(train train_seeds mlmme_train_seeds)
# RULES_TARGETS: other targets; TRAIN_CORES=1: one training at a time (as on a cluster, one GPU a job)
DEFAULT_TARGETS='results/m30k/models/{smalr_10,mule_10,liwe_s_10,embn_en,smalr_10_paper}/model.pt
    results/m30k/mlmme/mlmme/b100/model.pt'
eval "TARGETS=(${RULES_TARGETS:-$DEFAULT_TARGETS})" # brace expansion of the patterns
TRAIN_CORES=${TRAIN_CORES:-$(nproc)}
# no PuLP on the device machine (a 16 MB wheel): the greedy scheduler needs none
SMK=($PY -m snakemake --cores all --scheduler greedy --keep-going)
start=$(date +%s)
timeout "${DATA_LIMIT:-200}" "${SMK[@]}" --omit-from "${TRAININGS[@]}" -- "${TARGETS[@]}"
data=$(($(date +%s) - start))
timeout "${TRAIN_LIMIT:-180}" "${SMK[@]}" --cores "$TRAIN_CORES" -- "${TARGETS[@]}"
echo "data stages ${data} s, trainings $(($(date +%s) - start - data)) s (wall, $(nproc) cores, trainings on $TRAIN_CORES)"
[[ -n "${OUT:-}" ]] && tar czf "$OUT/rules_jobs.tgz" logs benchmarks 2>/dev/null
exec $PY bench/rules_on_device.py --cpu docs/default_run/benchmarks.tsv "${TRAININGS[@]}"
