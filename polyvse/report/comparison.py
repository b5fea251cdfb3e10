"""A run's tables against a kept run's: the same numbers, or numbers within a tolerance, and the same verdicts.

Two runs of one commit on one machine write the same tables. On another CPU they need not: the image
features differ in their last digits (other SIMD kernels sum in another order), and every training after
them follows another path of roundings, much as another seed would. The tables then move by about a point
while the findings' verdicts, which weigh the gaps between rows against the seeds' spread, stay. So a
table is *equal* (the same bytes, or the same words and numbers to :data:`RTOL`), *within tolerance* (the
same words, every number within :data:`TOLERANCE` of the kept one) or not (a number beyond it, a word
changed, another shape), and each comparison names its largest difference and where it is; the claims'
verdicts of ``findings.tsv`` are compared on their own, exactly (:func:`verdict_changes`), and so is which
models learned (``learning.tsv``, :func:`learned_verdicts`). That holds where the run's trainings read the
snapshot's inputs; on another machine's inputs a run is held to what no path changes
(:attr:`RunComparison.passes`).

A Markdown table is written by the job that writes the TSV of its name, from the same numbers, with prose
that follows them (a row at its epochs ceiling, the neighbouring pairs' verdicts): it is compared and shown, and
judged by its TSV (:attr:`FileComparison.rendering_of`). Some columns and rows of a table are shown and not judged
(:data:`UNJUDGED`): the epoch a training stopped at, and a median rank, move more than the scores
they go with and say nothing the judged scores do not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from polyvse.errors import InputError

TOLERANCE = 5.0
"""The largest absolute difference of a number, in its table's units, for a table still to count as the same
result: 5 points on the 0–100 scale of recall and mR.

Why that size: on another CPU every training after the image features takes another path of roundings, so a
table moves as it would with another seed; a run on an Intel CPU against the snapshot's AMD EPYC moved the
numbers by about a point and kept every verdict. Five points is five times that move and about twice the
largest spread of the findings' rows over their seeds (a standard deviation of 2.6 points over 3 seeds in
``docs/default_run/findings.tsv``), and below what a broken stage does to the better rows (EmbN's 37.1 mR
falling to chance, 2.7). A smaller move that changes a conclusion is caught by the verdicts, which must be the
same. The tables' other numbers are held to the same 5 (parameter counts do not move with the CPU), except
epochs and median ranks, shown and not judged (:data:`UNJUDGED`); the data statistics are held to equality
(:data:`EXACT_TABLES`).

A training that stops on patience at another epoch than the snapshot's moves its row further: 10.7 points
under patience 4, 2.9 under 8, in the worst case measured (docs/learning.md, "Patience, and another CPU"). Its
epochs and median ranks are not held to 5 (:data:`UNJUDGED`)."""

RTOL = 1e-9
"""Numbers this close (relative) are *equal*: a least-squares slope may differ in its 16th digit between two
CPUs' BLAS kernels, which is not another result."""

EXACT_TABLES = frozenset({"data_stats.tsv"})
"""Tables of the data stages (counts and shares of the generated captions), which no CPU changes beyond
:data:`RTOL`: a difference there is other data, whatever its size."""

UNJUDGED = frozenset({"best_epoch", "best_epochs", "epochs_run", "Ep", "medr_t2i", "medr_i2t", "mrank"})
"""Epochs and median ranks: a column of one of these names, or a row with a cell of one (MLMME Table 1's
``mrank``), is shown with its own largest difference and not judged. On an emulated other CPU the best epochs
moved by up to 9 (the Translator curve's T2 at 1,000 examples: 4 to 11) where the scores of the same rows moved by
less than 5: a validation curve on its plateau peaks at any of several epochs with nearly the same score, so the
epoch is no result, the score at it is. A median rank (of 200 test images) falls, for a model near chance, in the
flat middle of the ranking, where a small change of the scores moves it by many ranks (FS at 50 examples: 74.5
to 90.5), while the same row's recalls, which are judged, hold what the top of the ranking says."""

