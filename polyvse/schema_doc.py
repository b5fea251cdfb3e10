"""Render config/schema.yaml as a Markdown table of every key (for the README).

python -m polyvse.schema_doc config/schema.yaml
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import yaml


def schema_keys(node: Mapping, defs: Mapping, prefix: str = "") -> Iterator[tuple[str, str, str, str]]:
    """(key path, type, default, description) for every property, depth first."""
    if "$ref" in node:
        node = {**defs[node["$ref"].split("/")[-1]], **{k: v for k, v in node.items() if k != "$ref"}}
    for name, sub in (node.get("properties") or {}).items():
        path = f"{prefix}{name}"
        if "$ref" in sub:
            sub = {**defs[sub["$ref"].split("/")[-1]], **{k: v for k, v in sub.items() if k != "$ref"}}
        kind = sub.get("type", "")
        kind = "/".join(kind) if isinstance(kind, list) else kind
        if "enum" in sub:
            kind = " \\| ".join(map(str, sub["enum"]))
        default = json.dumps(sub["default"], ensure_ascii=False) if "default" in sub else ""
        yield path, kind, default, " ".join(str(sub.get("description", "")).split())
        yield from schema_keys(sub, defs, path + ".")
        extra = sub.get("additionalProperties")
        if isinstance(extra, dict) and ("properties" in extra or "$ref" in extra):
            yield from schema_keys(extra, defs, path + ".<name>.")
        items = sub.get("items")
        if isinstance(items, dict) and "properties" in items:
            yield from schema_keys(items, defs, path + "[].")


def markdown(schema_path: str | Path) -> str:
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    lines = ["| key | type | default | description |", "|---|---|---|---|"]
    for path, kind, default, desc in schema_keys(schema, schema.get("$defs", {})):
        desc = desc.replace("|", r"\|")
        lines.append(f"| `{path}` | {kind} | `{default}` | {desc} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown(sys.argv[1] if len(sys.argv) > 1 else "config/schema.yaml"))
