"""Orderings the papers report, checked on our tables.

Each :class:`OrderingClaim` names rows of one of our tables that a paper orders
(ascending: the first row is the paper's worst) in one column, and where the
paper says so. :func:`check` reads the table's TSV and says whether our numbers
keep that order. The numbers of one training each are compared as they are:
a verdict on a gap of a point or two says nothing beyond that one seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd


@dataclass(frozen=True)
class OrderingClaim:
    """``rows`` ascending in ``column`` of ``table``, as ``source`` reports them.

    A row is a ``model`` label, or ``section|model`` where a label repeats.
    """

    source: str
    table: str
    column: str
    rows: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    claim: OrderingClaim
    values: tuple[float, ...]
    agrees: bool

    def markdown(self) -> str:
        ours = " < ".join(f"{r} {v:.1f}" for r, v in zip(self.claim.rows, self.values))
        word = "**agrees**" if self.agrees else "**disagrees**"
        return f"- {self.claim.source}, {self.claim.table} {self.claim.column}: {ours} — {word}"


def _row_value(table: pd.DataFrame, row: str, column: str, where: str) -> float:
    section, _, model = row.rpartition("|")
    match = table["model"] == model
    if section:
        match &= table["section"] == section
    found = table.loc[match, column]
    if len(found) != 1:
        raise ValueError(f"{where}: {len(found)} rows named {row!r} (column {column!r})")
    return float(found.iloc[0])


def check(claim: OrderingClaim, tables: Path) -> Verdict:
    """Read ``tables/{claim.table}.tsv`` and compare its order with the claim's."""
    path = tables / f"{claim.table}.tsv"
    table = pd.read_csv(path, sep="\t")
    if claim.column not in table.columns:
        raise ValueError(f"{path}: no column {claim.column!r}")
    values = tuple(_row_value(table, r, claim.column, str(path)) for r in claim.rows)
    return Verdict(claim, values, all(a < b for a, b in zip(values, values[1:])))


LIWE_ROWS = ("(10) S-LIWE", "(2) S-LIWE", "(1) S-LIWE")
SMALR_FAMILY = ("Language-Agnostic", "HEM", "SMALR")

CLAIMS: tuple[OrderingClaim, ...] = (
    # SMALR §4.2: HEM improves upon LA; MCLM (SMALR) improves again; CLC adds 3-4 points.
    *(OrderingClaim("SMALR Tables 1-2", t, c, SMALR_FAMILY) for t in ("table2", "table1") for c in ("HA", "A")),
    *(OrderingClaim("SMALR §3.4 (CLC)", t, "HA", ("SMALR", "SMALR-CLC-A", "SMALR-CLC-C"))
      for t in ("table2", "table1")),
    # SMALR §4.2: LIWE degrades as languages are added; L-LIWE beats S-LIWE on ten.
    OrderingClaim("SMALR Table 2(b)", "table2", "En", LIWE_ROWS),
    OrderingClaim("SMALR Table 1(b)", "table1", "En", LIWE_ROWS),
    *(OrderingClaim("SMALR Tables 1-2(b)", t, "A", ("(10) S-LIWE", "(10) L-LIWE")) for t in ("table2", "table1")),
    # SMALR: SMALR above MULE on ten languages, with fewer parameters.
    *(OrderingClaim("SMALR Tables 1-2", t, "A", ("(10) MULE", "SMALR")) for t in ("table2", "table1")),
    # SMALR Table 2(a) (MULE's rows): MULE > PAR. EmbN > EmbN > Trans. to En.
    OrderingClaim("SMALR Table 2(a)", "table2", "HA", ("Trans. to En", "EmbN", "PAR. EmbN", "MULE")),
    # MULE Table 2: one shared branch lifts the low-resource languages; NC, LC, LP each help.
    *(OrderingClaim("MULE Table 2(a, d)", "mule_table2", lang,
                    ("(a) FastText (Baseline)|EmbN", "(d) MULE (Ours)|EmbN")) for lang in ("Fr", "Cs")),
    *(OrderingClaim("MULE Table 2(d)", "mule_table2", lang,
                    ("(d) MULE (Ours)|EmbN", "(d) MULE (Ours)|EmbN+NC", "(d) MULE (Ours)|EmbN+NC+LC",
                     "(d) MULE (Ours)|EmbN+NC+LC+LP (Full)")) for lang in ("En", "De")),
)


def orderings_markdown(tables: Path, claims: Sequence[OrderingClaim] = CLAIMS) -> str:
    """One line per claim: our values in the paper's order and the verdict."""
    verdicts = [check(c, tables) for c in claims]
    agree = sum(v.agrees for v in verdicts)
    head = (f"{agree} of {len(verdicts)} orderings of the papers hold on the default data "
            "(one training a row: a gap of a point or two is within one seed's noise).")
    return "\n".join([head, "", *(v.markdown() for v in verdicts)]) + "\n"
