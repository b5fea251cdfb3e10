"""A run against the snapshot on another CPU (polyvse.report.comparison, `readme check`): numbers within the
tolerance are the same result, a number beyond it, a changed word or a changed verdict is not."""

from pathlib import Path

import pandas as pd
import pytest

from polyvse.errors import InputError
from polyvse.report.comparison import (
    BEYOND,
    EQUAL,
    SHAPE,
    TOLERANCE,
    WITHIN,
    WORDS,
    compare_file,
    compare_runs,
    findings_verdicts,
    row_labels,
    same_file,
)
from polyvse.report.readme import compare_with_snapshot, main

TABLE2 = {"model": ["EmbN", "MULE"], "En": [37.1, 8.4], "A": ["", "3.5"], "params_train": [5920444, 4706444]}
FINDINGS = {
    "claim": ["smalr_clc", "smalr_clc", "liwe_languages", "liwe_languages"],
    "row": ["SMALR", "SMALR-CLC-A", "(10) S-LIWE", "(1) S-LIWE"],
    "mean": [3.67, 3.73, 2.63, 5.32],
    "values": ["3.30 3.60 4.10", "3.80 3.60 3.80", "3.10 2.35 2.45", "5.75 4.95 5.25"],
    "verdict": ["within noise", "within noise", "agrees", "agrees"],
    "best_epochs": ["7/8 6/8 8/8", "7/8 6/8 8/8", "1/8 6/8 5/8", "8/8 6/8 8/8"],
}
DATA_STATS = {"dataset": ["m30k"], "lang": ["en"], "types": [3147], "rank_freq_slope": [-1.1682685510887414]}


def write_run(folder: Path, table2: dict = TABLE2, findings: dict = FINDINGS, data_stats: dict = DATA_STATS) -> Path:
    """A run's top-level tables: table2 (TSV and its Markdown), the findings and the data statistics."""
    folder.mkdir(exist_ok=True)
    pd.DataFrame(table2).to_csv(folder / "table2.tsv", sep="\t", index=False)
    rows = [f"| {m} | {e} |" for m, e in zip(table2["model"], table2["En"])]
    (folder / "table2.md").write_text("| model | En |\n|:--|--:|\n" + "\n".join(rows) + "\n")
    pd.DataFrame(findings).to_csv(folder / "findings.tsv", sep="\t", index=False)
    pd.DataFrame(data_stats).to_csv(folder / "data_stats.tsv", sep="\t", index=False)
    return folder


