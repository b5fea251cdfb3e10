"""Any-to-any retrieval of a joint model beside separately trained ones: results/any_to_any.{tsv,md}.

Beyond the papers: a joint model puts images, written captions (``text-{lang}`` views)
and spoken captions (``speech-{lang}`` views) of several languages in one space, so
every view can query every other. Its test evaluation has one row per ordered pair of
views (columns ``query target r1 r5 r10 mr medr n``; ``mr`` the mean of r1, r5, r10, in
percent). A model trained on some views only (image + text, image + speech) has rows
only for its own pairs.

The table (:func:`any_to_any_table`) has a row per ordered pair any model has; per
model its R@1, R@10 and mR as means over the model's seeds, the mR's sample standard
deviation and the number of seeds. The first model is the joint one; beside each
separately trained model S it gives the joint model's mR gain over S and a verdict by
the rule of :mod:`polyvse.report.findings`: the gap *helps* (or *hurts*) where it
exceeds the larger of the two models' standard deviations over seeds, and is *within
noise* otherwise; with one seed there is no spread and no verdict.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from polyvse.config import SPEECH_FAMILY
from polyvse.report.findings import replica, spread
from polyvse.run_plan import Plan

REQUIRED_COLUMNS: tuple[str, ...] = ("query", "target", "r1", "r10", "mr")
ONE_SEED = "one seed: no verdict"
MISSING = "–"


def ordered_views(views: Iterable[str], langs: Sequence[str]) -> list[str]:
    """``views`` in table order: ``image``, ``text-{lang}`` for ``langs`` in order, then
    ``speech-{lang}``, then any other view sorted by name."""
    views = set(views)
    known = ["image", *(f"text-{l}" for l in langs), *(f"speech-{l}" for l in langs)]
    return [v for v in known if v in views] + sorted(views - set(known))


def _stat_columns(label: str) -> list[str]:
    return [f"{label} R@1", f"{label} R@10", f"{label} mR", f"{label} mR std", f"{label} seeds"]


def _model_stats(label: str, frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """(query, target) → the model's means over seeds (R@1, R@10, mR), mR std and seed count."""
    if not frames:
        raise ValueError(f"any-to-any: model {label!r} has no evaluation")
    pairs = None
    per_seed = []
    for k, ev in enumerate(frames):
        missing = [c for c in REQUIRED_COLUMNS if c not in ev.columns]
        if missing:
            raise ValueError(f"any-to-any: model {label!r}, seed {k}: evaluation lacks column(s) {', '.join(missing)}")
        ev = ev.assign(query=ev["query"].astype(str), target=ev["target"].astype(str)).set_index(["query", "target"])
        if ev.index.has_duplicates:
            dup = ev.index[ev.index.duplicated()][0]
            raise ValueError(f"any-to-any: model {label!r}, seed {k}: pair {dup[0]} → {dup[1]} twice")
        if pairs is None:
            pairs = set(ev.index)
        elif set(ev.index) != pairs:
            # a seed that misses pairs would silently average over fewer seeds for them
            diff = sorted(pairs ^ set(ev.index))
            shown = ", ".join(f"{q} → {t}" for q, t in diff[:4]) + (" …" if len(diff) > 4 else "")
            raise ValueError(f"any-to-any: model {label!r}: seed {k} and seed 0 disagree on pairs ({shown})")
        per_seed.append(ev[["r1", "r10", "mr"]].astype(float))
    rows = {}
    for pair in pairs:
        mr = [float(ev.loc[pair, "mr"]) for ev in per_seed]
        rows[pair] = [
            float(np.mean([ev.loc[pair, "r1"] for ev in per_seed])),
            float(np.mean([ev.loc[pair, "r10"] for ev in per_seed])),
            float(np.mean(mr)),
            spread(mr),
            len(per_seed),
        ]
    return pd.DataFrame.from_dict(rows, orient="index", columns=_stat_columns(label))


def pair_verdict(gap: float, std_a: float, std_b: float, seeds_a: int, seeds_b: int) -> str:
    """``helps`` / ``hurts`` / ``within noise`` for a gap of mean mR (joint − separate), the noise
    being the larger standard deviation; ``one seed: no verdict`` with fewer than 2 seeds in either."""
    if min(seeds_a, seeds_b) < 2:
        return ONE_SEED
    noise = max(std_a, std_b)
    if gap > noise:
        return "helps"
    if gap < -noise:
        return "hurts"
    return "within noise"


