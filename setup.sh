#!/usr/bin/env bash
# Set up polyvse on a fresh Debian/Ubuntu machine: espeak-ng (the synthetic spoken
# captions of the grounded-speech tables), fonts for Hindi and CJK text in pictures,
# and a virtual environment in .venv with the library and its pinned dependencies.
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

# Debian packages, installed when missing (apt's package lists are refreshed only when they do not
# know them yet): espeak-ng speaks the synthetic captions; the Devanagari and CJK fonts draw Hindi,
# Chinese, Japanese and Korean text in the galleries and query sheets (DejaVu draws boxes there).
# Without root, say what to run: espeak-ng is needed, the fonts only make pictures readable.
need=()
command -v espeak-ng >/dev/null 2>&1 || need+=(espeak-ng)
[ -f /usr/share/fonts/truetype/lohit-devanagari/Lohit-Devanagari.ttf ] || need+=(fonts-lohit-deva)
[ -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || need+=(fonts-wqy-microhei)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "polyvse: installing ${need[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-cache show "${need[@]}" >/dev/null 2>&1; then
      apt-get update -qq
    fi
    apt-get install -y -qq "${need[@]}" >/dev/null
  elif ! command -v espeak-ng >/dev/null 2>&1; then
    echo "polyvse: espeak-ng is missing; the speech tables need it. Install it as root:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y ${need[*]}" >&2
    exit 1
  else
    echo "polyvse: for readable Hindi/CJK text in the galleries: sudo apt-get install -y ${need[*]}" >&2
  fi
fi
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# torch 2.13.0 exactly: any other version pulls gigabytes of CUDA wheels on a CPU machine
if ! .venv/bin/python -c "import polyvse, torch, snakemake" 2>/dev/null \
   || [ pyproject.toml -nt .venv/.polyvse-installed ]; then
  .venv/bin/pip install --quiet --disable-pip-version-check torch==2.13.0
  .venv/bin/pip install --quiet --disable-pip-version-check -e ".[dev]"
  # librosa compiles its numba kernels when first used and caches them beside its modules: the log-Mel
  # front end runs once here on a short signal (about 25 s), so that neither the tests nor a run's
  # first log-Mel jobs compile them, each on its own (importing librosa alone leaves 8 of its 10 kernels)
  .venv/bin/python -c "import numpy; from polyvse.speech.logmel import logmel; logmel(numpy.ones(1600, 'float32'))"
  touch .venv/.polyvse-installed
fi
echo "polyvse: environment ready in .venv ($(.venv/bin/python -c 'import torch; print("torch", torch.__version__)'))"
