"""The library's import graph runs downwards through layers (docs/architecture.md, "The library, by layer").

An import from a package to one in the same or a higher layer is a violation. The violations the code has
today are listed in KNOWN_EXCEPTIONS, file by file: a new one fails this test, and so does a listed one that
was removed (take it off the list, so that it cannot come back unnoticed).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "errors"),
    ("runlock",),
    ("io", "stopping", "schema_doc", "optim"),
    ("logs",),
    ("config", "config_migration"),
    ("needs",),
    ("data", "text", "translate", "features", "speech"),
    ("align", "losses"),
    ("models",),
    ("train", "evaluate"),
    ("report", "config_files", "query"),
    ("cli",),
)
LAYER = {package: i for i, packages in enumerate(LAYERS) for package in packages}

# (importing file, imported package): the upward and sideways imports of today, to be removed
KNOWN_EXCEPTIONS: frozenset[tuple[str, str]] = frozenset(
    {
        ("polyvse/config.py", "text"),
        ("polyvse/data/adapters.py", "speech"),
        ("polyvse/data/stats.py", "text"),
        ("polyvse/losses/mclm.py", "models"),
        ("polyvse/speech/evaluate.py", "evaluate"),
        ("polyvse/speech/objectives.py", "losses"),
        ("polyvse/speech/report.py", "evaluate"),
        ("polyvse/speech/run.py", "features"),
        ("polyvse/speech/train.py", "train"),
        ("polyvse/speech/utterances.py", "data"),
        ("polyvse/text/fasttext_vectors.py", "translate"),
        ("polyvse/text/reduction.py", "translate"),
        ("polyvse/train/mlmme.py", "evaluate"),
        ("polyvse/train/run.py", "evaluate"),
        ("polyvse/train/translator.py", "evaluate"),
        ("polyvse/translate/dictionary.py", "text"),
        ("polyvse/translate/quality.py", "text"),
        ("polyvse/translate/stage.py", "data"),
        ("polyvse/translate/transfer.py", "text"),  # as dictionary.py: MT output tokenised as the models see it
    }
)


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def violations() -> set[tuple[str, str]]:
    found = set()
    for path in sorted((REPO / "polyvse").rglob("*.py")):
        rel = path.relative_to(REPO)
        own = package_of(".".join(rel.with_suffix("").parts))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("polyvse"):
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("polyvse")]
            else:
                continue
            for target in targets:
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


def test_no_new_upward_or_sideways_import():
    new = violations() - KNOWN_EXCEPTIONS
    assert not new, f"imports against the layers of docs/architecture.md: {sorted(new)}"


def test_the_known_exceptions_are_still_there():
    gone = KNOWN_EXCEPTIONS - violations()
    assert not gone, f"no longer needed: take {sorted(gone)} off KNOWN_EXCEPTIONS"
