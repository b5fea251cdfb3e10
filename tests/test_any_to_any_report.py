"""The any-to-any report (polyvse/report/any_to_any.py, workflow_scripts/make_any_to_any.py) on hand-made
evaluations: a joint model (image, text-en, speech-en: six ordered pairs, three seeds), a text-only model
(image ↔ text-en, three seeds) and a speech-only one (image ↔ speech-en, two seeds)."""

from __future__ import annotations

import logging
import math
import runpy
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from polyvse.report.any_to_any import (
    any_to_any_findings,
    any_to_any_markdown,
    any_to_any_table,
    ordered_views,
    pair_verdict,
)

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ["query", "target", "r1", "r5", "r10", "mr", "medr", "n"]
I, T, S = "image", "text-en", "speech-en"


def frame(mr: dict[tuple[str, str], float]) -> pd.DataFrame:
    """An evaluation with the given mR per pair (R@1 = mR − 10, R@10 = mR + 10), listed in a scrambled order."""
    rows = [(q, t, m - 10, m, m + 10, m, 2.0, 100) for (q, t), m in reversed(list(mr.items()))]
    return pd.DataFrame(rows, columns=COLUMNS)


def seeds(per_pair: dict[tuple[str, str], list[float]]) -> list[pd.DataFrame]:
    """One frame per seed from pair → mR of each seed."""
    n = len(next(iter(per_pair.values())))
    return [frame({p: v[k] for p, v in per_pair.items()}) for k in range(n)]


JOINT = {
    (I, T): [50, 52, 54],  # mean 52 ± 2 vs text 41 ± 1: helps (+11)
    (T, I): [50, 52, 54],  # 52 ± 2 vs 53 ± 2: within noise (−1)
    (I, S): [30, 30, 30],  # 30 ± 0 vs speech 36 ± 1.41: hurts (−6)
    (S, I): [30, 31, 32],  # 31 ± 1 vs 31 ± 1.41: within noise (0)
    (T, S): [20, 22, 24],  # joint only
    (S, T): [10, 10, 10],  # joint only
}
TEXT = {(I, T): [40, 41, 42], (T, I): [51, 53, 55]}
SPEECH = {(I, S): [35, 37], (S, I): [30, 32]}
LABELS = ["joint", "text", "speech"]


def models() -> list[tuple[str, list[pd.DataFrame]]]:
    return [("joint", seeds(JOINT)), ("text", seeds(TEXT)), ("speech", seeds(SPEECH))]


@pytest.fixture
def table() -> pd.DataFrame:
    return any_to_any_table(models(), ["en"])


def row(table: pd.DataFrame, q: str, t: str) -> pd.Series:
    hit = table[(table["query"] == q) & (table["target"] == t)]
    assert len(hit) == 1
    return hit.iloc[0]


def test_ordered_views_image_text_speech_then_others():
    views = ["speech-hi", "other", "text-hi", "image", "speech-en", "text-en", "alpha"]
    assert ordered_views(views, ["en", "hi"]) == [
        "image",
        "text-en",
        "text-hi",
        "speech-en",
        "speech-hi",
        "alpha",
        "other",
    ]


def test_rows_and_columns(table):
    assert list(zip(table["query"], table["target"])) == [(I, T), (I, S), (T, I), (T, S), (S, I), (S, T)]
    stats = [f"{m} {c}" for m in LABELS for c in ("R@1", "R@10", "mR", "mR std", "seeds")]
    extra = [f"{c} vs {m}" for m in LABELS[1:] for c in ("Δ mR", "verdict")]
    assert list(table.columns) == ["query", "target", *stats, *extra]


def test_means_std_and_seeds(table):
    r = row(table, I, T)
    assert r["joint mR"] == pytest.approx(52)
    assert r["joint R@1"] == pytest.approx(42)
    assert r["joint R@10"] == pytest.approx(62)
    assert r["joint mR std"] == pytest.approx(2)
    assert r["joint seeds"] == 3
    assert r["text mR"] == pytest.approx(41)
    assert r["text mR std"] == pytest.approx(1)
    r = row(table, I, S)
    assert r["speech mR std"] == pytest.approx(math.sqrt(2))
    assert r["speech seeds"] == 2
    assert r["joint mR std"] == pytest.approx(0)


