"""The README stays a front door and stays true: short, its two commands first, its config page the schema's,
and every link of it and of the pages under docs/ leads to a file and heading that exist."""

import re
from pathlib import Path

import pytest

from polyvse.schema_doc import fill_keys, keys_block, markdown

REPO = Path(__file__).resolve().parents[1]
README_MAX_LINES = 250  # what a newcomer reads in ten minutes; results, benchmarks and keys have pages of their own
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def test_the_config_page_lists_every_key_as_the_schema_says():
    page = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    assert keys_block(page) == markdown(REPO / "config" / "schema.yaml"), (
        "docs/config.md's key table is stale: `python -m polyvse.schema_doc --write docs/config.md`"
    )


def test_fill_keys_replaces_the_table_and_fails_without_markers():
    page = "intro\n<!-- config-keys:start -->\nold\n<!-- config-keys:end -->\nend\n"
    assert fill_keys(page, "| new |\n") == "intro\n<!-- config-keys:start -->\n| new |\n<!-- config-keys:end -->\nend\n"
    with pytest.raises(ValueError, match="markers"):
        fill_keys("no markers\n", "| new |\n")


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_one():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```")[1].strip().splitlines()
    assert len(first_block) == 2
    assert first_block[0].startswith("./setup.sh && .venv/bin/snakemake --cores all")
    test_cmd = first_block[1].split("#")[0].strip()
    assert test_cmd in (REPO / ".ci" / "run").read_text()


def test_readme_is_short():
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move the detail to a page under docs/"


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``page`` (outside code blocks)."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {github_slug_of(heading) for heading in re.findall(r"^#+ (.+)$", text, re.M)}


def github_slug_of(heading: str) -> str:
    """Lower case, punctuation but '-' and '_' dropped, each space a '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_anchors_are_github_s():
    assert github_slug_of("The scale config's data stages and pretraining, on 2 cores") == (
        "the-scale-configs-data-stages-and-pretraining-on-2-cores"
    )
    assert github_slug_of("Any-to-any: images, written and spoken captions in one space") == (
        "any-to-any-images-written-and-spoken-captions-in-one-space"
    )


@pytest.mark.parametrize("page", ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))])
def test_every_link_leads_to_a_file_and_heading_that_exist(page):
    source = REPO / page
    text = FENCE.sub("", source.read_text(encoding="utf-8"))
    broken = []
    for m in LINK.finditer(text):
        target = m.group("target")
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # a URL
            continue
        path, _, anchor = target.partition("#")
        linked = (source.parent / path).resolve() if path else source
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{page}: broken links: {', '.join(broken)}"