def check(tmp_path: Path, capsys, **changed) -> tuple[int, str, str]:
    snapshot = write_run(tmp_path / "snapshot")
    results = write_run(tmp_path / "results", **changed)
    code = main(["check", "--results", str(results), "--snapshot", str(snapshot)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_run_equal_to_the_snapshot_says_equal(tmp_path, capsys):
    code, out, _ = check(tmp_path, capsys)
    assert code == 0
    assert "equal: data_stats.tsv, findings.tsv, table2.md, table2.tsv" in out
    assert "verdicts: all 2 the same" in out
    assert out.splitlines()[-1].endswith("results equals " + str(tmp_path / "snapshot"))


def test_a_table_moved_within_the_tolerance_is_the_same_result_and_says_by_how_much(tmp_path, capsys):
    """Another CPU: EmbN's En 1.3 points up, a seed's value and its best epoch moved; the verdicts the same."""
    findings = {
        **FINDINGS,
        "values": ["3.30 3.90 4.10", *FINDINGS["values"][1:]],
        "best_epochs": ["7/8 5/8 8/8", *FINDINGS["best_epochs"][1:]],
    }
    code, out, err = check(tmp_path, capsys, table2={**TABLE2, "En": [38.4, 8.4]}, findings=findings)
    assert code == 0, err
    assert "table2.tsv: within tolerance, largest |Δ| 1.3 (column En, row EmbN: 37.1 → 38.4)" in out
    assert "table2.md: within tolerance, largest |Δ| 1.3 (line 3: | EmbN | 37.1 | → | EmbN | 38.4 |)" in out
    assert (
        "findings.tsv: within tolerance, largest |Δ| 0.3 (column values, row smalr_clc / SMALR: 3.30 3.60 4.10 → "
        "3.30 3.90 4.10), not judged: largest |Δ| 1 (column best_epochs, row smalr_clc / SMALR: 7/8 6/8 8/8 → "
        "7/8 5/8 8/8)" in out
    )
    assert "equal: data_stats.tsv" in out and "verdicts: all 2 the same" in out
    assert out.splitlines()[-1].endswith(f"within {TOLERANCE:g}")


def test_a_table_moved_beyond_the_tolerance_fails_naming_the_table_the_cell_and_the_size(tmp_path, capsys):
    code, out, err = check(tmp_path, capsys, table2={**TABLE2, "En": [37.1, 15.0]})
    assert code == 1
    assert "table2.tsv: beyond tolerance, largest |Δ| 6.6 (column En, row MULE: 8.4 → 15.0)" in out
    assert "differ: table2.tsv (beyond tolerance)" in err
    found = compare_with_snapshot(tmp_path / "results", tmp_path / "snapshot")
    assert not found.same_result
    assert found.failures() == ["table2.tsv: beyond tolerance, largest |Δ| 6.6 (column En, row MULE: 8.4 → 15.0)"]
    # the Markdown table moved as much, but is judged by its TSV: only the TSV is a failure
    assert [f.status for f in found.files if f.name == "table2.md"] == [BEYOND]


def test_a_flipped_verdict_fails_naming_the_claim(tmp_path, capsys):
    findings = {**FINDINGS, "verdict": ["within noise", "within noise", "within noise", "within noise"]}
    code, out, err = check(tmp_path, capsys, findings=findings)
    assert code == 1
    assert "verdicts: 1 of 2 changed (snapshot → run):\n    liwe_languages (agrees → within noise)" in out
    assert "the verdict of liwe_languages" in err
    found = compare_with_snapshot(tmp_path / "results", tmp_path / "snapshot")
    assert found.failures()[-1] == "verdicts changed: liwe_languages (agrees → within noise)"


def test_a_claim_missing_from_the_run_is_a_changed_verdict(tmp_path, capsys):
    findings = {k: v[:2] for k, v in FINDINGS.items()}
    code, out, _ = check(tmp_path, capsys, findings=findings)
    assert code == 1
    assert "liwe_languages (agrees → no such claim)" in out
    assert "findings.tsv: shape differs, 4 rows in the snapshot, 2 in the run" in out


def test_a_changed_word_is_not_within_any_tolerance(tmp_path):
    snapshot = write_run(tmp_path / "snapshot")
    results = write_run(tmp_path / "results", table2={**TABLE2, "model": ["EmbN", "LIWE"]})
    found = compare_file("table2.tsv", snapshot / "table2.tsv", results / "table2.tsv", tolerance=100.0)
    assert found.status == WORDS and not found.same_result
    assert found.words_at == "column model, row MULE: 'MULE' → 'LIWE'"


def test_the_data_statistics_are_held_to_equality_and_a_last_digit_is_equal(tmp_path):
    snapshot = write_run(tmp_path / "snapshot")
    last_digit = {**DATA_STATS, "rank_freq_slope": [-1.1682685510887416]}
    results = write_run(tmp_path / "results", data_stats=last_digit)
    assert compare_file("data_stats.tsv", snapshot / "data_stats.tsv", results / "data_stats.tsv").status == EQUAL
    results = write_run(tmp_path / "results", data_stats={**DATA_STATS, "types": [3148]})
    found = compare_file("data_stats.tsv", snapshot / "data_stats.tsv", results / "data_stats.tsv")
    assert (found.status, found.largest) == (BEYOND, 1.0)


def test_a_rendering_whose_prose_moved_is_judged_by_its_tsv(tmp_path):
    """findings.md gains a line when a row's trainings all kept their last epoch: its TSV decides."""
    snapshot, results = tmp_path / "snapshot", tmp_path / "results"
    for folder, extra in ((snapshot, ""), (results, "Still improving at the end of the budget: SMALR.\n")):
        write_run(folder)
        (folder / "findings.md").write_text(f"## A claim\n\n{extra}| SMALR | 3.67 |\n")
    found = compare_runs({p.name: p for p in snapshot.iterdir()}, {p.name: p for p in results.iterdir()})
    md = next(f for f in found.files if f.name == "findings.md")
    assert md.status == SHAPE and md.rendering_of == "findings.tsv" and md.same_result
    assert found.same_result


def test_the_learning_overview_is_shown_and_judged_by_what_it_reads(tmp_path):
    """A model one epoch short of its patience on another CPU flips its stop reason: not another result."""
    snapshot, results = tmp_path / "snapshot", tmp_path / "results"
    for folder, reason in ((snapshot, "patience"), (results, "ceiling")):
        write_run(folder)
        (folder / "learning.tsv").write_text(
            "family\tdataset\tvariant\trun\tscore\tlearned\tstop_reason\n"
            f"smalr\tm30k\tsmalr_10\t\t40.1\tyes\t{reason}\n"
        )
    found = compare_runs({p.name: p for p in snapshot.iterdir()}, {p.name: p for p in results.iterdir()})
    learning = next(f for f in found.files if f.name == "learning.tsv")
    assert learning.status == WORDS and learning.same_result and found.same_result
    assert "judged by the tables and findings it reads" in learning.describe()


def test_rows_are_named_by_the_fewest_text_columns_that_tell_them_apart():
    table = pd.DataFrame(
        {
            "claim": ["a", "a", "b"],
            "source": ["S", "S", "T"],
            "row": ["HEM", "SMALR", "HEM"],
            "mean": ["1.0", "2.0", "3.0"],
        }
    )
    assert row_labels(table) == ["a / HEM", "a / SMALR", "b / HEM"]
    curve = pd.DataFrame({"protocol": ["FS", "FS", "T1"], "n_examples": ["50", "100", "50"], "mR": ["4.0"] * 3})
    assert row_labels(curve) == ["FS / 50", "FS / 100", "T1 / 50"]
    twins = pd.DataFrame({"model": ["X", "X"], "En": ["1.0", "2.0"]})
    assert row_labels(twins) == ["X (row 1)", "X (row 2)"]


def test_a_findings_table_without_verdicts_is_named(tmp_path):
    (tmp_path / "findings.tsv").write_text("claim\tmean\na\t1.0\n")
    with pytest.raises(InputError, match="findings.tsv: findings table without column"):
        findings_verdicts(tmp_path / "findings.tsv")


def test_equal_and_within_tolerance_are_told_apart(tmp_path):
    snapshot = write_run(tmp_path / "snapshot")
    results = write_run(tmp_path / "results", table2={**TABLE2, "En": [37.1, 8.4 + TOLERANCE]})
    assert compare_file("table2.tsv", snapshot / "table2.tsv", results / "table2.tsv").status == WITHIN
    assert compare_file("table2.tsv", snapshot / "table2.tsv", snapshot / "table2.tsv").status == EQUAL


def test_epochs_and_median_ranks_are_shown_and_not_judged(tmp_path):
    """The emulated other CPU: a best epoch 4 → 11 and a chance-level median rank 74.5 → 90.5 beside recalls
    that moved by less than 5 are the same result; a recall beyond 5 beside them is not."""
    curve = {"protocol": ["T2", "FS"], "n_examples": [1000, 50], "r10_t2i": [20.5, 6.0], "medr_i2t": [12.0, 74.5]}
    curve["best_epoch"] = [4, 2]
    snapshot, results = tmp_path / "snapshot", tmp_path / "results"
    for folder in (snapshot, results):
        folder.mkdir()
    pd.DataFrame(curve).to_csv(snapshot / "curve.tsv", sep="\t", index=False)
    moved = {**curve, "r10_t2i": [22.0, 6.0], "medr_i2t": [12.0, 90.5], "best_epoch": [11, 2]}
    pd.DataFrame(moved).to_csv(results / "curve.tsv", sep="\t", index=False)
    found = compare_file("curve.tsv", snapshot / "curve.tsv", results / "curve.tsv")
    assert found.status == WITHIN and found.same_result
    assert (found.largest, found.unjudged_largest) == (1.5, 16.0)
    assert found.describe() == (
        "curve.tsv: within tolerance, largest |Δ| 1.5 (column r10_t2i, row T2: 20.5 → 22.0), "
        "not judged: largest |Δ| 16 (column medr_i2t, row FS: 74.5 → 90.5)"
    )
    pd.DataFrame({**moved, "r10_t2i": [26.0, 6.0]}).to_csv(results / "curve.tsv", sep="\t", index=False)
    found = compare_file("curve.tsv", snapshot / "curve.tsv", results / "curve.tsv")
    assert found.status == BEYOND and found.largest == 5.5
    assert same_file(snapshot / "curve.tsv", snapshot / "curve.tsv")
    assert not same_file(snapshot / "curve.tsv", results / "curve.tsv")  # equality still reads every column


def test_a_median_rank_row_is_shown_and_not_judged(tmp_path):
    """MLMME Table 1 holds its median ranks as rows (``mrank``): the row's cells are not judged, the recalls are."""
    table = {"section": ["Sentence to image"] * 2, "metric": ["r@10", "mrank"], "en VSE": [50.4, 9.0]}
    snapshot, results = tmp_path / "snapshot.tsv", tmp_path / "results.tsv"
    pd.DataFrame(table).to_csv(snapshot, sep="\t", index=False)
    pd.DataFrame({**table, "en VSE": [52.0, 17.0]}).to_csv(results, sep="\t", index=False)
    found = compare_file("mlmme_table1.tsv", snapshot, results)
    assert found.status == WITHIN and found.largest == pytest.approx(1.6) and found.unjudged_largest == 8.0
    assert "not judged: largest |Δ| 8 (column en VSE, row Sentence to image / mrank: 9.0 → 17.0)" in found.describe()


def write_provenance(path: Path, cpu: str = "AMD EPYC", features: str = "addf1d:6656128") -> None:
    rows = [
        ("environment", "cpu", cpu),
        ("dataset", "m30k/captions.parquet", "a1:10"),
        ("image_features", "m30k/image_features/efficientnet_lite0.npy", features),
        ("models", "m30k/models/embn_en/model.pt", "b2:20"),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=["stage", "item", "value"]).to_csv(path, sep="\t", index=False)


LEARNING = (
    "family\tdataset\tvariant\trun\tscore\tlearned\nembn\tm30k\tembn_en\t\t37.1\tyes\nmule\tm30k\tthr\t\t4.4\tno\n"
)


def other_inputs_run(tmp_path: Path, **changed) -> tuple[Path, Path]:
    """A snapshot and a run whose image features differ in their last digits (another CPU)."""
    snapshot = write_run(tmp_path / "snapshot")
    results = write_run(tmp_path / "results", **changed)
    write_provenance(snapshot / "provenance.tsv")
    write_provenance(results / "provenance" / "run.tsv", cpu="Intel Xeon", features="9f0e11:6656128")
    for folder in (snapshot, results):
        (folder / "learning.tsv").write_text(LEARNING)
    return snapshot, results


def test_on_other_inputs_numbers_and_verdicts_are_shown_and_the_structure_held(tmp_path, capsys):
    """Another CPU: MULE moved by 6.6 and a verdict flipped, which the snapshot's inputs would fail on."""
    findings = {**FINDINGS, "verdict": ["within noise"] * 4}
    snapshot, results = other_inputs_run(tmp_path, table2={**TABLE2, "En": [37.1, 15.0]}, findings=findings)
    code = main(["check", "--results", str(results), "--snapshot", str(snapshot)])
    out = capsys.readouterr().out
    assert code == 0
    assert "inputs differ (environment differs: cpu (AMD EPYC vs Intel Xeon); first data stage that differs: " in out
    assert "image_features (m30k/image_features/efficientnet_lite0.npy))" in out
    assert "table2.tsv: beyond tolerance, largest |Δ| 6.6" in out and "liwe_languages (agrees → within noise)" in out
    assert "learned: all 2 models the same" in out
    assert out.splitlines()[-1].endswith("from other inputs")
    found = compare_with_snapshot(results, snapshot)
    assert found.passes and found.same_structure and not found.same_result


def test_on_other_inputs_a_model_that_stopped_learning_fails(tmp_path, capsys):
    snapshot, results = other_inputs_run(tmp_path)
    (results / "learning.tsv").write_text(LEARNING.replace("37.1\tyes", "3.1\tno"))
    code = main(["check", "--results", str(results), "--snapshot", str(snapshot)])
    captured = capsys.readouterr()
    assert code == 1
    assert "learned: 1 of 2 models changed (snapshot → run):\n    embn m30k embn_en (yes → no)" in captured.out
    assert "differ: whether embn m30k embn_en learned" in captured.err


def test_on_other_inputs_other_data_statistics_or_rows_fail(tmp_path):
    snapshot, results = other_inputs_run(tmp_path, data_stats={**DATA_STATS, "types": [3148]})
    found = compare_with_snapshot(results, snapshot)
    assert not found.passes
    assert found.failures() == ["data_stats.tsv: beyond tolerance, largest |Δ| 1 (column types, row m30k: 3147 → 3148)"]
    snapshot, results = other_inputs_run(tmp_path, table2={k: v[:1] for k, v in TABLE2.items()})
    found = compare_with_snapshot(results, snapshot)
    assert not found.passes
    assert found.failures() == ["table2.tsv: shape differs, 2 rows in the snapshot, 1 in the run"]


def test_on_the_snapshot_s_inputs_a_model_that_stopped_learning_fails_too(tmp_path):
    snapshot = write_run(tmp_path / "snapshot")
    results = write_run(tmp_path / "results")
    for folder, learning in ((snapshot, LEARNING), (results, LEARNING.replace("4.4\tno", "14.4\tyes"))):
        write_provenance(folder / "provenance.tsv")
        (folder / "learning.tsv").write_text(learning)
    (results / "provenance").mkdir()
    (results / "provenance.tsv").rename(results / "provenance" / "run.tsv")
    found = compare_with_snapshot(results, snapshot)
    assert found.inputs is None and not found.passes
    assert found.failures() == ["learned changed: mule m30k thr (no → yes)"]
