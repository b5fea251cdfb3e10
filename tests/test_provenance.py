"""Provenance records (polyvse.report.provenance): two runs told apart at the first stage that differs."""

from pathlib import Path

import pandas as pd
import pytest

from polyvse.errors import InputError
from polyvse.report.provenance import (
    environment_differences,
    first_difference,
    main,
    other_training_inputs,
    provenance,
    read_provenance,
    stage_of,
)

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
    assert stage_of(Path("spoken/wav/en/syn-000000.wav")) == "utterances"  # the utterances rule speaks them
    assert stage_of(Path("gallery/table2.png")) == "gallery"
    assert stage_of(Path("learning/table2.png")) == "tables"  # beside results/learning.md, not a dataset's


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
    # a different espeak-ng is said beside the data stage, and does not hide it
    other = provenance(run_b, {**ENV, "espeak-ng": "1.52"})
    assert first_difference(a, other) == ("fasttext", ["m30k/fasttext/human/en.npy"])
    assert environment_differences(a, other) == [("espeak-ng", ENV["espeak-ng"], "1.52")]
    assert environment_differences(a, b) == []


def test_the_command_line_names_the_stage(tmp_path, capsys):
    a = provenance(fake_run(tmp_path / "a"), ENV)
    run_b = fake_run(tmp_path / "b")
    (run_b / "m30k/vocab/human/en.tsv").write_text("other vocabulary")
    a.to_csv(tmp_path / "a.tsv", sep="\t", index=False)
    provenance(run_b, ENV).to_csv(tmp_path / "b.tsv", sep="\t", index=False)
    assert main(["diff", str(tmp_path / "a.tsv"), str(tmp_path / "b.tsv")]) == 1
    assert (
        capsys.readouterr().out
        == "the same environment; first data stage that differs: vocab (m30k/vocab/human/en.tsv)\n"
    )
    assert main(["diff", str(tmp_path / "a.tsv"), str(tmp_path / "a.tsv")]) == 0
    pd.DataFrame({"x": [1]}).to_csv(tmp_path / "bad.tsv", sep="\t", index=False)
    with pytest.raises(InputError, match="bad.tsv: provenance record: columns"):
        read_provenance(tmp_path / "bad.tsv")


def write_record(path: Path, cpu: str, hashes: dict[tuple[str, str], str]) -> Path:
    rows = [("environment", "cpu", cpu), ("environment", "torch", "2.13.0+cpu")]
    rows += [(stage, item, value) for (stage, item), value in hashes.items()]
    pd.DataFrame(rows, columns=["stage", "item", "value"]).to_csv(path, sep="\t", index=False)
    return path


RUN = {
    ("dataset", "m30k/captions.parquet"): "c1:10",
    ("utterances", "spoken/wav/en/syn-000000.wav"): "w1:10",
    ("image_features", "m30k/image_features/efficientnet_lite0.npy"): "f1:10",
    ("models", "m30k/models/embn_en/model.pt"): "m1:10",
    ("tables", "table2.tsv"): "t1:10",
}


def test_another_cpu_is_named_with_the_first_data_stage_it_changed(tmp_path, capsys):
    """A run on an Intel CPU against the snapshot's AMD EPYC: the environment does not hide the image features."""
    a = write_record(tmp_path / "a.tsv", "AMD EPYC", RUN)
    moved = {
        **RUN,
        ("image_features", "m30k/image_features/efficientnet_lite0.npy"): "f2:10",
        ("models", "m30k/models/embn_en/model.pt"): "m2:10",
        ("tables", "table2.tsv"): "t2:10",
    }
    b = write_record(tmp_path / "b.tsv", "Intel(R) Xeon(R)", moved)
    assert main(["diff", str(a), str(b)]) == 1
    assert capsys.readouterr().out == (
        "environment differs: cpu (AMD EPYC vs Intel(R) Xeon(R)); "
        "first data stage that differs: image_features (m30k/image_features/efficientnet_lite0.npy)\n"
    )
    same_data = write_record(tmp_path / "c.tsv", "Intel(R) Xeon(R)", RUN)
    assert main(["diff", str(a), str(same_data)]) == 1
    assert (
        capsys.readouterr().out == "environment differs: cpu (AMD EPYC vs Intel(R) Xeon(R)); every data stage agrees\n"
    )


def test_the_stage_of_a_file_is_its_path_s_so_older_records_compare_alike(tmp_path):
    """A record that filed the spoken wav files under a stage of their own agrees with one that files them under
    the utterances; and a joint model's files come before the tables that report them."""
    older = read_provenance(
        write_record(
            tmp_path / "old.tsv", "AMD EPYC", {("wav" if s == "utterances" else s, i): v for (s, i), v in RUN.items()}
        )
    )
    newer = read_provenance(write_record(tmp_path / "new.tsv", "AMD EPYC", RUN))
    assert first_difference(older, newer) is None
    joint = {("joint", "spoken/joint/joint/model.pt"): "j1:10"}
    later = read_provenance(
        write_record(tmp_path / "later.tsv", "AMD EPYC", {**RUN, ("tables", "table2.tsv"): "t2:10", **joint})
    )
    assert first_difference(newer, later) == ("joint", ["spoken/joint/joint/model.pt"])


def test_the_trainings_inputs_differ_by_environment_or_by_a_stage_before_them(tmp_path):
    """A trained model or a table that differs is a result, not an input; the image features are an input."""
    a = read_provenance(write_record(tmp_path / "a.tsv", "AMD EPYC", RUN))
    results_only = {**RUN, ("models", "m30k/models/embn_en/model.pt"): "m2:10", ("tables", "table2.tsv"): "t2:10"}
    assert other_training_inputs(a, read_provenance(write_record(tmp_path / "b.tsv", "AMD EPYC", results_only))) is None
    features = {**results_only, ("image_features", "m30k/image_features/efficientnet_lite0.npy"): "f2:10"}
    b = read_provenance(write_record(tmp_path / "c.tsv", "AMD EPYC", features))
    assert other_training_inputs(a, b) == (
        "the same environment; first data stage that differs: image_features (m30k/image_features/efficientnet_lite0.npy)"
    )
    cpu = read_provenance(write_record(tmp_path / "d.tsv", "Intel(R) Xeon(R)", RUN))
    assert other_training_inputs(a, cpu) == (
        "environment differs: cpu (AMD EPYC vs Intel(R) Xeon(R)); every data stage agrees"
    )
