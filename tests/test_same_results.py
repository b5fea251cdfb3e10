"""bench/same_results.py: two runs' results compared file by file, timings set aside and nothing else."""

import importlib.util
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("same_results", REPO / "bench" / "same_results.py")
same_results = importlib.util.module_from_spec(spec)
spec.loader.exec_module(same_results)


def write_run(root: Path, *, seconds: float, mr: float, weight: float, extra: bool = False) -> Path:
    results = root / "results"
    (results / "m30k" / "models" / "embn_en" / "checkpoint").mkdir(parents=True)
    (results / "table2.tsv").write_text(f"model\tEn\nEmbN\t{mr}\n")
    model = results / "m30k" / "models" / "embn_en"
    (model / "epochs.tsv").write_text(
        f"epoch\tval_mR\tseconds\tseconds_validating\n1\t{mr}\t{seconds}\t{seconds / 4}\n"
    )
    torch.save(
        {
            "state_dict": {"w": torch.tensor([weight])},
            "log": [{"epoch": 1, "seconds": seconds, "seconds_validating": seconds / 4}],
        },
        model / "model.pt",
    )
    (model / "checkpoint" / "inputs.json").write_text(f'{{"captions": {seconds}}}')
    resumed = int(seconds)  # a run killed and resumed records the epoch it resumed from
    (model / "params.json").write_text(f'{{"best_epoch": 3, "val_mR": {mr}, "resumed_from_epoch": {resumed}}}')
    (results / "benchmarks.tsv").write_text(f"rule\tseconds\ntrain\t{seconds}\n")
    if extra:
        (results / "figure3.tsv").write_text("x\n")
    return results


def test_runs_that_differ_only_in_their_timings_are_the_same(tmp_path):
    a = write_run(tmp_path / "a", seconds=1.5, mr=40.0, weight=0.25)
    b = write_run(tmp_path / "b", seconds=2.5, mr=40.0, weight=0.25)
    found = same_results.compare(a, b)
    assert found["identical"] == ["table2.tsv"]
    assert found["same content"] == [
        "m30k/models/embn_en/epochs.tsv",
        "m30k/models/embn_en/model.pt",
        "m30k/models/embn_en/params.json",
    ]
    assert found["timing"] == ["benchmarks.tsv", "m30k/models/embn_en/checkpoint/inputs.json"]
    assert not found["different"] and not found["only in one"]


def test_a_number_a_weight_or_a_missing_file_is_a_difference(tmp_path):
    a = write_run(tmp_path / "a", seconds=1.5, mr=40.0, weight=0.25, extra=True)
    b = write_run(tmp_path / "b", seconds=1.5, mr=40.1, weight=0.26)
    found = same_results.compare(a, b)
    assert found["different"] == [
        "m30k/models/embn_en/epochs.tsv",
        "m30k/models/embn_en/model.pt",
        "m30k/models/embn_en/params.json",
        "table2.tsv",
    ]
    assert found["only in one"] == ["figure3.tsv"]
