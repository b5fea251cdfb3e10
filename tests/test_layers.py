"""The library's import graph runs downwards through layers (docs/architecture.md, "The library, by layer").

An import from a package to one in the same or a higher layer is a violation. The violations the code has
today are listed in KNOWN_EXCEPTIONS, file by file: a new one fails this test, and so does a listed one that
was removed (take it off the list, so that it cannot come back unnoticed).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "errors"),
    ("runlock", "limits"),
    ("io", "stopping", "optim"),
    ("logs", "vector_index"),
    ("config", "config_migration", "schema_doc", "run_plan"),
    ("needs",),
    ("text",),
    ("data", "features"),
    ("speech", "translate"),
    ("align", "losses"),
    ("models",),
    ("evaluate",),
    ("train",),
    ("families",),
    ("report", "config_files", "query"),
    ("serve",),
    ("cli", "plan"),
)
LAYER = {package: i for i, packages in enumerate(LAYERS) for package in packages}


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported(path: Path) -> list[str]:
    """The polyvse modules ``path`` imports, at its top or inside functions."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("polyvse"):
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("polyvse")]
    return found


def violations() -> set[tuple[str, str]]:
    found = set()
    for path in sorted((REPO / "polyvse").rglob("*.py")):
        rel = path.relative_to(REPO)
        own = package_of(".".join(rel.with_suffix("").parts))
        for target in imported(path):
            package = package_of(target)
            assert package in LAYER, f"{rel}: package polyvse.{package} has no layer in tests/test_layers.py"
            if package != own and LAYER[package] >= LAYER[own]:
                found.add((str(rel), package))
    return found


def test_every_package_has_a_layer():
    packages = {
        p.stem if p.is_file() else p.name
        for p in (REPO / "polyvse").iterdir()
        if (p.suffix == ".py" or (p / "__init__.py").exists())
    }
    assert packages == set(LAYER)


def test_no_upward_or_sideways_import():
    found = violations()
    assert not found, f"imports against the layers of docs/architecture.md: {sorted(found)}"


def test_a_sideways_import_is_found(tmp_path, monkeypatch):
    """The check itself: a package importing one of its own layer is reported."""
    fake = tmp_path / "polyvse" / "data"
    fake.mkdir(parents=True)
    (fake / "x.py").write_text("from polyvse.features.image import read_ids\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert violations() == {("polyvse/data/x.py", "features")}


def test_query_reads_a_trained_model_without_the_training_code():
    """`polyvse query` loads any family through polyvse.models.trained: what it needs of a model is the
    model, not how it was trained."""
    assert not [m for m in imported(REPO / "polyvse" / "query.py") if package_of(m) == "train"]


def test_the_synthetic_data_s_modules_import_each_other_without_a_circle():
    """The scene, the lexicon, a caption's plan and the languages' realisers build on each other one way: the
    lexicon takes the realisers' glossaries as an argument (lexicon.use_glossaries) instead of importing them."""
    package = REPO / "polyvse" / "data" / "synthetic"
    modules = {
        ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): p for p in package.rglob("*.py")
    }

    def targets(path: Path) -> set[str]:
        """What ``path`` imports of the package: ``from pkg import module`` imports that module."""
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules:
                found |= {
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                    for a in node.names
                }
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in modules}
        return found

    graph = {m: targets(p) - {m} for m, p in modules.items()}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph[start])

    circles = sorted(m for m in graph if reaches(m, m, {m}))
    assert not circles, f"modules in an import circle: {circles}"


def test_no_module_of_the_library_is_over_800_lines():
    """A module over 800 lines holds more than one idea: split it (as data/synthetic/ was)."""
    long = {
        str(path.relative_to(REPO)): n
        for path in (REPO / "polyvse").rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 800
    }
    assert not long, long


def test_code_names_no_date_or_issue_number():
    """History (dates, issue numbers) belongs in commits; the code says why."""
    pattern = re.compile(r"20[0-9]{2}-[01][0-9]-[0-3][0-9]|issue [0-9]+")
    found = [
        f"{path.relative_to(REPO)}:{i}"
        for folder in ("polyvse", "rules", "workflow_scripts")
        for path in sorted((REPO / folder).rglob("*"))
        if path.suffix in (".py", ".smk")
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, found
