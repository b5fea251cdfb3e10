"""The findings report (polyvse.report.findings): replicas, values and verdicts by hand."""

from __future__ import annotations

import copy
import json
import math

import pandas as pd

from polyvse.config import variant_settings
from polyvse.speech.settings import speech_variant_settings
from polyvse.plan import add_findings_replicas, add_replica, completed_plan
from polyvse.report.findings import (
    Claim,
    active_claims,
    findings_markdown,
    findings_plan,
    findings_table,
    hit_ceiling,
    plan_files,
    seed_hit_ceiling,
    epochs_cell,
    seed_groups,
    verdict,
)
from polyvse.train.mlmme_runs import run_settings

CLAIM = Claim("la_hem", "paper §1, Table 2", "HEM beats LA", "text", "t", "A", ("LA", "HEM"), ("61.6", "64.0"))


def config(seeds=3):
    return {
        "seed": 5,
        "findings": {"seeds": seeds},
        "datasets": {"d": {"langs": ["en", "de"], "adapter": "synthetic", "synthetic": {"profile": "m30k"}}},
        "variants": {
            "la": {"model": "la", "dataset": "d", "train_langs": ["en", "de"]},
            "hem": {"model": "hem", "dataset": "d", "train_langs": ["en", "de"]},
            "other": {"model": "embn", "dataset": "d", "train_langs": ["en"]},
            "infonce": {"model": "speech", "dataset": "d"},
            "mlmme": {"model": "mlmme", "dataset": "d", "train_langs": ["en", "de"]},
        },
        "reports": {
            "t": {
                "layout": "smalr",
                "dataset": "d",
                "rows": [
                    {"name": "LA", "variant": "la"},
                    {"name": "HEM", "variant": "hem"},
                    {"name": "EmbN", "variant": "other"},
                ],
            },
            "mlmme_table1": {"layout": "mlmme", "rows": [{"name": "MLMME", "variant": "mlmme"}]},
        },
        "speech": {},
        "mlmme": {
            "betas": [1.0, 0.75],
            "model": {},
            "training": {},
            "contrastive": "none",
            "n_contrastive": 0,
            "contrastive_pool": "batch",
            "margin": 0.1,
            "reduction": "sum",
        },
    }


def test_verdicts_by_hand():
    assert verdict([[1.0, 1.2, 0.8], [2.0, 2.2, 1.8]]) == ("agrees", ["holds"])  # gap 1 > spread 0.2
    assert verdict([[2.0, 2.2, 1.8], [1.0, 1.2, 0.8]]) == ("disagrees", ["reversed"])
    assert verdict([[1.0, 1.5, 0.5], [1.2, 1.7, 0.7]]) == ("within noise", ["within noise"])  # gap .2 < .5
    assert verdict([[1.0, 1.5, 0.5], [1.2, 1.7, 0.7]], "<=") == ("agrees", ["holds"])  # not reversed: on par
    assert verdict([[1.0, 1.2, 0.8], [2.0, 2.2, 1.8], [1.9, 2.3, 1.5]]) == ("within noise", ["holds", "within noise"])
    assert verdict([[1.0], [2.0]]) == ("one seed: no verdict", [])


def test_replicas_train_the_compared_rows_with_other_seeds_and_nothing_else():
    cfg = config()
    mlmme_claim = Claim("de", "MLMME", "β helps", "mlmme", "mlmme_table1", "de:s2i", ("VSE", "β=1"), ("1", "2"))
    added = add_findings_replicas(cfg, [CLAIM, mlmme_claim])
    assert added["text"] == ["la-s1", "hem-s1", "la-s2", "hem-s2"] and "other-s1" not in cfg["variants"]
    assert [variant_settings(cfg, v)["seed"] for v in ("la", "la-s1", "la-s2", "other")] == [5, 6, 7, 5]
    same = {k: v for k, v in variant_settings(cfg, "la-s2").items() if k != "seed"}
    assert same == {k: v for k, v in variant_settings(cfg, "la").items() if k != "seed"}
    assert added["mlmme"] == ["vse_de-s1", "b100-s1", "vse_de-s2", "b100-s2"]
    assert run_settings(cfg, "mlmme", "b100-s2")["seed"] == 7 and run_settings(cfg, "mlmme", "b100-s2")["beta"] == 1.0
    speech = copy.deepcopy(cfg)
    speech["reports"]["s"] = {"layout": "speech", "rows": [{"name": "InfoNCE", "variant": "infonce"}]}
    add_findings_replicas(speech, [Claim("x", "thesis", "x", "speech", "s", "image.R10", ("InfoNCE",), ("1",))])
    assert speech_variant_settings(speech, "infonce-s1")["seed"] == 6


