"""MLMME Table 1 (Calixto et al. 2017): VSE against MLMME for every β.

Layout of the paper's Table 1: sections "Sentence to image" and "Image to
sentence", rows r@1, r@5, r@10 and mrank (median rank), columns per language
(English, German): VSE (the monolingual model of that language), then MLMME
with β = 1, .75, .5, .25 — the Markdown shows each MLMME recall with its
difference to VSE in parentheses, "(+6.2)", as the paper does, and the best
value of a row per language in bold. (The paper's extra "VSE paper" column,
numbers quoted from Kiros et al., has no counterpart here.)

A third section, "Sentence to sentence", holds what the S_S term trains for:
in a language's columns, its test sentences retrieving the other language's
(averaged over the other languages when there are more than two); VSE models
have one language and no such cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from polyvse.errors import InputError
from polyvse.evaluate.views import IMAGE_VIEW as IMAGE
from polyvse.evaluate.retrieval import KS

SECTIONS: tuple[str, ...] = ("Sentence to image", "Image to sentence", "Sentence to sentence")
METRICS: tuple[tuple[str, str], ...] = (*((f"r@{k}", f"r{k}") for k in KS), ("mrank", "medr"))
LANG_NAMES: dict[str, str] = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "cs": "Czech",
    "zh": "Chinese",
    "ja": "Japanese",
    "ar": "Arabic",
    "af": "Afrikaans",
    "ko": "Korean",
    "ru": "Russian",
    "hi": "Hindi",
}


def beta_label(beta: float) -> str:
    """``β=1``, ``β=.75``: the paper's column heads."""
    text = f"{float(beta):g}"
    return f"β={text[1:] if text.startswith('0.') else text}"


def column_name(lang: str, run: str, runs: Mapping[str, Mapping]) -> str:
    """``en VSE`` or ``en β=.75``: a TSV column of the table."""
    return f"{lang} VSE" if run.startswith("vse_") else f"{lang} {beta_label(runs[run]['beta'])}"


def table_cell(ev: pd.DataFrame, section: str, lang: str, key: str) -> float:
    """One cell of Table 1 from a run's evaluation: ``section`` × ``lang`` × metric ``key`` (r1, r5, r10, medr)."""
    if section == "Sentence to image":
        hit = ev[(ev["task"] == "image_sentence") & (ev["query"] == lang) & (ev["target"] == IMAGE)]
    elif section == "Image to sentence":
        hit = ev[(ev["task"] == "image_sentence") & (ev["query"] == IMAGE) & (ev["target"] == lang)]
    else:
        hit = ev[(ev["task"] == "sentence_sentence") & (ev["query"] == lang)]
        if hit.empty:
            return np.nan
    if hit.empty:
        raise InputError("mlmme evaluation", f"no {section.lower()} row for {lang!r}")
    return float(hit[key].mean())


def mlmme_table(evals: Mapping[str, pd.DataFrame], runs: Mapping[str, Mapping], langs: Sequence[str]) -> pd.DataFrame:
    """The table as TSV: ``section, metric`` then, per language, VSE and every β.

    evals: run name → the run's evaluation (:func:`polyvse.evaluate.mlmme.evaluate_mlmme`);
    runs: run name → {langs, beta} in column order (:func:`polyvse.train.mlmme.mlmme_runs`).
    """
    betas = [r for r in runs if not r.startswith("vse_")]
    rows = []
    for section in SECTIONS:
        for metric, key in METRICS:
            row: dict[str, object] = {"section": section, "metric": metric}
            for lang in langs:
                for run in [f"vse_{lang}", *betas]:
                    if run not in evals:
                        raise InputError("mlmme_table", f"no evaluation of run {run!r}")
                    row[column_name(lang, run, runs)] = table_cell(evals[run], section, lang, key)
            rows.append(row)
    return pd.DataFrame(rows)


def _row_cells(values: list[float], is_rank: bool, with_gain: bool) -> list[str]:
    """Format one language's cells of a row: VSE first, then the β runs with their gain over VSE."""
    finite = [v for v in values if not np.isnan(v)]
    best = (min(finite) if is_rank else max(finite)) if finite else None
    out = []
    for i, v in enumerate(values):
        text = "–" if np.isnan(v) else f"{v:g}" if is_rank else f"{v:.1f}"
        if not is_rank and with_gain and i > 0 and not np.isnan(values[0]) and not np.isnan(v):
            text += f" ({v - values[0]:+.1f})"
        out.append(f"**{text}**" if best is not None and v == best and len(finite) > 1 else text)
    return out


def mlmme_markdown(
    table: pd.DataFrame, runs: Mapping[str, Mapping], langs: Sequence[str], caption: str, notes: Sequence[str] = ()
) -> str:
    """Table 1 as the paper prints it (gains over VSE in parentheses, best per
    language in bold), then the sentence-to-sentence retrieval as a second table."""
    betas = [r for r in runs if not r.startswith("vse_")]
    heads = [
        f"{LANG_NAMES.get(lang, lang)} {'VSE' if run.startswith('vse_') else beta_label(runs[run]['beta'])}"
        for lang in langs
        for run in [f"vse_{lang}", *betas]
    ]
    lines = [f"**{caption}**", "", "| | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
    for section in SECTIONS[:2]:
        lines.append(f"| *{section}* |" + " |" * len(heads))
        for _, row in table[table["section"] == section].iterrows():
            cells = []
            for lang in langs:
                values = [float(row[column_name(lang, run, runs)]) for run in [f"vse_{lang}", *betas]]
                cells += _row_cells(values, row["metric"] == "mrank", with_gain=True)
            lines.append(f"| {row['metric']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Gains over the language's VSE model in parentheses; best value of a row per language in bold.",
        "",
        "**Sentence-to-sentence retrieval (what S_S trains for)**: queries in one language, candidates "
        "every test sentence of the other; a hit when a sentence of the same image is in the top K.",
        "",
    ]
    pairs = [f"{lang}→{'+'.join(l for l in langs if l != lang)}" for lang in langs]
    lines += ["| | " + " | ".join(beta_label(runs[r]["beta"]) for r in betas) + " |", "|---|" + "---:|" * len(betas)]
    s2s = table[table["section"] == SECTIONS[2]]
    for lang, pair in zip(langs, pairs):
        for _, row in s2s.iterrows():
            values = [float(row[column_name(lang, run, runs)]) for run in betas]
            cells = _row_cells(values, row["metric"] == "mrank", with_gain=False)
            lines.append(f"| {pair} {row['metric']} | " + " | ".join(cells) + " |")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"