def any_to_any_table(models: Sequence[tuple[str, Sequence[pd.DataFrame]]], langs: Sequence[str]) -> pd.DataFrame:
    """The comparison table of ``models`` = [(label, [eval frame of seed 0, seed 1, …]), …], the
    joint model first.

    One row per ordered (query, target) pair any model has, ordered by :func:`ordered_views`
    of query, then of target. Columns: ``query``, ``target``; per model label L ``L R@1``,
    ``L R@10``, ``L mR`` (means over seeds), ``L mR std`` (ddof 1, NaN with one seed),
    ``L seeds``; then per separate model S ``Δ mR vs S`` (joint mean mR − S's) and
    ``verdict vs S`` (:func:`pair_verdict`; ``""`` where either model lacks the pair). A model
    lacking a pair has NaN there (``seeds``: <NA>, an empty TSV cell).

    Raises ValueError where a frame lacks a required column, a model's seeds disagree on
    their pairs, a model has no frame, or two models share a label."""
    if not models:
        raise ValueError("any-to-any: no models")
    labels = [label for label, _ in models]
    if len(set(labels)) != len(labels):
        raise ValueError(f"any-to-any: model labels repeat: {labels}")
    stats = [_model_stats(label, frames) for label, frames in models]
    pairs = set().union(*(set(s.index) for s in stats))
    order = {v: i for i, v in enumerate(ordered_views({v for p in pairs for v in p}, langs))}
    index = pd.MultiIndex.from_tuples(
        sorted(pairs, key=lambda p: (order[p[0]], order[p[1]])), names=["query", "target"]
    )
    table = pd.concat([s.reindex(index) for s in stats], axis=1)
    for label in labels:  # a whole number, empty where the model lacks the pair (not 3.00 in the TSV)
        table[f"{label} seeds"] = table[f"{label} seeds"].astype("Int64")
    joint = labels[0]
    for sep in labels[1:]:
        gap = table[f"{joint} mR"] - table[f"{sep} mR"]
        table[f"Δ mR vs {sep}"] = gap
        table[f"verdict vs {sep}"] = [
            ""
            if math.isnan(g)
            else pair_verdict(g, r[f"{joint} mR std"], r[f"{sep} mR std"], r[f"{joint} seeds"], r[f"{sep} seeds"])
            for g, (_, r) in zip(gap, table.iterrows())
        ]
    return table.reset_index()


def _pair(row: pd.Series) -> str:
    return f"{row['query']} → {row['target']}"


KINDS: tuple[str, ...] = ("image", "text", "speech")


def _kinds(query: str, target: str) -> str:
    """``text↔speech`` for a text and a speech view (either direction), ``text↔text`` for two text
    views; ``""`` for views of another kind."""
    kinds = [query.split("-", 1)[0], target.split("-", 1)[0]]
    if not set(kinds) <= set(KINDS):
        return ""
    return "↔".join(sorted(kinds, key=KINDS.index))


def any_to_any_findings(table: pd.DataFrame, labels: Sequence[str]) -> list[str]:
    """Sentences on :func:`any_to_any_table`'s ``table`` (models ``labels``, joint first): per
    separate model the verdict counts over the pairs both have, with the largest gain and loss
    of mean mR; then the pairs only the joint model has (their mean mR and range)."""
    joint, out = labels[0], []
    for sep in labels[1:]:
        delta, verdicts = table[f"Δ mR vs {sep}"], table[f"verdict vs {sep}"]
        shared = table[delta.notna()]
        if shared.empty:
            out.append(f"Joint training vs {sep}: no shared pairs.")
            continue
        counts = verdicts[delta.notna()].value_counts()
        if counts.get(ONE_SEED, 0):
            head = f"Joint training vs {sep}: {len(shared)} shared pairs, one seed: no verdict."
        else:
            head = (
                f"Joint training vs {sep}: helps {counts.get('helps', 0)} of {len(shared)} shared pairs, "
                f"hurts {counts.get('hurts', 0)}, within noise {counts.get('within noise', 0)}."
            )
        d = delta[delta.notna()]
        best, worst = table.loc[d.idxmax()], table.loc[d.idxmin()]
        gain = f"largest gain {_pair(best)} ({d.max():+.1f} mR)" if d.max() > 0 else "no gain"
        loss = f"largest loss {_pair(worst)} ({d.min():+.1f} mR)" if d.min() < 0 else "no loss"
        out.append(f"{head} Δ mR: {gain}, {loss}.")
    others = [f"{sep} mR" for sep in labels[1:]]
    only = table[table[f"{joint} mR"].notna() & table[others].isna().all(axis=1)] if others else table
    only = only[only[f"{joint} mR"].notna()]
    if only.empty:
        out.append(f"Every pair of {joint} is also in a separately trained model.")
    else:
        kinds = sorted({_kinds(q, t) for q, t in zip(only["query"], only["target"])} - {""})
        mr = only[f"{joint} mR"]
        lo, hi = only.loc[mr.idxmin()], only.loc[mr.idxmax()]
        out.append(
            f"Only {joint} has {len(only)} pairs" + (f" ({', '.join(kinds)})" if kinds else "") + ": "
            f"mean mR {mr.mean():.1f}, from {mr.min():.1f} ({_pair(lo)}) to {mr.max():.1f} ({_pair(hi)})."
        )
    return out