def test_a_claim_whose_rows_the_config_lacks_is_left_out():
    cfg = config()
    assert active_claims(cfg, [CLAIM]) == [CLAIM]
    cfg["reports"]["t"]["rows"] = cfg["reports"]["t"]["rows"][1:]  # no LA row
    assert active_claims(cfg, [CLAIM]) == []
    assert active_claims(config(seeds=0), [CLAIM]) == []


def write_eval(root, variant, m_r, best_epoch=8):
    path = root / f"{variant}.tsv"
    pd.DataFrame(
        [{"lang": "en", "test_source": "human", "mR": m_r[0]}, {"lang": "de", "test_source": "human", "mR": m_r[1]}]
    ).to_csv(path, sep="\t", index=False)
    (root / f"{variant}.json").write_text(
        json.dumps({"params_train": 10, "params_test": 5, "best_epoch": best_epoch, "epochs_run": 8})
    )


def test_findings_table_reads_every_seed_through_the_table_code(tmp_path):
    cfg = config()
    add_findings_replicas(cfg, [CLAIM])
    plan = findings_plan(completed_plan(cfg), "results", [CLAIM])
    # A = mean of en, de; LA seeds 10, 11, 12; HEM seeds 20, 21, 22
    for k, suffix in enumerate(["", "-s1", "-s2"]):
        write_eval(tmp_path, f"la{suffix}", (10.0 + k - 1, 10.0 + k + 1), best_epoch=8 if k else 5)
        write_eval(tmp_path, f"hem{suffix}", (20.0 + k - 2, 20.0 + k + 2))
    files = plan_files(plan)
    assert "results/d/eval/hem-s2.direct.tsv" in files and "results/d/models/la-s1/params.json" in files

    def read(path):
        name = path.split("/")[-2] if path.endswith(".json") else path.split("/")[-1].split(".")[0]
        if path.endswith(".json"):
            return json.loads((tmp_path / f"{name}.json").read_text())
        return pd.read_csv(tmp_path / f"{name}.tsv", sep="\t", keep_default_na=False)

    table = findings_table(plan, read).set_index("row")
    assert table.loc["LA", "values"] == "10.00 11.00 12.00" and table.loc["HEM", "mean"] == 21.0
    assert table.loc["LA", "std"] == 1.0 and table.loc["HEM", "paper"] == "64.0"
    assert set(table["verdict"]) == {"agrees"}
    text = findings_markdown(plan, table.reset_index())
    assert "1 agrees" in text and "| HEM | 64.0 | 21.00 ± 1.00 | 20.00 21.00 22.00 |" in text
    assert not math.isnan(table.loc["LA", "std"])
    # params.json without stop_reason (older outputs, a fixed budget): best/run as before, and a seed whose
    # best epoch is its last counts as one at the ceiling: HEM in all three seeds, LA in two of three
    assert table.loc["HEM", "best_epochs"] == "8/8 8/8 8/8" and table.loc["LA", "best_epochs"] == "5/8 8/8 8/8"
    assert "1 of the 1 claims compare a row that hit its epochs ceiling in 2 or more of its 3 seeds" in text
    assert "Hit the epochs ceiling in 2 or more seeds: LA, HEM." in text
    assert "| HEM | 64.0 | 21.00 ± 1.00 | 20.00 21.00 22.00 | 8/8 8/8 8/8 |" in text
    sectioned = table.reset_index().assign(row=lambda t: "(a) base|" + t["row"])
    assert "| (a) base · HEM | 64.0 |" in findings_markdown(plan, sectioned)