DERIVED_FILES: dict[str, str] = {
    "learning.tsv": "the tables and findings it reads",
    "learning.md": "the tables and findings it reads",
}
"""Overviews of other results, shown and judged by what they read: the learning overview's labels
(learned, stop reason) follow scores and best epochs that move within the tolerance on another CPU, so
its words may change where the tables it summarises are the same result."""

EQUAL = "equal"
WITHIN = "within tolerance"
BEYOND = "beyond tolerance"
WORDS = "words differ"
SHAPE = "shape differs"
ONLY_FRESH = "only in the run"
ONLY_KEPT = "only in the snapshot"
SAME_RESULT = frozenset({EQUAL, WITHIN})

SHOWN = 40  # longer texts (a Markdown line) are shown by their numbers that differ, or cut
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
WHOLE_NUMBER = re.compile(rf"\s*{NUMBER.pattern}\s*")


@dataclass(frozen=True)
class FileComparison:
    """One file of both runs: its :attr:`status`, the largest difference of its numbers and where, the first
    word that differs; ``rendering_of`` names the TSV a Markdown table is judged by."""

    name: str
    status: str
    largest: float | None = None
    largest_at: str = ""
    words_at: str = ""
    shape: str = ""
    rendering_of: str | None = None
    unjudged_largest: float | None = None
    unjudged_at: str = ""

    @property
    def same_result(self) -> bool:
        return self.status in SAME_RESULT or self.rendering_of is not None

    def describe(self) -> str:
        """One line: the file, its status and what differs (kept value → the run's)."""
        parts = [f"{self.name}: {self.status}"]
        if self.shape:
            parts.append(self.shape)
        if self.largest is not None:
            parts.append(f"largest |Δ| {self.largest:.4g} ({self.largest_at})")
        if self.words_at:
            parts.append(f"first word that differs: {self.words_at}")
        if self.unjudged_largest is not None and math.isinf(self.unjudged_largest):
            parts.append(f"not judged: words differ ({self.unjudged_at})")
        elif self.unjudged_largest is not None:
            parts.append(f"not judged: largest |Δ| {self.unjudged_largest:.4g} ({self.unjudged_at})")
        if self.rendering_of is not None:
            parts.append(f"judged by {self.rendering_of}")
        return ", ".join(parts)


@dataclass(frozen=True)
class VerdictChange:
    """A claim whose verdict differs; None where the claim is missing from one findings table."""

    claim: str
    kept: str | None
    fresh: str | None
    absent: str = "no such claim"

    def describe(self) -> str:
        return f"{self.claim} ({self.kept or self.absent} → {self.fresh or self.absent})"