def _num(v: float) -> str:
    return MISSING if pd.isna(v) else f"{v:.1f}"


def any_to_any_markdown(
    table: pd.DataFrame, labels: Sequence[str], caption: str, notes: Sequence[str], findings: Sequence[str]
) -> str:
    """The table for reading: ``**caption**``, a pipe table (Query | Target | per model R@1, R@10,
    mR — ``mean ± std`` over several seeds — | per separate model Δ mR and verdict; ``–`` where a
    model lacks the pair), the seeds per model, ``notes`` one paragraph each, then the findings
    as a list."""
    joint, seps = labels[0], list(labels[1:])
    head = ["Query", "Target"]
    for label in labels:
        head += [f"{label} R@1", f"{label} R@10", f"{label} mR"]
    for sep in seps:
        head += [f"Δ mR vs {sep}", f"vs {sep}"]
    align = [":--", ":--"] + ["--:"] * (3 * len(labels) + len(seps) * 2)
    for i in range(len(seps)):  # the verdict columns are words
        align[2 + 3 * len(labels) + 2 * i + 1] = ":--"
    lines = [f"**{caption}**", ""] if caption else []
    lines += ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for _, r in table.iterrows():
        cells = [str(r["query"]), str(r["target"])]
        for label in labels:
            mr, sd = r[f"{label} mR"], r[f"{label} mR std"]
            mr_cell = _num(mr) if pd.isna(mr) or pd.isna(sd) else f"{mr:.1f} ± {sd:.1f}"
            cells += [_num(r[f"{label} R@1"]), _num(r[f"{label} R@10"]), mr_cell]
        for sep in seps:
            d = r[f"Δ mR vs {sep}"]
            cells += [MISSING if pd.isna(d) else f"{d:+.1f}", r[f"verdict vs {sep}"] or MISSING]
        lines.append("| " + " | ".join(cells) + " |")
    seeds = ", ".join(
        f"{label} {int(table[f'{label} seeds'].max())}" for label in labels if table[f"{label} seeds"].notna().any()
    )
    lines += [
        "",
        f"Recalls in percent, means over seeds (seeds per model: {seeds}); mR = mean of R@1/5/10, ± its "
        f"standard deviation over seeds. Δ mR = {joint} − the separate model; a gap helps or hurts where it "
        "exceeds the larger of the two standard deviations, and is within noise otherwise.",
    ]
    for note in notes:  # a blank line before each: separate Markdown paragraphs
        lines += ["", note]
    if findings:
        lines += ["", "Findings:", ""] + [f"- {f}" for f in findings]
    return "\n".join(lines).rstrip() + "\n"


def model_evaluations(plan: Plan, report: str, results: str) -> list[dict]:
    """Per row of an any_to_any report of the run's plan: its name, kind (joint | speech), and the evaluation
    files of its seeds (seed 0 first; ``findings.seeds`` of them, at least one)."""
    seeds = max(1, plan.seeds)
    out = []
    for row in plan.config["reports"][report]["rows"]:
        name = row["variant"]
        v = plan.config["variants"][name]
        kind = "speech" if v["model"] == SPEECH_FAMILY else "joint"
        evals = [f"{results}/{v['dataset']}/{kind}/{replica(name, k)}/eval.tsv" for k in range(seeds)]
        out.append({"name": row["name"], "kind": kind, "evals": evals})
    return out
