"""The seeds' findings, tested on our tables over several training seeds: results/findings.{md,tsv}.

Each :class:`Claim` is one finding of a seed paper that a table of ours can test: rows of
one table of ``reports`` (a text table, a thesis table of layout speech, or MLMME
Table 1, layout mlmme) that the paper orders in one column, worst first, with the paper's numbers as
printed. One training of a row says nothing about a gap of a point or two, so every row a
claim compares is trained ``findings.seeds`` times: the configured variant (seed
``seed``) and replicas named ``{variant}-s{k}`` (seed ``seed + k``, k = 1 … seeds − 1),
identical in every other setting (:func:`polyvse.plan.add_seed_replicas` adds them to the
run's config). A claim's value per seed is the row's cell computed by the same table code as
the published table, on that seed's evaluations (:func:`claim_values`).

Verdict (:func:`verdict`): for each adjacent pair of rows, the gap of the means is
compared with the seeds' spread (the larger of the two rows' sample standard
deviations). A pair *holds* where the gap exceeds the spread in the paper's direction,
is *reversed* where it exceeds it the other way, and is *within noise* otherwise; for a
relation ``<=`` (the paper's "on par or better") a pair holds unless it is reversed. A
claim *agrees* when every pair holds, *disagrees* when any pair is reversed, and is
*within noise* otherwise. With one seed there is no spread: the report says so and
gives no verdict.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from polyvse.config import WORD_LAYOUTS, dataset_langs, human_langs, row_sources
from polyvse.speech.settings import speech_variant_dataset
from polyvse.train.mlmme_runs import mlmme_block
from polyvse.report.tables import COLUMN_NAME
from polyvse.run_plan import Plan

CLAIM_FAMILIES: tuple[str, ...] = ("text", "speech", "mlmme")
COLUMNS = [
    "claim",
    "source",
    "table",
    "column",
    "row",
    "paper",
    "seeds",
    "mean",
    "std",
    "values",
    "verdict",
    "best_epochs",
]
MLMME_TABLE = "mlmme_table1"


@dataclass(frozen=True)
class Claim:
    """``rows`` of ``table`` ascending in ``column`` (``relation`` between neighbours) as ``source`` reports.

    ``family``: text (``column`` a column of the report's TSV, or ``A+B`` their mean),
    speech (``image.R10``: the mean over the image pairs at R@10; ``cross.R10`` the
    cross-lingual pairs'), mlmme (``column`` a language: the mean of r@1/5/10 over
    sentence→image and image→sentence; rows ``VSE``, ``β=1``, ``β=.75`` …). A text row is
    its ``name`` in the report, ``section|name`` where a name repeats. ``paper``: the
    paper's numbers for the rows, in row order."""

    key: str
    source: str
    statement: str
    family: str
    table: str
    column: str
    rows: tuple[str, ...]
    paper: tuple[str, ...]
    relation: str = "<"


def replica(name: str, k: int) -> str:
    """The name of ``name``'s training with seed offset ``k`` (``k`` = 0: ``name`` itself)."""
    return name if k == 0 else f"{name}-s{k}"


# --- which trainings a claim reads -----------------------------------------------------------------


def _text_row(config: Mapping, claim: Claim, label: str) -> Mapping:
    """The report row ``label`` names (``qualifier|name``: the qualifier is its section or training
    data), keeping of a per-language / per-dataset row only the models the claim's column reads."""
    qualifier, _, name = label.rpartition("|")
    rows = [
        r
        for r in config["reports"][claim.table]["rows"]
        if r["name"] == name and (not qualifier or qualifier in (r.get("section"), r.get("training_data")))
    ]
    if len(rows) != 1:
        raise ValueError(f"findings {claim.key}: {len(rows)} rows named {label!r} in reports.{claim.table}")
    row = copy.deepcopy(dict(rows[0]))
    columns = claim.column.split("+")
    if row.get("per_language") and not {"A", "HA"} & set(columns):
        codes = {name: code for code, name in COLUMN_NAME.items()}
        keep = {codes.get(c, c) for c in columns}
        row["per_language"] = {lang: v for lang, v in row["per_language"].items() if lang in keep}
    if row.get("per_dataset"):
        keep = {c.split(":")[0] for c in columns}
        row["per_dataset"] = {ds: c for ds, c in row["per_dataset"].items() if ds in keep}
    return row


def _row_variants(row: Mapping) -> list[str]:
    if row.get("variant"):
        return [row["variant"]]
    if row.get("per_language"):
        return list(dict.fromkeys(row["per_language"].values()))
    return list(dict.fromkeys(c["variant"] for c in row.get("per_dataset", {}).values()))


def _renamed_row(row: Mapping, k: int) -> dict:
    """A copy of a text report row whose variants are their seed-``k`` replicas."""
    out = copy.deepcopy(dict(row))
    if out.get("variant"):
        out["variant"] = replica(out["variant"], k)
    if out.get("per_language"):
        out["per_language"] = {lang: replica(v, k) for lang, v in out["per_language"].items()}
    if out.get("per_dataset"):
        out["per_dataset"] = {ds: {**c, "variant": replica(c["variant"], k)} for ds, c in out["per_dataset"].items()}
    return out


def _speech_row(config: Mapping, claim: Claim, label: str) -> Mapping:
    rows = [r for r in config["reports"][claim.table]["rows"] if r["name"] == label]
    if len(rows) != 1:
        raise ValueError(f"findings {claim.key}: {len(rows)} rows named {label!r} in reports.{claim.table}")
    return rows[0]


def _mlmme_variant(config: Mapping, claim: Claim) -> str:
    """The mlmme variant of the claim's table (its one row)."""
    return config["reports"][claim.table]["rows"][0]["variant"]


FAMILY_LAYOUTS = {"text": WORD_LAYOUTS, "speech": ("speech",), "mlmme": ("mlmme",)}
"""The report layouts a claim of each family reads."""


def _mlmme_run(label: str, lang: str) -> str:
    if label == "VSE":
        return f"vse_{lang}"
    value = label.removeprefix("β=")
    return f"b{round(100 * float(value if not value.startswith('.') else '0' + value))}"


def claim_configured(config: Mapping, claim: Claim) -> bool:
    """Whether the config has the table a claim reads, of its family's layout, with every row it names."""
    rep = (config.get("reports") or {}).get(claim.table)
    if rep is None or rep.get("layout", "smalr") not in FAMILY_LAYOUTS[claim.family]:
        return False
    rows = rep.get("rows", [])
    if claim.family == "text":
        return all(
            any(
                r["name"] == label.rpartition("|")[2]
                and (
                    not label.rpartition("|")[0]
                    or label.rpartition("|")[0] in (r.get("section"), r.get("training_data"))
                )
                for r in rows
            )
            for label in claim.rows
        )
    if claim.family == "speech":
        return all(any(r["name"] == label for r in rows) for label in claim.rows)
    if not rows or rows[0].get("variant") not in (config.get("variants") or {}):
        return False
    block = mlmme_block(config, _mlmme_variant(config, claim))
    betas = {_mlmme_run(f"β={b:g}", "") for b in block.get("betas", [])}
    return claim.column.split(":")[0] in block.get("langs", []) and all(
        label == "VSE" or _mlmme_run(label, "") in betas for label in claim.rows
    )


def active_claims(config: Mapping, claims: Sequence[Claim] | None = None) -> list[Claim]:
    """The claims whose tables the config has (none when ``findings.seeds`` is 0)."""
    if int(config.get("findings", {}).get("seeds", 0)) < 1:
        return []
    return [c for c in (CLAIMS if claims is None else claims) if claim_configured(config, c)]


def claim_trainings(config: Mapping, claim: Claim) -> list[str]:
    """The variants (text, speech) or MLMME runs behind a claim's rows, seed 0."""
    out: list[str] = []
    for label in claim.rows:
        if claim.family == "text":
            out += _row_variants(_text_row(config, claim, label))
        elif claim.family == "speech":
            out.append(_speech_row(config, claim, label)["variant"])
        else:
            out.append(_mlmme_run(label, claim.column.split(":")[0]))
    return list(dict.fromkeys(out))


def replicated(config: Mapping, claims: Sequence[Claim] | None = None) -> dict[str, list[str]]:
    """Family → the trainings that need seed replicas, in claim order."""
    out: dict[str, list[str]] = {f: [] for f in CLAIM_FAMILIES}
    for claim in active_claims(config, claims):
        out[claim.family] += [t for t in claim_trainings(config, claim) if t not in out[claim.family]]
    return out


def seed_groups(config: Mapping) -> dict[str, list[str]]:
    """Variant → it and its seed replicas (``findings.seeds`` names: ``variant``, ``variant-s1``, …),
    for every variant whose replicas :mod:`polyvse.plan` added: they read the
    same inputs and differ in their seed alone, so one job may train them all. A ``-s{k}`` variant
    that differs from its base in more than the seed is a variant of its own, not a replica."""
    seeds = int(config.get("findings", {}).get("seeds", 0))
    variants = config.get("variants", {})

    def unseeded(v: Mapping) -> dict:
        return {k: x for k, x in v.items() if k != "seed"}

    groups = {}
    for name, v in variants.items():
        members = [replica(name, k) for k in range(1, seeds)]
        if members and all(m in variants and unseeded(variants[m]) == unseeded(v) for m in members):
            groups[name] = [name, *members]
    return groups


# --- the plan a findings job reads -----------------------------------------------------------------


def _text_sources(config: Mapping, claim: Claim, results: str, seeds: int) -> dict:
    rep = config["reports"][claim.table]
    rows = {}
    for label in claim.rows:
        row = _text_row(config, claim, label)
        per_seed = []
        for k in range(seeds):
            r = _renamed_row(row, k)
            evals = {
                f"{v}|{p}": f"{results}/{config['variants'][v]['dataset']}/eval/{v}.{p}.tsv" for v, p in row_sources(r)
            }
            params = {
                v: f"{results}/{config['variants'][v]['dataset']}/models/{v}/params.json" for v, _ in row_sources(r)
            }
            per_seed.append({"row": r, "evals": evals, "params": params})
        rows[label] = per_seed
    datasets = list(rep["datasets"]) if rep.get("layout") == "mule_mt" else [rep["dataset"]]
    return {
        "layout": rep.get("layout", "smalr"),
        "dataset": datasets[0],
        "datasets": {
            ds: {"langs": dataset_langs(config, ds), "human_langs": human_langs(config, ds)} for ds in datasets
        },
        "rows": rows,
    }


def _speech_sources(config: Mapping, claim: Claim, results: str, seeds: int) -> dict:
    rows = {}
    for label in claim.rows:
        variant = _speech_row(config, claim, label)["variant"]
        ds = speech_variant_dataset(config, variant)
        rows[label] = [
            {
                "row": {"name": label, "variant": replica(variant, k)},
                "eval": f"{results}/{ds}/speech/{replica(variant, k)}/eval.tsv",
                "params": f"{results}/{ds}/speech/{replica(variant, k)}/params.json",
            }
            for k in range(seeds)
        ]
    variant = _speech_row(config, claim, claim.rows[0])["variant"]
    return {"langs": dataset_langs(config, speech_variant_dataset(config, variant)), "rows": rows}


def _mlmme_sources(config: Mapping, claim: Claim, results: str, seeds: int) -> dict:
    variant = _mlmme_variant(config, claim)
    ds = config["variants"][variant]["dataset"]
    lang = claim.column.split(":")[0]
    return {
        "rows": {
            label: [
                {
                    "eval": f"{results}/{ds}/mlmme/{variant}/{replica(_mlmme_run(label, lang), k)}/eval.tsv",
                    "params": f"{results}/{ds}/mlmme/{variant}/{replica(_mlmme_run(label, lang), k)}/params.json",
                }
                for k in range(seeds)
            ]
            for label in claim.rows
        }
    }


def findings_plan(plan: Plan, results: str, claims: Sequence[Claim] | None = None) -> list[dict]:
    """Every active claim of the run's plan with, per row and seed, what to read (plain data: a rule's params)."""
    make = {"text": _text_sources, "speech": _speech_sources, "mlmme": _mlmme_sources}
    return [
        {
            "claim": claim.__dict__.copy(),
            "seeds": plan.seeds,
            **make[claim.family](plan.config, claim, results, plan.seeds),
        }
        for claim in active_claims(plan.config, claims)
    ]


def plan_files(plan: Sequence[Mapping]) -> list[str]:
    """Every file a plan reads, without repeats (the findings rule's input)."""
    out: list[str] = []
    for item in plan:
        for per_seed in item["rows"].values():
            for src in per_seed:
                out += (
                    list(src.get("evals", {}).values()) + list(src.get("params", {}).values())
                    if isinstance(src.get("params"), dict)
                    else [src["eval"]] + ([src["params"]] if "params" in src else [])
                )
    return list(dict.fromkeys(out))


# --- values, verdicts, report ------------------------------------------------------------------------

Reader = Callable[[str], object]  # path → DataFrame (a .tsv) or dict (a .json)


def _text_value(item: Mapping, src: Mapping, column: str, read: Reader) -> float:
    from polyvse.report.tables import mule_mt_table, mule_table, smalr_table

    evals = {tuple(key.split("|")): read(path) for key, path in src["evals"].items()}
    params = {v: read(path) for v, path in src["params"].items()}
    ds = item["datasets"][item["dataset"]]
    if item["layout"] == "mule_mt":
        table = mule_mt_table([src["row"]], evals, params, {d: s["human_langs"] for d, s in item["datasets"].items()})
    elif item["layout"] == "mule":
        table = mule_table([src["row"]], evals, params, ds["human_langs"])
    else:
        table, _ = smalr_table([src["row"]], evals, params, ds["human_langs"], ds["langs"])
    return float(np.mean([float(table[c].iloc[0]) for c in column.split("+")]))


def _speech_value(item: Mapping, src: Mapping, column: str, read: Reader) -> float:
    from polyvse.report.speech import block_columns, speech_table

    variant = src["row"]["variant"]
    table = speech_table([src["row"]], {variant: read(src["eval"])}, {variant: read(src["params"])}, item["langs"])
    kind, k = column.split(".R")
    return float(np.mean([float(table[c].iloc[0]) for c in block_columns(item["langs"], kind, (int(k),))]))


MLMME_DIRECTIONS: dict[str, tuple[str, ...]] = {
    "s2i": ("Sentence to image",),
    "i2s": ("Image to sentence",),
    "both": ("Sentence to image", "Image to sentence"),
}


def _mlmme_value(src: Mapping, column: str, read: Reader) -> float:
    """``lang:s2i`` (sentence→image), ``lang:i2s`` or ``lang``: the mean of r@1/5/10 of those directions."""
    from polyvse.report.mlmme import table_cell

    lang, _, direction = column.partition(":")
    ev = read(src["eval"])
    return float(
        np.mean(
            [
                table_cell(ev, section, lang, f"r{k}")
                for section in MLMME_DIRECTIONS[direction or "both"]
                for k in (1, 5, 10)
            ]
        )
    )


def claim_values(item: Mapping, read: Reader) -> dict[str, list[float]]:
    """Row label → the claim's column value for every seed."""
    claim = item["claim"]
    out = {}
    for label, per_seed in item["rows"].items():
        if claim["family"] == "text":
            out[label] = [_text_value(item, src, claim["column"], read) for src in per_seed]
        elif claim["family"] == "speech":
            out[label] = [_speech_value(item, src, claim["column"], read) for src in per_seed]
        else:
            out[label] = [_mlmme_value(src, claim["column"], read) for src in per_seed]
    return out


def _params_files(src: Mapping) -> list[str]:
    """The params.json of every training one row reads for one seed (none for MLMME's runs)."""
    params = src.get("params")
    if params is None:
        return []
    return list(params.values()) if isinstance(params, dict) else [params]


CEILING_MARK = "ᶜ"
"""Marks, in the *best / run* column, a training that hit its epochs ceiling (``stop_reason`` ceiling)
instead of stopping on patience: ``8/8ᶜ`` against a converged ``5/9``. A marker, not a word: the
column holds a seed's trainings without spaces, its seeds separated by one."""

SCHEDULE_MARK = "ˢ"
"""Marks a training that ran its learning-rate schedule to its end (``stop_reason`` schedule): its rate
decayed to zero at the ceiling, so its best epoch is often its last (``30/30ˢ``) without it having been
cut off while rising, as a training at a constant rate would be."""

CEILING_SEEDS = 2
"""A claim is flagged when it compares a row that hit its epochs ceiling in at least this many of its
seeds (all of them, with fewer seeds): one seed at the ceiling can be that seed's luck, two are the
row's training budget."""


def epochs_cell(params: Mapping) -> str:
    """One training's ``best/run`` epochs, :data:`CEILING_MARK` after it where it hit its epochs ceiling;
    a params.json without ``stop_reason`` (older outputs) gives ``best/run`` alone."""
    mark = {"ceiling": CEILING_MARK, "schedule": SCHEDULE_MARK}.get(str(params.get("stop_reason")), "")
    return f"{int(params['best_epoch'])}/{int(params['epochs_run'])}{mark}"


def best_epochs(item: Mapping, read: Reader) -> dict[str, list[str]]:
    """Row label → per seed, ``best/run`` epochs of its trainings (:func:`epochs_cell`; ``+``-joined
    where a row reads several, e.g. one model per language); empty where the runs record none."""
    out = {}
    for label, per_seed in item["rows"].items():
        seeds = []
        for src in per_seed:
            runs = [read(path) for path in _params_files(src)]
            seeds.append("+".join(epochs_cell(r) for r in runs))
        out[label] = seeds if all(seeds) else []
    return out


def seed_hit_ceiling(seed: str) -> bool:
    """Whether a seed's ``best/run`` entry has a training that hit its epochs ceiling: marked
    :data:`CEILING_MARK`, or, unmarked, best = run (an older output, which records no stop reason: it
    trained a fixed budget, and a best epoch that is its last was still rising when the budget ended).
    A run marked :data:`SCHEDULE_MARK` ended its schedule at a rate of zero: not cut off."""
    for run in seed.split("+"):
        if run.endswith(CEILING_MARK):
            return True
        if run.endswith(SCHEDULE_MARK):
            continue
        best, _, ran = run.partition("/")
        if best == ran:
            return True
    return False


def hit_ceiling(epochs: Sequence[str], seeds: int = CEILING_SEEDS) -> bool:
    """Whether a row's seeds (their ``best/run`` entries) hit the epochs ceiling in at least ``seeds``
    of them (in every one where the row has fewer): its numbers may be those of unconverged models."""
    if not epochs:
        return False
    return sum(seed_hit_ceiling(e) for e in epochs) >= min(seeds, len(epochs))


def spread(values: Sequence[float]) -> float:
    """Sample standard deviation (ddof 1); NaN for one value."""
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def verdict(values: Sequence[Sequence[float]], relation: str = "<") -> tuple[str, list[str]]:
    """The claim's verdict on rows' per-seed values (ascending expected) and each adjacent pair's.

    Returns (``agrees`` / ``disagrees`` / ``within noise`` / ``one seed: no verdict``, pair verdicts)."""
    if relation not in ("<", "<="):
        raise ValueError(f"unknown relation {relation!r}")
    if min(len(v) for v in values) < 2:
        return "one seed: no verdict", []
    pairs = []
    for lo, hi in zip(values, values[1:]):
        gap, noise = float(np.mean(hi) - np.mean(lo)), max(spread(lo), spread(hi))
        if gap < -noise:
            pairs.append("reversed")
        elif gap > noise or relation == "<=":
            pairs.append("holds")
        else:
            pairs.append("within noise")
    if "reversed" in pairs:
        return "disagrees", pairs
    return ("agrees" if all(p == "holds" for p in pairs) else "within noise"), pairs


def findings_table(plan: Sequence[Mapping], read: Reader) -> pd.DataFrame:
    """One row per (claim, row): :data:`COLUMNS`; the claim's verdict on each of its rows."""
    out = []
    for item in plan:
        claim = item["claim"]
        values = claim_values(item, read)
        epochs = best_epochs(item, read)
        overall, _ = verdict([values[r] for r in claim["rows"]], claim["relation"])
        for label, paper in zip(claim["rows"], claim["paper"]):
            v = values[label]
            out.append(
                {
                    "claim": claim["key"],
                    "source": claim["source"],
                    "table": claim["table"],
                    "column": claim["column"],
                    "row": label,
                    "paper": paper,
                    "seeds": len(v),
                    "mean": round(float(np.mean(v)), 2),
                    "std": round(spread(v), 2) if len(v) > 1 else math.nan,
                    "values": " ".join(f"{x:.2f}" for x in v),
                    "verdict": overall,
                    "best_epochs": " ".join(epochs[label]),
                }
            )
    return pd.DataFrame(out, columns=COLUMNS)


def _seeds(cell: object) -> list[str]:
    """A *best / run* cell's per-seed entries (none for an empty cell)."""
    text = str(cell)
    return [] if text in ("", "nan") else text.split()


def findings_markdown(plan: Sequence[Mapping], table: pd.DataFrame) -> str:
    """The report a person reads: a summary count, then per claim its statement, the paper's and
    our numbers (mean ± std over the seeds), the verdict and each neighbouring pair's."""
    seeds = int(plan[0]["seeds"]) if plan else 0
    verdicts = table.drop_duplicates("claim")["verdict"].value_counts() if len(table) else pd.Series(dtype=int)
    counts = ", ".join(f"{verdicts[v]} {v}" for v in ("agrees", "disagrees", "within noise") if v in verdicts)
    capped = {
        key
        for key, rows in table.groupby("claim", sort=False)
        if any(hit_ceiling(_seeds(e)) for e in rows["best_epochs"])
    }
    at_least = min(CEILING_SEEDS, seeds) if seeds else CEILING_SEEDS
    lines = [
        "# The seeds' findings on our tables",
        "",
        f"{len(plan)} claims of the seed papers, each row trained with {seeds} seeds (findings.seeds): "
        f"{counts or 'none'}. A neighbouring pair of rows holds where its gap of means exceeds the "
        "larger of the two rows' standard deviations over the seeds, is reversed where it exceeds it the "
        "other way, and is within noise otherwise (polyvse/report/findings.py).",
        "",
        f"{len(capped)} of the {len(plan)} claims compare a row that hit its epochs ceiling in {at_least} or more "
        f"of its {seeds} seeds (column *best / run*: the best epoch by validation score / the epochs run, per "
        f"seed; {CEILING_MARK} a training that ran its ceiling of epochs instead of stopping on patience, "
        "unmarked one that converged): the verdict compares models that may not have converged.",
        "",
    ]
    for item in plan:
        claim = item["claim"]
        rows = table[table["claim"] == claim["key"]]
        _, pairs = verdict([[float(x) for x in r.split()] for r in rows["values"]], claim["relation"])
        lines += [
            f"## {claim['statement']}",
            "",
            f"{claim['source']}; ours: `{claim['table']}`, column {claim['column']}. "
            f"**{rows['verdict'].iloc[0]}**" + (f" (pairs, worst first: {', '.join(pairs)})" if pairs else "") + ".",
            "",
        ]
        if claim["key"] in capped:
            names = [
                str(r["row"]).replace("|", " · ") for _, r in rows.iterrows() if hit_ceiling(_seeds(r["best_epochs"]))
            ]
            lines += [f"Hit the epochs ceiling in {at_least} or more seeds: {', '.join(names)}".rstrip(".") + ".", ""]
        lines += ["| row | paper | ours: mean ± std | seeds | best / run |", "|---|--:|--:|---|---|"]
        for _, r in rows.iterrows():
            sd = "–" if pd.isna(r["std"]) else f"{r['std']:.2f}"
            row = str(r["row"]).replace("|", " · ")  # "section|name": a bar would end the Markdown cell
            epochs = str(r["best_epochs"]) if str(r["best_epochs"]) not in ("", "nan") else "–"
            lines.append(f"| {row} | {r['paper']} | {r['mean']:.2f} ± {sd} | {r['values']} | {epochs} |")
        lines.append("")
    return "\n".join(lines)


def _claims() -> tuple[Claim, ...]:
    """The papers' claims that a table can test, with the papers' numbers as printed (means of printed numbers
    where a claim reads several columns: computed from the paper's cells, said so)."""
    return (
        Claim(
            "smalr_la_hem_smalr",
            "SMALR §5, Table 2 (Multi30K), A",
            "SMALR: the hard-example vocabulary (HEM) beats the language-agnostic one (LA), and MCLM (SMALR) beats HEM",
            "text",
            "table2",
            "A",
            ("Language-Agnostic", "HEM", "SMALR"),
            ("61.6", "64.0", "65.4"),
        ),
        Claim(
            "smalr_vs_mule10",
            "SMALR §5, Table 2 (Multi30K), A",
            "SMALR: SMALR is on par with or better than MULE on ten languages, with a fraction of its parameters",
            "text",
            "table2",
            "A",
            ("(10) MULE", "SMALR"),
            ("65.1", "65.4"),
            "<=",
        ),
        Claim(
            "smalr_clc",
            "SMALR §3.4, §5, Table 2 (Multi30K), HA",
            "SMALR: cross-lingual consistency at test time adds 3–4 HA on Multi30K (CLC-A, then CLC-C)",
            "text",
            "table2",
            "HA",
            ("SMALR", "SMALR-CLC-A", "SMALR-CLC-C"),
            ("65.0", "68.2", "68.7"),
        ),
        Claim(
            "liwe_languages",
            "SMALR §1, §5, Table 2 (Multi30K), mean of En and De",
            "SMALR: LIWE at a fixed size (S-LIWE) degrades as languages are added",
            "text",
            "table2",
            "En+De",
            ("(10) S-LIWE", "(2) S-LIWE", "(1) S-LIWE"),
            ("70.2 (75.2, 65.2)", "70.9 (75.6, 66.1)", "74.2 (76.3, 72.1)"),
        ),
        Claim(
            "mule_shared_low_resource",
            "MULE Multi30K Discussion, Table 2 (a) vs (d), mean of Fr and Cs",
            "MULE: one shared language branch lifts the low-resource languages (French, Czech) over a model "
            "per language",
            "text",
            "mule_table2",
            "Fr+Cs",
            ("(a) FastText (Baseline)|EmbN", "(d) MULE (Ours)|EmbN+NC+LC+LP (Full)"),
            ("38.4 (43.4, 33.4)", "53.4 (56.4, 50.3)"),
        ),
        Claim(
            "mule_nc_lc_lp",
            "MULE Multi30K Discussion, Table 2 (d), mean of En, De, Fr, Cs",
            "MULE: the neighbourhood constraints (NC), the language classifier (LC) and language-branch "
            "pretraining (LP) each help",
            "text",
            "mule_table2",
            "En+De+Fr+Cs",
            (
                "(d) MULE (Ours)|EmbN",
                "(d) MULE (Ours)|EmbN+NC",
                "(d) MULE (Ours)|EmbN+NC+LC",
                "(d) MULE (Ours)|EmbN+NC+LC+LP (Full)",
            ),
            ("55.8", "56.9", "58.3", "59.0"),
        ),
        Claim(
            "mule_mt_augmentation",
            "MULE Leveraging Machine Translations, Table 4 (Multi30K), mean of En, De, Fr, Cs",
            "MULE: training on machine-translated captions besides the human ones helps",
            "text",
            "mule_table4",
            "m30k:En+m30k:De+m30k:Fr+m30k:Cs",
            ("Human Generated Only|MULE EmbN - Full", "Human Generated + Machine Translations|MULE EmbN - Full"),
            ("59.0", "63.6"),
        ),
        Claim(
            "thesis_objectives",
            "thesis §3.2.2, Table 3.2, mean image-pair R@10 (E&I, H&I, J&I)",
            "Thesis: InfoNCE beats the triplet loss, which beats the hypersphere loss (the variable-margin MMS "
            "losses are best, InfoNCE comparable to them)",
            "speech",
            "speech_table3_2",
            "image.R10",
            ("Hyper", "Triplet", "InfoNCE"),
            ("38.12", "54.05", "57.58"),
        ),
        Claim(
            "thesis_pooling",
            "thesis §3.3, Table 3.3, mean image-pair R@10",
            "Thesis: average pooling beats multi-head self-attention pooling (its best setting, lr .0001)",
            "speech",
            "speech_table3_3",
            "image.R10",
            ("MH Attn. Lr.:0001 D:.1", "Avg. Pool"),
            ("48.52", "57.58"),
        ),
        Claim(
            "thesis_image_anchor",
            "thesis §4.2, Table 4.1, mean image-pair R@10",
            "Thesis: the image anchor keeps image retrieval (slightly up on most pairs)",
            "speech",
            "speech_table4_1",
            "image.R10",
            ("Full-Graph", "Img. Anch."),
            ("57.58", "59.15"),
            "<=",
        ),
        Claim(
            "thesis_image_anchor_cross",
            "thesis §4.2–4.3, Table 4.1, mean cross-lingual R@10 (H&E, J&E, J&H)",
            "Thesis: with the image anchor, cross-lingual retrieval collapses",
            "speech",
            "speech_table4_1",
            "cross.R10",
            ("Img. Anch.", "Full-Graph"),
            ("6.60", "38.55"),
        ),
        Claim(
            "mlmme_german",
            "MLMME §5, Table 1, German sentence→image, mean of r@1/5/10",
            "MLMME: the multilingual models (β = 1, .75) rank images for German sentences better than the "
            "monolingual VSE",
            "mlmme",
            MLMME_TABLE,
            "de:s2i",
            ("VSE", "β=.75", "β=1"),
            ("33.0", "40.6", "43.3"),
        ),
    )


CLAIMS = _claims()