@dataclass(frozen=True)
class RunComparison:
    """Every table of two runs, their findings' verdicts (``claims``: the claims compared) and which models
    learned (``models``: the models compared, ``learned``: the ones whose verdict differs).

    ``inputs`` is None where the run's trainings read the snapshot's inputs (every data stage before them
    wrote the same bytes), else a line naming the first data stage that differs. On the same inputs the run
    is held to the tolerance (:attr:`same_result`); on other inputs (another CPU's image features, another
    espeak-ng's utterances) every training takes another path, and a model whose validation curve takes off
    late, at an epoch that comes by chance, moves its row by more than any tolerance that would still catch a
    broken stage (MLMME Table 1's β = 1: image-to-English R@5 42.0 on one path, 63.0 on the other). The run is
    then held to what no path changes (:attr:`same_structure`): the same tables, rows and columns, the data
    statistics to equality, and the same models learned; its numbers and verdicts are shown."""

    files: list[FileComparison]
    claims: int
    verdicts: list[VerdictChange]
    models: int = 0
    learned: list[VerdictChange] = field(default_factory=list)
    inputs: str | None = None

    @property
    def same_result(self) -> bool:
        """Every table equal or within the tolerance, every verdict and every model's learned the same."""
        return all(f.same_result for f in self.files) and not self.verdicts and not self.learned

    @property
    def same_structure(self) -> bool:
        """Every table in both runs with the same rows and columns, the data statistics (:data:`EXACT_TABLES`)
        equal, and every model's learned the same: what a run on other inputs is held to."""
        return not self.structure_failures() and not self.learned

    @property
    def passes(self) -> bool:
        """:attr:`same_result` on the snapshot's inputs, :attr:`same_structure` on others."""
        return self.same_result if self.inputs is None else self.same_structure

    def structure_failures(self) -> list[FileComparison]:
        """The files that keep the run from :attr:`same_structure`."""
        return [
            f
            for f in self.files
            if f.status in (ONLY_KEPT, ONLY_FRESH)
            or (f.status == SHAPE and f.rendering_of is None)
            or (f.name in EXACT_TABLES and f.status != EQUAL)
        ]

    def failing(self) -> tuple[list[FileComparison], list[VerdictChange]]:
        """The files and the verdicts that keep the run from passing (:attr:`passes`); the verdicts do not
        count on other inputs."""
        if self.inputs is None:
            return [f for f in self.files if not f.same_result], self.verdicts
        return self.structure_failures(), []

    def failures(self) -> list[str]:
        """What keeps the run from passing (:attr:`passes`), one line each."""
        files, verdicts = self.failing()
        lines = [f.describe() for f in files]
        if verdicts:
            lines.append("verdicts changed: " + "; ".join(v.describe() for v in verdicts))
        if self.learned:
            lines.append("learned changed: " + "; ".join(v.describe() for v in self.learned))
        return lines

    def report(self) -> list[str]:
        """The inputs, every file's comparison (the equal ones on one line), the verdicts and the learned."""
        if self.inputs is None:
            lines = ["inputs: the snapshot's (numbers held to the tolerance, verdicts the same)"]
        else:
            lines = [
                f"inputs differ ({self.inputs}): held to the same tables, rows and columns, the data statistics "
                "and the same models learned; numbers and verdicts shown"
            ]
        equal = [f.name for f in self.files if f.status == EQUAL]
        lines += [f"equal: {', '.join(equal)}"] if equal else []
        lines += [f.describe() for f in self.files if f.status != EQUAL]
        if self.verdicts:
            lines.append(f"verdicts: {len(self.verdicts)} of {self.claims} changed (snapshot → run):")
            lines += [f"  {v.describe()}" for v in self.verdicts]
        elif self.claims:
            lines.append(f"verdicts: all {self.claims} the same")
        else:
            lines.append("verdicts: no findings to compare")
        if self.learned:
            lines.append(f"learned: {len(self.learned)} of {self.models} models changed (snapshot → run):")
            lines += [f"  {v.describe()}" for v in self.learned]
        elif self.models:
            lines.append(f"learned: all {self.models} models the same")
        return lines


def _shorten(text: str) -> str:
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _split(text: str) -> tuple[str, list[float]]:
    """The words of ``text`` (its numbers replaced by ``#``, runs of white space by one space) and its numbers."""
    words = " ".join(NUMBER.sub("#", text).split())
    return words, [float(n) for n in NUMBER.findall(text)]


def _read_table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def row_labels(table: pd.DataFrame) -> list[str]:
    """A name for each row: the values of the fewest columns, left to right, that tell the rows apart (``model``;
    ``query / target``; ``claim / row``), text columns first, then whole numbers (``protocol / n_examples``);
    the row's number where they do not."""
    filled = [c for c in table.columns if (table[c] != "").any()]
    text = [c for c in filled if not all(v == "" or WHOLE_NUMBER.fullmatch(v) for v in table[c])]
    whole = [c for c in filled if c not in text and all(v == "" or v.strip().isdigit() for v in table[c])]
    keys: list[tuple[str, ...]] = [() for _ in range(len(table))]
    for column in [*text, *whole]:
        if len(set(keys)) == len(keys) and any(keys):
            break
        longer = [k + ((v,) if v else ()) for k, v in zip(keys, table[column])]
        if len(set(longer)) > len(set(keys)) or not any(keys):
            keys = longer
    labels = [" / ".join(k) for k in keys]
    if len(set(labels)) < len(labels):
        labels = [f"{label} (row {i + 1})" if label else f"row {i + 1}" for i, label in enumerate(labels)]
    return labels


