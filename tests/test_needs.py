"""Only what a row needs (polyvse.needs): real data without MT or dictionaries runs every human-only row."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from polyvse.needs import mt_available, prune_to_available, variant_mt_needs

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
FIXTURE_DIR = REPO / "tests" / "fixtures" / "multi30k"
MT_RULES = {"dictionaries", "augment_captions", "query_translations", "mt_quality", "references"}


def real_data_config(root: Path) -> dict:
    """SMALR Table 2's rows on a Multi30K checkout, with the offline backend and no dictionaries."""
    config = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    config["datasets"]["m30k"] = {
        "adapter": "multi30k",
        "langs": ["en", "de", "fr", "cs", "zh", "ja", "ar", "af", "ko", "ru"],
        "multi30k": {"root": str(root), "images_dir": str(root / "images")},
    }
    config["translate"] = {"backend": "dictionary"}
    return config


def test_synthetic_data_keep_every_row():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.setdefault("translate", {}).setdefault("backend", "dictionary")
    pruned, lines = prune_to_available(config)
    assert lines == [] and pruned == config and mt_available(config, "m30k")


def test_rows_that_need_mt_are_named_with_their_reason(tmp_path):
    config = real_data_config(tmp_path)
    assert not mt_available(config, "m30k")
    assert variant_mt_needs(config, "embn_en") == []
    assert variant_mt_needs(config, "embn_en", "to_en") == ["protocol to_en translates the queries"]
    assert "trains on MT-augmented captions" in variant_mt_needs(config, "embn_all_mt")
    pruned, lines = prune_to_available(config)
    rows = [r["name"] for r in pruned["reports"]["table2"]["rows"]]
    assert rows == ["EmbN", "EmbN (shared)"]
    assert any("Trans. to En" in line and "protocol to_en translates the queries" in line for line in lines)
    assert "Left out of this run" in pruned["reports"]["table2"]["notes"][-1]
    assert config["reports"]["table2"]["rows"][0]["name"] == "Trans. to En"  # the input is not changed


def test_a_multi30k_config_without_dictionaries_plans_no_mt_job(tmp_path):
    spec = importlib.util.spec_from_file_location("make_multi30k_fixture", FIXTURE_DIR / "make_fixture.py")
    fixture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixture)
    root = fixture.write_fixture(tmp_path / "multi30k")
    work = tmp_path / "run"
    work.mkdir()
    (work / "config.yaml").write_text(yaml.safe_dump(real_data_config(root)))
    done = subprocess.run(
        [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--configfile", "config.yaml", "-n", "--cores", "1"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    jobs = set(re.findall(r"^rule (\w+):", done.stdout, re.M)) | set(
        re.findall(r"^localrule (\w+):", done.stdout, re.M)
    )
    assert not jobs & MT_RULES, sorted(jobs & MT_RULES)
    assert {"dataset", "train", "table"} <= jobs  # train evaluates directly; no MT, no other protocol
    assert "train_embn_en" in out or "variant=embn_en" in out
    assert "embn_all_mt" not in done.stdout
    # said before any job, with the way to bring the rows back
    assert "no machine translation or dictionaries for this data; left out of this run" in done.stderr
    assert "reports.table2 row 'Trans. to En'" in done.stderr and "translate.dictionaries" in done.stderr
