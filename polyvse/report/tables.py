"""Paper tables from per-variant evaluations.

SMALR Tables 1–2 layout: one row a model; mR per language (En De Fr Cs Cn Ja Ar
Af Ko Ru), HA = mean over the human-annotated languages, A = mean over all ten;
beside them train-time and test-time parameter counts. A cell is empty where
a language is not evaluated; HA and A only when all their languages are.

MULE Tables 2–3 layout (``mule``): the dataset's human languages only, a
section label (MULE's "(a) FastText (Baseline)", "(d) MULE (Ours)") and the
"Single Model" column (N where each language has its own model).

Parameter counts come from the models (``params.json`` of each variant), plus
what an evaluation protocol adds (the ``added_params`` column of an evaluation:
CLC-C's 352 for ten languages); a row of several per-language models sums them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

SMALR_LANGS: tuple[tuple[str, str], ...] = (
    ("en", "En"),
    ("de", "De"),
    ("fr", "Fr"),
    ("cs", "Cs"),
    ("zh", "Cn"),
    ("ja", "Ja"),
    ("ar", "Ar"),
    ("af", "Af"),
    ("ko", "Ko"),
    ("ru", "Ru"),
)
COLUMN_NAME: dict[str, str] = {**dict(SMALR_LANGS), "hi": "Hi"}


def _row_sources(row: Mapping) -> dict[str, str]:
    """language → variant for one table row."""
    return dict(row["per_language"]) if row.get("per_language") else {}


def _added_params(ev: pd.DataFrame) -> int:
    """Parameters an evaluation protocol adds to the model's (0 when the column is absent)."""
    return int(ev["added_params"].max()) if "added_params" in ev.columns and len(ev) else 0


def row_cells(
    row: Mapping, evals: Mapping[tuple[str, str], pd.DataFrame], params: Mapping[str, Mapping]
) -> tuple[dict[str, tuple[float, str]], int, int]:
    """(lang → (mR, test_source), params_train, params_test) of one table row:
    its variant's evaluation, or one evaluation per language (``per_language``)."""
    protocol = row.get("protocol", "direct")
    sources = {None: row["variant"]} if row.get("variant") else _row_sources(row)
    cells: dict[str, tuple[float, str]] = {}
    used: dict[str, int] = {}
    for lang, variant in sources.items():
        ev = evals[(variant, protocol)]
        used[variant] = max(used.get(variant, 0), _added_params(ev))
        ev = ev.set_index("lang")
        for l in ev.index if lang is None else [lang]:
            cells[l] = (float(ev.loc[l, "mR"]), str(ev.loc[l, "test_source"]))
    train = sum(int(params[v]["params_train"]) + extra for v, extra in used.items())
    test = sum(int(params[v]["params_test"]) + extra for v, extra in used.items())
    return cells, train, test