def _units(kept: Path, fresh: Path) -> tuple[str, list[tuple[bool, str, str, str]]]:
    """(a difference of shape, or ""; every (judged, where, kept text, the run's text) that is not the same
    text): the cells of a TSV, named by column and row and judged unless :data:`UNJUDGED` names their column or
    a cell of their row, or the lines of any other file."""
    if kept.suffix == ".tsv":
        a, b = _read_table(kept), _read_table(fresh)
        if list(a.columns) != list(b.columns):
            only = [c for c in a.columns if c not in b.columns], [c for c in b.columns if c not in a.columns]
            return f"columns differ (only in the snapshot: {only[0]}, only in the run: {only[1]})", []
        if len(a) != len(b):
            return f"{len(a)} rows in the snapshot, {len(b)} in the run", []
        labels = row_labels(a)
        judged_rows = [not UNJUDGED.intersection(row) for row in a.itertuples(index=False)]
        return "", [
            (judged and c not in UNJUDGED, f"column {c}, row {label}", x, y)
            for c in a.columns
            for label, judged, x, y in zip(labels, judged_rows, a[c], b[c])
            if x != y
        ]
    a_lines = kept.read_text(encoding="utf-8").splitlines()
    b_lines = fresh.read_text(encoding="utf-8").splitlines()
    if len(a_lines) != len(b_lines):
        return f"{len(a_lines)} lines in the snapshot, {len(b_lines)} in the run", []
    return "", [(True, f"line {i + 1}", x, y) for i, (x, y) in enumerate(zip(a_lines, b_lines)) if x != y]


def same_file(a: Path, b: Path, rtol: float = RTOL) -> bool:
    """Equal bytes, or, for two TSV tables, the same shape, words and numbers equal to ``rtol`` (relative)."""
    if a.read_bytes() == b.read_bytes():
        return True
    if a.suffix != ".tsv" or b.suffix != ".tsv":
        return False
    shape, units = _units(a, b)
    if shape:
        return False
    for _, _, x, y in units:
        (xw, xn), (yw, yn) = _split(x), _split(y)
        if xw != yw or len(xn) != len(yn) or not np.allclose(xn, yn, rtol=rtol, atol=0.0):
            return False
    return True


def _beyond(gap: float, limit: float) -> bool:
    """``gap`` over ``limit`` by more than a rounding: 13.4 − 8.4 is 5.000000000000002, within 5."""
    return gap > limit and not math.isclose(gap, limit, rel_tol=RTOL)


def compare_file(
    name: str, kept: Path, fresh: Path, tolerance: float = TOLERANCE, rendering_of: str | None = None
) -> FileComparison:
    """``fresh`` (the run's file) against ``kept`` (the snapshot's): equal, within ``tolerance``, or not, with
    the largest difference of their numbers and the first word that differs; the columns of
    :data:`UNJUDGED` count for neither and show their own largest difference."""
    if same_file(kept, fresh):
        return FileComparison(name, EQUAL, rendering_of=rendering_of)
    shape, units = _units(kept, fresh)
    if shape:
        return FileComparison(name, SHAPE, shape=shape, rendering_of=rendering_of)
    largest: dict[bool, tuple[float, str] | None] = {True: None, False: None}  # by judged
    words_at = ""
    for judged, where, x, y in units:
        (xw, xn), (yw, yn) = _split(x), _split(y)
        if xw != yw or len(xn) != len(yn):
            if judged:
                words_at = words_at or f"{where}: {_shorten(x)!r} → {_shorten(y)!r}"
                continue
            gap, u, v = math.inf, math.nan, math.nan
        else:
            gap, u, v = max(((abs(u - v), u, v) for u, v in zip(xn, yn)), default=(0.0, 0.0, 0.0))
        top = largest[judged]
        if top is None or gap > top[0]:
            shown = f"{x} → {y}" if max(len(x), len(y)) <= SHOWN else f"{u:g} → {v:g}"
            largest[judged] = gap, f"{where}: {shown}"
    judged_top, unjudged_top = largest[True], largest[False]
    gap = None if judged_top is None else judged_top[0]
    if words_at:
        status = WORDS
    elif gap is not None and _beyond(gap, 0.0 if name in EXACT_TABLES else tolerance):
        status = BEYOND
    else:
        status = WITHIN
    return FileComparison(
        name,
        status,
        gap,
        "" if judged_top is None else judged_top[1],
        words_at,
        rendering_of=rendering_of,
        unjudged_largest=None if unjudged_top is None else unjudged_top[0],
        unjudged_at="" if unjudged_top is None else unjudged_top[1],
    )


