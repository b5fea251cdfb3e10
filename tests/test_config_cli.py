"""Config errors through the real command line: ``snakemake -n`` on a bad config fails in
a few lines naming the file, the line or key and the reason, and writes nothing outside
results/, logs/ and .snakemake/."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
DEFAULT = (REPO / "config" / "config.yaml").read_text(encoding="utf-8")
MAX_LINES = 5
NOTES = ("Using workflow specific profile", "Config file ")
"""Snakemake's own notes, printed before the Snakefile runs: every line but these is the config error's."""


def files_under(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file()}


def dry_run(
    tmp_path: Path,
    config_text: str | None = None,
    default_text: str | None = None,
    extra: tuple[str, ...] = (),
    one_line: bool = True,
) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``snakemake -n`` in ``tmp_path/run`` with ``config_text`` as --configfile, or with
    ``default_text`` as the default config/config.yaml of the working directory; the error is one line
    (``one_line``: the README's promise for every error the Snakefile finds)."""
    run = tmp_path / "run"
    run.mkdir()
    args = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-n", "--cores", "1", *extra]
    if config_text is not None:
        (run / "bad.yaml").write_text(config_text, encoding="utf-8")
        args += ["--configfile", "bad.yaml"]
    else:
        (run / "config").mkdir()
        (run / "config" / "config.yaml").write_text(default_text, encoding="utf-8")
    before = files_under(tmp_path)
    t0 = time.perf_counter()
    out = subprocess.run(
        args, cwd=run, capture_output=True, text=True, timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    seconds = time.perf_counter() - t0
    new = files_under(tmp_path) - before
    outside = [p for p in new if p.parts[:2] not in {("run", "results"), ("run", "logs"), ("run", ".snakemake")}]
    assert not outside, f"written outside results/, logs/, .snakemake/: {outside}"
    lines = (out.stdout + out.stderr).strip().splitlines()
    assert out.returncode != 0, "\n".join(lines)
    assert len(lines) <= MAX_LINES, f"{len(lines)} lines in {seconds:.1f} s:\n" + "\n".join(lines[:20])
    if one_line:
        assert len([line for line in lines if not line.startswith(NOTES)]) == 1, "\n".join(lines)
    return out, lines


def with_report(name: str) -> str:
    return DEFAULT.replace(
        "\nreports:\n", f"\nreports:\n  {name}:\n    dataset: m30k\n    rows: [{{name: x, variant: embn_en}}]\n", 1
    )


@pytest.mark.parametrize("name", ["../evil", "sub/table", ".hidden"])
def test_a_report_name_that_is_not_a_file_name(tmp_path, name):
    text = with_report(f"'{name}'")
    line = text.splitlines().index(f"  '{name}':") + 1
    _, lines = dry_run(tmp_path, config_text=text)
    assert any(f"bad.yaml:{line}: config key reports.{name}: bad name {name!r}" in l for l in lines), lines


def test_an_unknown_nested_key_suggests_the_nearest(tmp_path):
    text = DEFAULT.replace("  backend: transfer", "  backnd: transfer", 1)
    line = next(i for i, l in enumerate(text.splitlines(), 1) if l.startswith("  backnd: transfer"))
    _, lines = dry_run(tmp_path, config_text=text)
    assert any(
        f"bad.yaml:{line}: config key translate.backnd: unknown key; did you mean 'backend'?" in l for l in lines
    ), lines


def test_a_duplicated_key_names_file_line_and_key(tmp_path):
    text = DEFAULT + "\ntranslate:\n  backend: googletrans\n"
    first = DEFAULT.splitlines().index("translate:") + 1
    line = len(DEFAULT.splitlines()) + 2
    _, lines = dry_run(tmp_path, config_text=text)
    assert any(f"bad.yaml:{line}: duplicate key 'translate' (first at line {first})" in l for l in lines), lines


def test_a_cross_reference_error_is_located(tmp_path):
    text = DEFAULT.replace("  embn_en: {model: embn, dataset: m30k,", "  embn_en: {model: embn, dataset: m31k,", 1)
    assert text != DEFAULT
    line = next(i for i, l in enumerate(text.splitlines(), 1) if "dataset: m31k" in l)
    _, lines = dry_run(tmp_path, config_text=text)
    assert any(f"bad.yaml:{line}: config key variants.embn_en.dataset: unknown dataset 'm31k'" in l for l in lines), (
        lines
    )


def test_results_dir_climbing_out_is_refused(tmp_path):
    _, lines = dry_run(tmp_path, config_text=DEFAULT, extra=("--config", "results_dir=../outside"))
    assert any("--config: config key results_dir: '../outside' climbs with '..'" in l for l in lines), lines


def test_a_yaml_syntax_error_in_the_default_config_names_file_and_line(tmp_path):
    text = DEFAULT.replace("seed: 0", "seed: [0", 1)
    assert text != DEFAULT
    _, lines = dry_run(tmp_path, default_text=text)
    assert any("config/config.yaml:" in l and "YAML syntax error" in l for l in lines), lines


def test_a_yaml_syntax_error_in_a_configfile_fails_short(tmp_path):
    # snakemake parses --configfile itself, before the Snakefile runs: its message is short
    # but names neither file nor line (snakemake.common.configfile._load_configfile)
    _, lines = dry_run(tmp_path, config_text="seed: [0\nresults_dir: x\n", one_line=False)
    assert any("not valid JSON or YAML" in l for l in lines), lines


@pytest.mark.parametrize(
    "entries, key",
    [(("seed=1", "seed=2"), "seed"), (("training={epochs: 3, epochs: 4}",), "training")],
)
def test_a_key_given_twice_in_config_values_is_an_error(tmp_path, entries, key):
    """Snakemake keeps the last of two --config values of one key, or of one key inside a value, silently."""
    _, lines = dry_run(tmp_path, config_text=DEFAULT, extra=("--config", *entries))
    assert any(l.startswith(f"--config: config key {key}: ") and "silently lost" in l for l in lines), lines


def test_config_entries_are_read_from_the_command_line_and_mappings_merge():
    from polyvse.config_files import check_config_arguments, config_arguments
    from polyvse.errors import ConfigFileError

    argv = ["-n", "--configfile", "x.yaml", "--config", "a=1", "b={c: 2}", "--cores", "1", "-C", "b={d: 3}"]
    assert config_arguments(argv) == ["a=1", "b={c: 2}", "b={d: 3}"]
    check_config_arguments(config_arguments(argv))  # b's two mappings set other keys: merged, as snakemake does
    with pytest.raises(ConfigFileError, match="config key b.c: given twice"):
        check_config_arguments(["b={c: 2}", "b={c: 3}"])