def smalr_table(
    rows: Sequence[Mapping],
    evals: Mapping[tuple[str, str], pd.DataFrame],
    params: Mapping[str, Mapping],
    human_langs: Sequence[str],
    langs: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Build the table; also return the languages tested on translations.

    rows: config rows (``name``, ``variant`` or ``per_language``, ``protocol``);
    evals: (variant, protocol) → evaluation frame (lang, test_source, mR, …);
    params: variant → {params_train, params_test}; langs: the dataset's languages
    (default: SMALR's ten). The table has a column for each of ``langs`` in SMALR's
    order, HA averages ``human_langs`` and A every one of ``langs``, each only when
    the row has them all: a dataset of four languages gets four columns and a filled A.
    """
    known = dict(SMALR_LANGS)
    if langs is not None and (unknown := [l for l in langs if l not in known]):
        raise ValueError(f"no SMALR table column for language(s) {', '.join(unknown)}")
    columns = [(c, col) for c, col in SMALR_LANGS if langs is None or c in langs]
    out, translated = [], set()
    for row in rows:
        cells, params_train, params_test = row_cells(row, evals, params)
        rec: dict[str, object] = {"model": row["name"]}
        for code, col in columns:
            if code in cells:
                rec[col] = round(float(cells[code][0]), 1)
                if cells[code][1] == "mt":
                    translated.add(code)
            else:
                rec[col] = np.nan
        ha = [cells[l][0] for l in human_langs if l in cells]
        rec["HA"] = round(float(np.mean(ha)), 1) if human_langs and len(ha) == len(human_langs) else np.nan
        every = [cells[c][0] for c, _ in columns if c in cells]
        rec["A"] = round(float(np.mean(every)), 1) if len(every) == len(columns) else np.nan
        rec["params_train"], rec["params_test"] = params_train, params_test
        out.append(rec)
    table = pd.DataFrame(out, columns=["model", *[c for _, c in columns], "HA", "A", "params_train", "params_test"])
    return table, [c for c, _ in columns if c in translated]


def mule_table(
    rows: Sequence[Mapping],
    evals: Mapping[tuple[str, str], pd.DataFrame],
    params: Mapping[str, Mapping],
    langs: Sequence[str],
) -> pd.DataFrame:
    """MULE Tables 2–3 layout: section, model, single_model, mR of each of ``langs``
    (the dataset's human languages), params_train, params_test.

    ``single_model`` is the row's, or N for a row of per-language models and Y otherwise.
    """
    out = []
    for row in rows:
        cells, params_train, params_test = row_cells(row, evals, params)
        single = row.get("single_model") or ("N" if row.get("per_language") else "Y")
        rec: dict[str, object] = {"section": row.get("section", ""), "model": row["name"], "single_model": single}
        for lang in langs:
            rec[COLUMN_NAME[lang]] = round(cells[lang][0], 1) if lang in cells else np.nan
        rec["params_train"], rec["params_test"] = params_train, params_test
        out.append(rec)
    return pd.DataFrame(
        out,
        columns=["section", "model", "single_model", *[COLUMN_NAME[l] for l in langs], "params_train", "params_test"],
    )


def mule_mt_table(
    rows: Sequence[Mapping],
    evals: Mapping[tuple[str, str], pd.DataFrame],
    params: Mapping[str, Mapping],
    columns: Mapping[str, Sequence[str]],
) -> pd.DataFrame:
    """MULE Table 4 layout: model, training data, single model, then per dataset
    the mR of each of its human languages (column ``{dataset}:{Lang}``)."""
    out = []
    for row in rows:
        rec: dict[str, object] = {
            "model": row["name"],
            "training_data": row.get("training_data", ""),
            "single_model": row.get("single_model", ""),
        }
        counts = {}
        for ds, langs in columns.items():
            cell = row["per_dataset"].get(ds)
            raw = evals[(cell["variant"], cell.get("protocol", "direct"))] if cell else None
            ev = raw.set_index("lang") if cell else None
            for lang in langs:
                has = ev is not None and lang in ev.index
                rec[f"{ds}:{COLUMN_NAME[lang]}"] = round(float(ev.loc[lang, "mR"]), 1) if has else np.nan
            # one model per dataset: its parameters go beside that dataset's columns
            for kind in ("params_train", "params_test"):
                counts[f"{ds}:{kind}"] = int(params[cell["variant"]][kind]) + _added_params(raw) if cell else np.nan
        rec.update(counts)
        out.append(rec)
    return pd.DataFrame(out)


def dataset_note(name: str, settings: Mapping) -> str:
    """A footnote naming a dataset, its adapter and its human-annotated languages."""
    what = settings["adapter"]
    if what == "synthetic":
        what += f", synthetic profile {settings['synthetic']['profile']}"
    return (
        f"Dataset `{name}` ({what}); human-annotated languages (HA): {', '.join(settings['human_langs'])}. "
        "mR = mean of R@1/5/10 in both directions; parameters: train-time and test-time."
    )


def format_params(n: float) -> str:
    """``7_100_000 -> '7.1M'``, as the papers print parameter counts."""
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    if n >= 1e3:
        return f"{n / 1e3:.1f}K"
    return str(int(n))


def to_markdown(table: pd.DataFrame, caption: str, translated: Sequence[str], notes: Sequence[str] = ()) -> str:
    """The table for reading: ¹ marks languages tested on machine translations."""
    cols = list(table.columns)
    label = {col: (col + " ¹" if code in translated else col) for code, col in SMALR_LANGS}
    head = [label.get(c, c) for c in cols]
    text_cols = ("section", "model", "training_data", "single_model")
    lines = [
        f"**{caption}**",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join(":--" if c in text_cols else "--:" for c in cols) + "|",
    ]
    for _, r in table.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if c in text_cols:
                cells.append(str(v))
            elif "params" in c:
                cells.append("–" if pd.isna(v) else format_params(v))
            else:
                cells.append("–" if pd.isna(v) else f"{v:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    if translated:
        lines.append("¹ tested on machine translations of the English test captions")
    lines += list(notes)
    return "\n".join(lines) + "\n"