def findings_verdicts(path: Path) -> dict[str, str]:
    """Each claim's verdict in a findings table (:mod:`polyvse.report.findings`: one verdict a claim)."""
    table = _read_table(path)
    missing = {"claim", "verdict"} - set(table.columns)
    if missing:
        raise InputError(path, f"findings table without column(s) {sorted(missing)}")
    first = table.drop_duplicates("claim")
    return dict(zip(first["claim"], first["verdict"]))


def verdict_changes(
    kept: Mapping[str, str], fresh: Mapping[str, str], absent: str = "no such claim"
) -> list[VerdictChange]:
    """The claims whose verdict differs, or that one of the two lacks, in the snapshot's order."""
    claims = [*kept, *(c for c in fresh if c not in kept)]
    return [VerdictChange(c, kept.get(c), fresh.get(c), absent) for c in claims if kept.get(c) != fresh.get(c)]


LEARNING_KEYS = ("family", "dataset", "variant", "run")  # a trained model's row in the learning overview


def learned_verdicts(path: Path) -> dict[str, str]:
    """Each trained model's ``learned`` (yes / no) in a learning overview (:mod:`polyvse.report.learning`),
    by its family, dataset, variant and run."""
    table = _read_table(path)
    missing = {*LEARNING_KEYS, "learned"} - set(table.columns)
    if missing:
        raise InputError(path, f"learning overview without column(s) {sorted(missing)}")
    names = [" ".join(v for v in values if v) for values in table[list(LEARNING_KEYS)].itertuples(index=False)]
    return dict(zip(names, table["learned"]))


def compare_runs(
    kept: Mapping[str, Path],
    fresh: Mapping[str, Path],
    tolerance: float = TOLERANCE,
    findings: str = "findings.tsv",
    learning: str = "learning.tsv",
    inputs: str | None = None,
) -> RunComparison:
    """The files of two runs by name (the snapshot's, the run's), the verdicts of their ``findings``, which
    models learned by their ``learning`` overview; ``inputs``: None where the run read the snapshot's inputs,
    else what differs (:class:`RunComparison`)."""
    files = []
    for name in sorted(set(kept) | set(fresh)):
        if name not in fresh:
            files.append(FileComparison(name, ONLY_KEPT))
        elif name not in kept:
            files.append(FileComparison(name, ONLY_FRESH))
        else:
            tsv = str(Path(name).with_suffix(".tsv"))
            rendering_of = DERIVED_FILES.get(name) or (tsv if Path(name).suffix == ".md" and tsv in kept else None)
            files.append(compare_file(name, kept[name], fresh[name], tolerance, rendering_of))
    verdicts: dict[str, dict[str, str]] = {
        side: findings_verdicts(paths[findings]) if findings in paths else {}
        for side, paths in (("kept", kept), ("fresh", fresh))
    }
    learned: dict[str, dict[str, str]] = {
        side: learned_verdicts(paths[learning]) if learning in paths else {}
        for side, paths in (("kept", kept), ("fresh", fresh))
    }
    return RunComparison(
        files,
        len(verdicts["kept"]),
        verdict_changes(verdicts["kept"], verdicts["fresh"]),
        len(learned["kept"]),
        verdict_changes(learned["kept"], learned["fresh"], "no such model"),
        inputs,
    )
