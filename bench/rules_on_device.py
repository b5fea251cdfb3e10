"""After bench/cuda_rules.sh: one line a training job that Snakemake ran here, for the GPU table of docs/benchmarks.md.

    python bench/rules_on_device.py --cpu docs/default_run/benchmarks.tsv train train_seeds ...

Each line, ``rule<TAB>job=<rule> <dataset>/<name><TAB>seconds=…<TAB>cpu_seconds=…<TAB>device=…<TAB>mR=…``:
the job's wall time from its Snakemake benchmark file, the same job's in the kept default run on 2 CPU
cores, the device its log says it trained on, and the test split's mean recall of its (first) model,
averaged over the evaluation's rows (mR for the text models, (r1 + r5 + r10) / 3 for MLMME)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

DEVICE = re.compile(r"device (\w+)")


def evaluation(rule: str, dataset: str, name: str) -> Path:
    """The test evaluation that the job wrote for its first (or only) model."""
    if rule.startswith("mlmme"):
        variant, _, run = name.partition("_")
        return Path(f"results/{dataset}/mlmme/{variant}/{run}/eval.tsv")
    return Path(f"results/{dataset}/eval/{name}.direct.tsv")


def mean_recall(path: Path) -> float:
    table = pd.read_csv(path, sep="\t")
    if "mR" in table:
        return float(table["mR"].mean())
    return float(table[["r1", "r5", "r10"]].mean(axis=1).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rules", nargs="+", help="training rules whose benchmarks/<rule>/ to read")
    parser.add_argument("--cpu", type=Path, required=True, help="the default run's benchmarks.tsv")
    args = parser.parse_args()
    cpu = pd.read_csv(args.cpu, sep="\t").set_index(["rule", "job"])["seconds"]
    for rule in args.rules:
        for bench in sorted(Path("benchmarks", rule).glob("*/*.tsv")):
            dataset, name = bench.parent.name, bench.stem
            job = f"{dataset}/{name}"
            seconds = float(pd.read_csv(bench, sep="\t")["s"].iloc[-1])
            log = Path("logs", dataset, f"{rule}_{name}.log").read_text(encoding="utf-8")
            devices = sorted(set(DEVICE.findall(log)))
            score = evaluation(rule, dataset, name)
            fields = {
                "job": f"{rule} {job}",
                "seconds": f"{seconds:.1f}",
                "cpu_seconds": f"{cpu[(rule, job)]:.1f}" if (rule, job) in cpu.index else "",
                "device": "+".join(devices) or "?",
                "mR": f"{mean_recall(score):.2f}" if score.is_file() else "",
            }
            print("rule\t" + "\t".join(f"{k}={v}" for k, v in fields.items()), flush=True)


if __name__ == "__main__":
    main()
