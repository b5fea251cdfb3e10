"""The thesis' result tables (Tables 3.1–3.4, 4.1, 5.1) from per-variant evaluations.

Each row is one model; the columns are R@1, R@5 and R@10 (averaged over the two
retrieval directions, §3.1.3) of every view pair, grouped as the thesis prints
them: the image pairs ``E&I H&I J&I`` at R@1, then at R@5, then at R@10, then the
cross-lingual pairs ``H&E J&E J&H`` likewise, then ``Ep`` (the best epoch by
validation recall), then the model's parameter count. The TSV holds one wide row
per model; the Markdown version prints the two blocks ("Image Ret", "Cross-Ling")
one under the other, as the thesis does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from polyvse.evaluate.retrieval import KS
from polyvse.evaluate.views import view_pairs

BLOCKS: tuple[tuple[str, str], ...] = (("image", "Image Ret"), ("cross", "Cross-Ling"))


def block_columns(langs: Sequence[str], kind: str, ks: Sequence[int] = KS) -> list[str]:
    """``E&I.R1 H&I.R1 J&I.R1 E&I.R5 …`` for ``kind`` image, or the cross-lingual pairs."""
    names = [name for name, _, _, k in view_pairs(langs) if k == kind]
    return [f"{name}.R{k}" for k in ks for name in names]


def speech_table(
    rows: Sequence[Mapping[str, str]],
    evals: Mapping[str, pd.DataFrame],
    params: Mapping[str, Mapping],
    langs: Sequence[str],
) -> pd.DataFrame:
    """One row per ``rows`` entry (``name``, ``variant``): ``model``, the image block, the
    cross-lingual block, ``Ep``, ``params``. ``evals[variant]``: the speech_evaluate table
    (``pair``, ``r1``, ``r5``, ``r10``, ``best_epoch``); ``params[variant]``: its params.json."""
    out = []
    for row in rows:
        ev = evals[row["variant"]].set_index("pair")
        record: dict[str, object] = {"model": row["name"]}
        for kind, _ in BLOCKS:
            for col in block_columns(langs, kind):
                pair, k = col.rsplit(".R", 1)
                record[col] = float(ev.loc[pair, f"r{k}"])
        record["Ep"] = int(ev["best_epoch"].iloc[0])
        record["params"] = int(params[row["variant"]]["params"])
        out.append(record)
    return pd.DataFrame(out)


def speech_markdown(table: pd.DataFrame, langs: Sequence[str], caption: str, notes: Sequence[str] = ()) -> str:
    """The table as the thesis prints it: an "Image Ret" block, then a "Cross-Ling" block,
    recalls as percentages with two decimals; then the parameter counts and ``notes``, one
    paragraph each (the dataset and chance line, then the report's footnotes)."""
    lines = [f"**{caption}**", ""] if caption else []
    for kind, title in BLOCKS:
        cols = block_columns(langs, kind)
        if not cols:
            continue
        lines.append("| " + " | ".join([title, *cols, "Ep"]) + " |")
        lines.append("|" + "---|" * (len(cols) + 2))
        for _, r in table.iterrows():
            cells = [str(r["model"]), *(f"{float(r[c]):.2f}%" for c in cols), str(int(r["Ep"]))]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    params = ", ".join(f"{r['model']}: {int(r['params']):,}" for _, r in table.iterrows())
    lines.append(f"Parameters per model: {params}.")
    for note in notes:  # a blank line before each: separate Markdown paragraphs
        lines += ["", note]
    return "\n".join(lines).rstrip() + "\n"


def table_notes(report: Mapping, name: str) -> list[str]:
    """The footnotes of a speech report (layout speech) (its ``notes``, printed under the table
    in order), checked: each a non-empty string."""
    notes = report.get("notes") or []
    if isinstance(notes, str) or not all(isinstance(n, str) and n.strip() for n in notes):
        raise ValueError(f"reports.{name}.notes: expected a list of non-empty strings, got {notes!r}")
    return [n.strip() for n in notes]


def chance_note(n_test: int, ks: Sequence[int] = KS) -> str:
    """What random embeddings would score on ``n_test`` datapoints."""
    chance = ", ".join(f"R@{k} {100.0 * min(k, n_test) / n_test:.2f}%" for k in ks)
    return f"Test set: {n_test} datapoints per view; chance level {chance}."