def test_best_run_tells_a_patience_stop_from_a_ceiling_stop(tmp_path):
    """A training's stop_reason (params.json): patience renders best/run, ceiling marks it; a claim is
    flagged only for a row at the ceiling in two or more of its three seeds."""
    cfg = config()
    add_findings_replicas(cfg, [CLAIM])
    plan = findings_plan(completed_plan(cfg), "results", [CLAIM])
    # LA converged in every seed; HEM hit its ceiling in seeds 0 and 2 (seed 1 converged)
    runs = {
        "la": {"best_epoch": 12, "epochs_run": 16, "stop_reason": "patience"},
        "la-s1": {"best_epoch": 9, "epochs_run": 13, "stop_reason": "patience"},
        "la-s2": {"best_epoch": 36, "epochs_run": 40, "stop_reason": "patience"},
        "hem": {"best_epoch": 40, "epochs_run": 40, "stop_reason": "ceiling"},
        "hem-s1": {"best_epoch": 20, "epochs_run": 24, "stop_reason": "patience"},
        "hem-s2": {"best_epoch": 38, "epochs_run": 40, "stop_reason": "ceiling"},
    }

    def read(path):
        if path.endswith(".json"):
            return {"params_train": 10, "params_test": 5, **runs[path.split("/")[-2]]}
        return pd.DataFrame(
            [{"lang": "en", "test_source": "human", "mR": 10.0}, {"lang": "de", "test_source": "human", "mR": 12.0}]
        )

    table = findings_table(plan, read).set_index("row")
    assert table.loc["LA", "best_epochs"] == "12/16 9/13 36/40"
    assert table.loc["HEM", "best_epochs"] == "40/40ᶜ 20/24 38/40ᶜ"
    text = findings_markdown(plan, table.reset_index())
    assert "| LA | 61.6 |" in text and "| 12/16 9/13 36/40 |" in text and "| 40/40ᶜ 20/24 38/40ᶜ |" in text
    assert "1 of the 1 claims compare a row that hit its epochs ceiling in 2 or more of its 3 seeds" in text
    assert "Hit the epochs ceiling in 2 or more seeds: HEM." in text
    # one seed at the ceiling is not the row's budget: no flag
    runs["hem-s2"] = {"best_epoch": 30, "epochs_run": 34, "stop_reason": "patience"}
    text = findings_markdown(plan, findings_table(plan, read))
    assert "0 of the 1 claims compare a row that hit its epochs ceiling" in text and "Hit the epochs" not in text


def test_ceiling_seeds_by_hand():
    assert seed_hit_ceiling("8/8ᶜ") and seed_hit_ceiling("5/9+8/8ᶜ") and seed_hit_ceiling("8/8")
    assert not seed_hit_ceiling("5/9") and not seed_hit_ceiling("5/9+3/7")
    assert hit_ceiling(["8/8ᶜ", "5/9", "7/8ᶜ"]) and not hit_ceiling(["8/8ᶜ", "5/9", "7/11"])
    assert hit_ceiling(["8/8ᶜ"]) and not hit_ceiling([])  # one seed: that seed
    # a schedule run to its end stopped at a rate of zero: its best epoch may be its last
    assert not seed_hit_ceiling("30/30ˢ") and not seed_hit_ceiling("27/30ˢ+30/30ˢ")
    assert seed_hit_ceiling("30/30ˢ+8/8ᶜ") and not hit_ceiling(["30/30ˢ", "29/30ˢ", "30/30ˢ"])
    assert epochs_cell({"best_epoch": 30, "epochs_run": 30, "stop_reason": "schedule"}) == "30/30ˢ"
    assert epochs_cell({"best_epoch": 8, "epochs_run": 8, "stop_reason": "ceiling"}) == "8/8ᶜ"


def test_the_default_config_tests_every_claim_of_the_list():
    import yaml
    from pathlib import Path

    from polyvse.report.findings import CLAIMS

    cfg = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "config.yaml").read_text())
    cfg["findings"] = {"seeds": 3}
    assert [c.key for c in active_claims(cfg)] == [c.key for c in CLAIMS]
    assert all(len(c.rows) == len(c.paper) >= 2 for c in CLAIMS)


def test_seed_groups_are_a_variant_and_its_replicas_differing_in_the_seed_alone():
    cfg = {
        "seed": 0,
        "findings": {"seeds": 3},
        "variants": {"a": {"model": "embn", "dataset": "m30k"}, "b": {"model": "embn", "dataset": "m30k"}},
    }
    add_replica(cfg, "a", 1), add_replica(cfg, "a", 2), add_replica(cfg, "b", 1)
    cfg["variants"]["b-s2"] = {"model": "mule", "dataset": "m30k", "seed": 2}  # a variant of its own
    assert seed_groups(cfg) == {"a": ["a", "a-s1", "a-s2"]}
    assert seed_groups({**cfg, "findings": {"seeds": 1}}) == {}
