#!/usr/bin/env bash
# Set up polyvse on a fresh Debian/Ubuntu machine: a virtual environment in
# .venv with the library and its pinned dependencies. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# torch 2.13.0 exactly: any other version pulls gigabytes of CUDA wheels on a CPU machine
if ! .venv/bin/python -c "import polyvse, torch, snakemake" 2>/dev/null \
   || [ pyproject.toml -nt .venv/.polyvse-installed ]; then
  .venv/bin/pip install --quiet --disable-pip-version-check torch==2.13.0
  .venv/bin/pip install --quiet --disable-pip-version-check -e ".[dev]"
  touch .venv/.polyvse-installed
fi
echo "polyvse: environment ready in .venv ($(.venv/bin/python -c 'import torch; print("torch", torch.__version__)'))"
