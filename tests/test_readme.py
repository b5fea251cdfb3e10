"""The README stays true: its config table is the schema's, its commands exist."""

from pathlib import Path

from polyvse.schema_doc import markdown

REPO = Path(__file__).resolve().parents[1]


def test_readme_lists_every_config_key_as_the_schema_says():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start, end = "<!-- config-keys:start -->\n", "<!-- config-keys:end -->"
    block = readme[readme.index(start) + len(start) : readme.index(end)]
    assert block == markdown(REPO / "config" / "schema.yaml"), (
        "README's config table is stale: regenerate it with `python -m polyvse.schema_doc`"
    )


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_one():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```")[1].strip().splitlines()
    assert len(first_block) == 2
    assert first_block[0].startswith("./setup.sh && .venv/bin/snakemake --cores all")
    test_cmd = first_block[1].split("#")[0].strip()
    assert test_cmd in (REPO / ".ci" / "run").read_text()