def test_missing_pairs_are_nan_and_no_verdict(table):
    r = row(table, I, S)
    assert math.isnan(r["text mR"]) and math.isnan(r["text R@1"]) and pd.isna(r["text seeds"])
    assert math.isnan(r["Δ mR vs text"])
    assert r["verdict vs text"] == ""
    r = row(table, T, S)
    assert math.isnan(r["Δ mR vs text"]) and math.isnan(r["Δ mR vs speech"])
    assert r["verdict vs text"] == r["verdict vs speech"] == ""


def test_gaps_and_verdicts(table):
    assert row(table, I, T)["Δ mR vs text"] == pytest.approx(11)
    assert row(table, I, T)["verdict vs text"] == "helps"
    assert row(table, T, I)["Δ mR vs text"] == pytest.approx(-1)
    assert row(table, T, I)["verdict vs text"] == "within noise"
    assert row(table, I, S)["Δ mR vs speech"] == pytest.approx(-6)
    assert row(table, I, S)["verdict vs speech"] == "hurts"
    assert row(table, S, I)["Δ mR vs speech"] == pytest.approx(0)
    assert row(table, S, I)["verdict vs speech"] == "within noise"


def test_pair_verdict_noise_is_the_larger_std():
    assert pair_verdict(1.5, 1.0, 2.0, 3, 3) == "within noise"
    assert pair_verdict(2.5, 1.0, 2.0, 3, 3) == "helps"
    assert pair_verdict(-2.5, 2.0, 1.0, 3, 3) == "hurts"
    assert pair_verdict(50.0, 0.0, 0.0, 1, 3) == "one seed: no verdict"


def test_one_seed_gives_no_verdict():
    one = [("joint", seeds({p: v[:1] for p, v in JOINT.items()})), ("text", seeds(TEXT))]
    table = any_to_any_table(one, ["en"])
    r = row(table, I, T)
    assert r["joint seeds"] == 1 and math.isnan(r["joint mR std"])
    assert r["Δ mR vs text"] == pytest.approx(50 - 41)
    assert r["verdict vs text"] == "one seed: no verdict"
    assert row(table, I, S)["verdict vs text"] == ""
    findings = any_to_any_findings(table, ["joint", "text"])
    assert findings[0].startswith("Joint training vs text: 2 shared pairs, one seed: no verdict.")
    md = any_to_any_markdown(table, ["joint", "text"], "One seed", [], findings)
    line = next(l for l in md.splitlines() if l.startswith(f"| {I} | {T} |"))
    assert "50.0 |" in line and "50.0 ±" not in line


def test_findings_counts_match_the_table(table):
    findings = any_to_any_findings(table, LABELS)
    assert len(findings) == 3
    assert findings[0] == (
        "Joint training vs text: helps 1 of 2 shared pairs, hurts 0, within noise 1. "
        f"Δ mR: largest gain {I} → {T} (+11.0 mR), largest loss {T} → {I} (-1.0 mR)."
    )
    assert findings[1] == (
        "Joint training vs speech: helps 0 of 2 shared pairs, hurts 1, within noise 1. "
        f"Δ mR: no gain, largest loss {I} → {S} (-6.0 mR)."
    )
    assert findings[2] == (
        f"Only joint has 2 pairs (text↔speech): mean mR 16.0, from 10.0 ({S} → {T}) to 22.0 ({T} → {S})."
    )


