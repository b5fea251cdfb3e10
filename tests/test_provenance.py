"""Provenance records (polyvse.report.provenance): two runs told apart at the first stage that differs."""

from pathlib import Path

import pandas as pd
import pytest

from polyvse.errors import InputError
from polyvse.report.provenance import first_difference, main, provenance, read_provenance, stage_of

ENV = {"torch": "2.13.0+cpu", "espeak-ng": "eSpeak NG text-to-speech: 1.51"}


def fake_run(root: Path) -> Path:
    """A results tree with one file per stage, the way the workflow lays them out."""
    files = {
        "m30k/captions.parquet": "captions",
        "m30k/captions_augmented.parquet": "mt",
        "m30k/vocab/human/en.tsv": "vocab",
        "m30k/fasttext/human/en.npy": "vectors",
        "m30k/models/embn_en/model.pt": "weights",
        "m30k/models/embn_en/checkpoint/last.pt": "resume state",
        "m30k/eval/embn_en.direct.tsv": "recalls",
        "table2.tsv": "table",
        "provenance/run.tsv": "old record",
        "benchmarks.tsv": "timings",
        "benchmarks_by_rule.tsv": "timings",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_files_map_to_their_stages_and_resume_state_is_left_out(tmp_path):
    record = provenance(fake_run(tmp_path / "results"), ENV)
    stages = dict(zip(record["item"], record["stage"]))
    assert stages["m30k/captions.parquet"] == "dataset" and stages["m30k/captions_augmented.parquet"] == "translate"
    assert stages["m30k/fasttext/human/en.npy"] == "fasttext" and stages["table2.tsv"] == "tables"
    assert stages["torch"] == "environment"
    assert not any("checkpoint" in i or i.startswith(("provenance", "benchmarks")) for i in record["item"])
    assert stage_of(Path("spoken/logmel/en.npz")) == "logmel"


def test_an_altered_input_is_named_at_its_stage_not_downstream(tmp_path):
    a = provenance(fake_run(tmp_path / "a"), ENV)
    run_b = fake_run(tmp_path / "b")
    assert first_difference(a, provenance(run_b, ENV)) is None
    # a different FastText model changes everything after it; the record names the FastText stage
    for rel, text in {
        "m30k/fasttext/human/en.npy": "other vectors",
        "m30k/models/embn_en/model.pt": "w2",
        "m30k/eval/embn_en.direct.tsv": "r2",
        "table2.tsv": "t2",
    }.items():
        (run_b / rel).write_text(text)
    b = provenance(run_b, ENV)
    assert first_difference(a, b) == ("fasttext", ["m30k/fasttext/human/en.npy"])
    # a different espeak-ng comes first of all
    assert first_difference(a, provenance(run_b, {**ENV, "espeak-ng": "1.52"}))[0] == "environment"


def test_the_command_line_names_the_stage(tmp_path, capsys):
    a = provenance(fake_run(tmp_path / "a"), ENV)
    run_b = fake_run(tmp_path / "b")
    (run_b / "m30k/vocab/human/en.tsv").write_text("other vocabulary")
    a.to_csv(tmp_path / "a.tsv", sep="\t", index=False)
    provenance(run_b, ENV).to_csv(tmp_path / "b.tsv", sep="\t", index=False)
    assert main(["diff", str(tmp_path / "a.tsv"), str(tmp_path / "b.tsv")]) == 1
    assert capsys.readouterr().out == "first differing stage: vocab (m30k/vocab/human/en.tsv)\n"
    assert main(["diff", str(tmp_path / "a.tsv"), str(tmp_path / "a.tsv")]) == 0
    pd.DataFrame({"x": [1]}).to_csv(tmp_path / "bad.tsv", sep="\t", index=False)
    with pytest.raises(InputError, match="bad.tsv: provenance record: columns"):
        read_provenance(tmp_path / "bad.tsv")
