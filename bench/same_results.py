"""Show that a change of the code changes no number: run one config at two commits and compare what each
run wrote under ``results/``.

Each commit is checked out in a worktree of this repository (``DIR/tree-{commit}``) and run there with
this environment's Snakemake (``DIR/run-{commit}``, resumed if it is already there), then every file of the
two ``results/`` trees is compared:

- identical: the same bytes;
- the same content: equal once how the run went is set aside (``epochs.tsv``'s ``seconds`` and
  ``seconds_validating`` columns, the same keys of a checkpoint's log read with torch, a ``params.json``'s
  epoch a training resumed from);
- timing: files that record when and how long (``benchmarks*.tsv``, ``provenance/run.tsv``, a checkpoint's
  ``inputs.json`` of modification times), listed, not compared;
- different: anything else, and a file that only one run wrote. The script exits 1 if there is one.

    .venv/bin/python bench/same_results.py 8951fb7 HEAD --config tests/configs/tiny.yaml --dir /tmp/same
    .venv/bin/python bench/same_results.py 8951fb7 HEAD --config config/config.yaml --dir /tmp/same-default
    .venv/bin/python bench/same_results.py --results /tmp/run-a/results /tmp/run-b/results   # runs already made
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TIMING = ("benchmarks.tsv", "benchmarks_by_rule.tsv", "benchmarks_by_family.tsv", "provenance/run.tsv")
HISTORY = ("seconds", "seconds_validating", "resumed_from_epoch")
"""Keys that record how a run went, not what it computed: the seconds an epoch took, the epoch a training
resumed from after a kill."""


def checkout(commit: str, directory: Path) -> tuple[str, Path]:
    """The full hash of ``commit`` and a worktree of it under ``directory``."""
    full = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", commit], capture_output=True, text=True, check=True
    ).stdout.strip()
    tree = directory / f"tree-{full[:12]}"
    if not tree.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), full], check=True)
    return full, tree


def run(tree: Path, workdir: Path, config: Path, targets: list[str], cores: int) -> None:
    """Snakemake of ``tree`` on ``config`` in ``workdir``; the code it imports is the tree's own."""
    workdir.mkdir(parents=True, exist_ok=True)
    snakemake = Path(sys.executable).with_name("snakemake")
    cmd = [str(snakemake), "-s", str(tree / "Snakefile"), "--configfile", str(config), "--cores", str(cores)]
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    with open(workdir / "snakemake.log", "a") as log:
        done = subprocess.run([*cmd, *targets], cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"{workdir}: snakemake exited {done.returncode}; see {workdir / 'snakemake.log'}")


def same_content(a: object, b: object) -> bool:
    """Equal values, tensors equal in dtype and every element, the :data:`HISTORY` keys set aside."""
    import torch

    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(k in HISTORY or same_content(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same_content(x, y) for x, y in zip(a, b))
    if torch.is_tensor(a):
        return torch.is_tensor(b) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    return a == b


def verdict(relative: str, a: Path, b: Path) -> str:
    """How file ``relative`` of run ``a`` compares with run ``b``'s: identical, same content, timing or different."""
    if a.read_bytes() == b.read_bytes():
        return "identical"
    if relative in TIMING or relative.endswith("checkpoint/inputs.json"):
        return "timing"
    if relative.endswith("epochs.tsv"):
        import pandas as pd

        x, y = (pd.read_csv(p, sep="\t") for p in (a, b))
        kept = [c for c in x.columns if c not in HISTORY]
        return "same content" if list(x.columns) == list(y.columns) and x[kept].equals(y[kept]) else "different"
    if relative.endswith("params.json"):
        import json

        x, y = (json.loads(p.read_text(encoding="utf-8")) for p in (a, b))
        return "same content" if same_content(x, y) else "different"
    if relative.endswith(".pt"):
        import torch

        x, y = (torch.load(p, map_location="cpu", weights_only=True) for p in (a, b))
        return "same content" if same_content(x, y) else "different"
    return "different"


def compare(a: Path, b: Path) -> dict[str, list[str]]:
    """Every file of results trees ``a`` and ``b`` by its :func:`verdict`; ``only in one`` for the rest."""
    files = {p.relative_to(root).as_posix(): root for root in (a, b) for p in root.rglob("*") if p.is_file()}
    found: dict[str, list[str]] = {
        "identical": [],
        "same content": [],
        "timing": [],
        "different": [],
        "only in one": [],
    }
    for relative in sorted(files):
        if (a / relative).is_file() and (b / relative).is_file():
            found[verdict(relative, a / relative, b / relative)].append(relative)
        else:
            found["only in one"].append(relative)
    return found


def report(found: dict[str, list[str]], title: str) -> int:
    """Print the counts of :func:`compare` (and every file that differs); 1 if any does, else 0."""
    print(title)
    for kind, files in found.items():
        print(f"  {kind}: {len(files)}")
        if kind in ("different", "only in one"):
            for f in files:
                print(f"    {f}")
    return 1 if found["different"] or found["only in one"] else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="a commit (hash, tag, branch); with --results, a results/ folder")
    parser.add_argument("after", help="the other commit, or the other results/ folder")
    parser.add_argument("--results", action="store_true", help="compare two results/ folders already written")
    parser.add_argument("--config", type=Path, help="the config both commits run")
    parser.add_argument("--dir", type=Path, help="where the worktrees and runs go")
    parser.add_argument("--targets", nargs="*", default=[], help="Snakemake targets (default: the whole DAG)")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    if args.results:
        raise SystemExit(report(compare(Path(args.before), Path(args.after)), f"{args.before} against {args.after}"))
    if args.config is None or args.dir is None:
        parser.error("--config and --dir are needed to run two commits")
    config = args.config.resolve()
    results = []
    for commit in (args.before, args.after):
        full, tree = checkout(commit, args.dir.resolve())
        workdir = args.dir.resolve() / f"run-{full[:12]}"
        run(tree, workdir, config, args.targets, args.cores)
        results.append(workdir / "results")
    raise SystemExit(report(compare(*results), f"{config.name}: {args.before} against {args.after}"))


if __name__ == "__main__":
    main()