def test_markdown(table):
    findings = any_to_any_findings(table, LABELS)
    md = any_to_any_markdown(table, LABELS, "Any-to-any retrieval", ["A note."], findings)
    lines = md.splitlines()
    assert lines[0] == "**Any-to-any retrieval**"
    header = lines[2]
    assert header.startswith("| Query | Target | joint R@1 | joint R@10 | joint mR | text R@1 |")
    assert header.endswith("| Δ mR vs text | vs text | Δ mR vs speech | vs speech |")
    assert len(lines[3].strip("|").split("|")) == len(header.strip("| ").split(" | ")) == 2 + 3 * 3 + 2 * 2
    line = next(l for l in lines if l.startswith(f"| {I} | {S} |"))
    cells = [c.strip() for c in line.strip("| ").split(" | ")]
    assert cells == [I, S, "20.0", "40.0", "30.0 ± 0.0", "–", "–", "–", "26.0", "46.0", "36.0 ± 1.4"] + [
        "–",
        "–",
        "-6.0",
        "hurts",
    ]
    assert "±" in md
    assert "seeds per model: joint 3, text 3, speech 2" in md
    assert "\n\nA note.\n" in md
    assert md.rstrip().endswith("- " + findings[-1])
    assert "Findings:" in md


def test_seeds_that_disagree_on_pairs_raise():
    text = seeds(TEXT)
    text[1] = text[1][text[1]["query"] == I]
    with pytest.raises(ValueError, match=r"'text'.*seed 1.*disagree.*text-en → image"):
        any_to_any_table([("joint", seeds(JOINT)), ("text", text)], ["en"])


def test_missing_column_raises():
    speech = seeds(SPEECH)
    speech[0] = speech[0].drop(columns="mr")
    with pytest.raises(ValueError, match=r"'speech'.*seed 0.*lacks column\(s\) mr"):
        any_to_any_table([("joint", seeds(JOINT)), ("speech", speech)], ["en"])


def test_repeated_labels_and_no_frames_raise():
    with pytest.raises(ValueError, match="repeat"):
        any_to_any_table([("joint", seeds(JOINT)), ("joint", seeds(TEXT))], ["en"])
    with pytest.raises(ValueError, match="no evaluation"):
        any_to_any_table([("joint", seeds(JOINT)), ("text", [])], ["en"])


def test_rule_script(tmp_path, monkeypatch):
    """The Snakemake script reads every seed's TSV, writes both outputs and adds the chance note."""
    import polyvse.logs

    monkeypatch.setattr(polyvse.logs, "exit_on_sigterm", lambda: None)  # no SIGTERM handler in the test process
    monkeypatch.setenv("TQDM_MININTERVAL", "10")
    params_models = []
    for label, frames in models():
        paths = []
        for k, ev in enumerate(frames):
            p = tmp_path / f"{label}.s{k}.tsv"
            ev.to_csv(p, sep="\t", index=False)
            paths.append(str(p))
        params_models.append({"name": label, "kind": "joint", "evals": paths})  # ordered rows already
    smk = SimpleNamespace(
        input=SimpleNamespace(evals=[p for m in params_models for p in m["evals"]]),
        params=SimpleNamespace(
            models=params_models, langs=["en"], caption="Any-to-any", notes=["Extra note."], dataset="toy"
        ),
        output=SimpleNamespace(tsv=str(tmp_path / "any_to_any.tsv"), md=str(tmp_path / "any_to_any.md")),
        log=[str(tmp_path / "log.txt")],
    )
    level = logging.getLogger().level
    try:
        runpy.run_path(str(ROOT / "workflow_scripts" / "make_any_to_any.py"), init_globals={"snakemake": smk})
    finally:
        logging.getLogger().setLevel(level)
    out = pd.read_csv(smk.output.tsv, sep="\t", keep_default_na=False)
    assert len(out) == 6 and out.loc[0, "joint mR"] == pytest.approx(52)
    assert out.loc[0, "verdict vs text"] == "helps"
    md = Path(smk.output.md).read_text(encoding="utf-8")
    assert "Dataset toy: 100 test images; chance R@10 = 10.0 %." in md
    assert "\n\nExtra note.\n" in md and "Joint training vs text: helps 1 of 2" in md
