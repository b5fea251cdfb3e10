"""Render config/schema.yaml as a Markdown table of every key (docs/config.md's).

python -m polyvse.schema_doc                            # the table, on stdout
python -m polyvse.schema_doc --write docs/config.md     # the page's block between its config-keys markers
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import yaml

from polyvse.io import write_text


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


START, END = "<!-- config-keys:start -->\n", "<!-- config-keys:end -->"


def keys_block(page: str) -> str:
    """The table between ``page``'s config-keys markers."""
    if START not in page or END not in page:
        raise ValueError(f"no {START.strip()} … {END} markers")
    return page[page.index(START) + len(START) : page.index(END)]


def fill_keys(page: str, table: str) -> str:
    """``page`` with the table between its config-keys markers replaced by ``table``."""
    keys_block(page)  # the markers are there
    return page[: page.index(START) + len(START)] + table + page[page.index(END) :]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m polyvse.schema_doc", description=__doc__.split("\n\n")[0])
    parser.add_argument("schema", nargs="?", type=Path, default=Path("config/schema.yaml"))
    parser.add_argument("--write", type=Path, help="a Markdown page whose config-keys block to rewrite")
    args = parser.parse_args(argv)
    table = markdown(args.schema)
    if args.write is None:
        sys.stdout.write(table)
        return 0
    try:
        write_text(fill_keys(args.write.read_text(encoding="utf-8"), table), args.write)
    except (OSError, ValueError) as e:
        print(f"polyvse: {args.write}: {e}", file=sys.stderr)
        return 2
    print(f"{args.write}: config keys rewritten from {args.schema}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
