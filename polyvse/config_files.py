"""Config files read strictly, and config errors in one line naming file, line, key and reason.

PyYAML keeps the last of two equal keys without a word, and a schema error printed
by ``snakemake.utils.validate`` carries the whole schema and config (thousands of
lines). Here a duplicated key is an error, and every config error is reported as
``file:line: config key K: reason``, the line found by walking the file's YAML nodes.
"""

from __future__ import annotations

import difflib
import re
import reprlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import yaml

from polyvse.config import ConfigError
from polyvse.errors import ConfigFileError

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _RejectsDuplicates:
    """A YAML constructor's mixin that rejects a key given twice in one mapping (merge keys
    ``<<`` aside: an explicit key may override a merged one)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the base constructor says so
                continue
            if first is not None:
                raise ConfigFileError(
                    _name(key_node.start_mark),
                    f"duplicate key {key!r} (first at line {first}); the first would be silently lost",
                    line,
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


class StrictLoader(_RejectsDuplicates, _Base):  # type: ignore[misc, valid-type]
    """A safe YAML loader that rejects a key given twice in one mapping."""


class _StrictBaseLoader(_RejectsDuplicates, yaml.BaseLoader):
    """Snakemake's reader of a ``--config`` value (every scalar text), rejecting a key given twice."""


def config_arguments(argv: Sequence[str]) -> list[str]:
    """The ``KEY=VALUE`` entries of ``--config`` / ``-C`` in snakemake's command line ``argv``."""
    import argparse

    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--config", "-C", nargs="*", action="append", default=[])
    try:
        known, _ = parser.parse_known_args(list(argv))
    except SystemExit:  # a command line snakemake itself refuses: it says why
        return []
    return [entry for group in known.config for entry in group]


def check_config_arguments(entries: Sequence[str]) -> None:
    """Raise :class:`ConfigFileError` (``--config``) where ``entries`` set one key twice, in two entries
    (``seed=1 seed=2``) or inside one value (``training='{epochs: 3, epochs: 4}'``): snakemake keeps the
    last without a word. Two mappings of one key merge, as snakemake merges them, unless they set one key."""
    merged: dict = {}

    def merge(into: dict, new: Mapping, path: str) -> None:
        for key, value in new.items():
            where = f"{path}.{key}" if path else str(key)
            if key in into and isinstance(into[key], dict) and isinstance(value, Mapping):
                merge(into[key], value, where)
            elif key in into:
                raise ConfigFileError("--config", f"config key {where}: given twice; the first would be silently lost")
            else:
                into[key] = dict(value) if isinstance(value, Mapping) else value

    for entry in entries:
        key, _, raw = entry.partition("=")
        try:
            value = yaml.load(raw, Loader=_StrictBaseLoader)
        except ConfigFileError as err:
            raise ConfigFileError("--config", f"config key {key}: {err.reason}") from None
        except yaml.YAMLError:
            value = raw  # snakemake keeps such a value as text
        merge(merged, {key: value}, "")


def exit_with(err: ConfigFileError) -> NoReturn:
    """End a snakemake run on a config error in one line (``file:line: config key K: reason``) and exit status 1;
    an exception raised from the Snakefile would print three, with the frame that raised it."""
    print(err, file=sys.stderr, flush=True)
    raise SystemExit(1)


def _name(mark: yaml.Mark) -> str:
    return _shown(mark.name) if mark is not None else "<config>"


def _shown(path: str | Path) -> str:
    """``path`` relative to the working directory when it lies under it (shorter messages)."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def load_config_file(path: str | Path) -> Any:
    """The content of a YAML (or JSON) config file; a syntax error or a duplicated key
    raises :class:`ConfigFileError` naming the file and the line."""
    path = Path(path)
    if path.suffix == ".json":
        return _load_json(path)
    try:
        with path.open(encoding="utf-8") as f:
            return yaml.load(f, Loader=StrictLoader)
    except FileNotFoundError:
        raise ConfigFileError(_shown(path), "config file not found") from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        context = err.context or ""
        if err.context and err.context_mark is not None and err.context_mark.line + 1 != line:
            context += f" (from line {err.context_mark.line + 1})"
        problem = (err.problem or "") + (f" (column {mark.column + 1})" if mark is not None else "")
        what = ": ".join(part for part in (context, problem) if part)
        raise ConfigFileError(_shown(path), f"YAML syntax error: {what}", line) from None
    except yaml.YAMLError as err:
        raise ConfigFileError(_shown(path), f"YAML error: {err}") from None


def _load_json(path: Path) -> Any:
    """A JSON config file (snakemake reads those too), rejecting duplicated keys."""
    import json

    def pairs(items: list[tuple[str, Any]]) -> dict:
        out: dict = {}
        for key, value in items:
            if key in out:
                raise ConfigFileError(_shown(path), f"duplicate key {key!r}; the first would be silently lost")
            out[key] = value
        return out

    try:
        return json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=pairs)
    except FileNotFoundError:
        raise ConfigFileError(_shown(path), "config file not found") from None
    except json.JSONDecodeError as err:
        raise ConfigFileError(_shown(path), f"JSON syntax error: {err.msg} (column {err.colno})", err.lineno) from None


# ----------------------------------------------------------------------------- locating a key


def _segments(key: str, node: yaml.Node) -> Iterator[yaml.Node]:
    """The nodes along dotted ``key`` (``a.b.rows[2].c``) in the YAML tree ``node``,
    as far as the file has them. Names may hold dots: the longest key that matches wins."""
    rest = key
    while rest:
        if isinstance(node, yaml.MappingNode):
            best = None
            for k_node, v_node in node.value:
                k = str(k_node.value)
                if (rest == k or rest.startswith(k + ".") or rest.startswith(k + "[")) and (
                    best is None or len(k) > len(best[0])
                ):
                    best = (k, k_node, v_node)
            if best is None:
                return
            k, k_node, node = best
            rest = rest[len(k) :]
            rest = rest[1:] if rest.startswith(".") else rest
            yield k_node
        elif isinstance(node, yaml.SequenceNode):
            m = re.match(r"\[(\d+)\]\.?", rest)
            if m is None or int(m.group(1)) >= len(node.value):
                return
            node, rest = node.value[int(m.group(1))], rest[m.end() :]
            yield node
        else:
            return


def key_location(key: str, path: str | Path) -> tuple[int, int | None]:
    """(how many segments of ``key`` the file sets, the line of the deepest one)."""
    try:
        with Path(path).open(encoding="utf-8") as f:
            root = yaml.compose(f, Loader=_Base)
    except (OSError, yaml.YAMLError):
        return 0, None
    depth, line = 0, None
    for node in _segments(key, root) if root is not None else ():
        depth, line = depth + 1, node.start_mark.line + 1
    return depth, line


def located(err: ConfigError, sources: Sequence[str | Path], overrides: Mapping | None = None) -> ConfigFileError:
    """``err`` as a :class:`ConfigFileError` naming where the key is set: the
    ``--config`` overrides, else the config file that sets most of its path (the last
    of equals: later files override earlier ones), with the line."""
    if overrides and err.key.split(".")[0].split("[")[0] in overrides:
        return ConfigFileError("--config", str(err))
    best: tuple[int, int | None, str | Path] | None = None
    for source in sources:
        depth, line = key_location(err.key, source)
        if best is None or depth >= best[0]:
            best = (depth, line, source)
    if best is None:
        return ConfigFileError("<config>", str(err))
    return ConfigFileError(_shown(best[2]), str(err), best[1])


# ----------------------------------------------------------------------------- schema errors in one line


def _dotted(path: Sequence[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _join(base: str, name: str) -> str:
    return f"{base}.{name}" if base else name


_short = reprlib.Repr()
_short.maxstring, _short.maxother, _short.maxlist, _short.maxdict = 60, 60, 6, 4


def read_schema(path: str | Path) -> dict:
    """The config schema (YAML) at ``path``, read with libyaml's parser where PyYAML has it (a tenth of
    the pure-Python parser's time: every snakemake start reads the schema)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=loader)


def with_schema_defaults(config: dict, schema: Mapping) -> dict:
    """Fill ``config`` in place with the ``default`` of every key ``schema`` gives one and the config
    lacks, at every depth the schema describes, and return it. Call it on a config that passes
    :func:`schema_violation`; the defaults are copies (a later edit of the config never reaches the
    schema). jsonschema's documented pattern: its ``properties`` check, extended to set defaults."""
    import copy

    import jsonschema

    base = jsonschema.validators.validator_for(schema)
    check_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, subschema):
        if isinstance(instance, dict):
            for key, spec in properties.items():
                if "default" in spec:
                    instance.setdefault(key, copy.deepcopy(spec["default"]))
        yield from check_properties(validator, properties, instance, subschema)

    jsonschema.validators.extend(base, {"properties": set_defaults})(schema).validate(config)
    return config


def schema_violation(config: Mapping, schema: Mapping) -> ConfigError | None:
    """The most relevant way ``config`` breaks ``schema``, as a one-line :class:`ConfigError`,
    or None. An unknown key names the closest valid key (difflib)."""
    import jsonschema

    from polyvse.config_migration import earlier_dialect_key

    earlier = earlier_dialect_key(config)
    if earlier is not None:
        return ConfigError(
            earlier,
            "a key of the earlier config dialect (speech models, MLMME and the Translator are now variants: "
            "and reports: entries, docs/architecture.md); `polyvse migrate-config FILE` rewrites the file",
        )
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is None:
        return None
    where = _dotted(error.absolute_path)
    if error.validator == "additionalProperties" and error.validator_value is False:
        allowed = list(error.schema.get("properties", {}))
        patterns = list(error.schema.get("patternProperties", {}))
        extra = [k for k in error.instance if k not in allowed and not any(re.search(p, str(k)) for p in patterns)]
        name = str(extra[0]) if extra else "?"
        near = difflib.get_close_matches(name, allowed, n=1, cutoff=0.5)
        hint = f"did you mean {near[0]!r}?" if near else f"valid keys: {', '.join(allowed)}"
        return ConfigError(_join(where, name), f"unknown key; {hint}")
    if "propertyNames" in error.absolute_schema_path:
        name = str(error.instance)
        reason = error.schema.get("description", "").rstrip(".") or f"names match {error.schema.get('pattern')}"
        return ConfigError(_join(where, name), f"bad name {name!r}; {reason[:1].lower()}{reason[1:]}")
    message = error.message
    if len(message) > 160 or "\n" in message:
        message = f"{_short.repr(error.instance)} fails {error.validator} {_short.repr(error.validator_value)}"
    return ConfigError(where or "(top level)", message)


def _typed_scalar(value: str) -> Any:
    """A ``--config`` value snakemake left as text, read as YAML would read it in a config file."""
    try:
        typed = yaml.load(value, Loader=StrictLoader)
    except yaml.YAMLError:
        return value
    if isinstance(typed, str):  # YAML 1.1 reads 1e-3 as text; a config file would mean the number
        try:
            return float(typed) if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+", typed) else typed
        except ValueError:
            return typed
    if isinstance(typed, bool) and value.strip().lower() not in ("true", "false"):
        # YAML 1.1's other booleans (off, on, yes, no): snakemake dropped the quotes a config file
        # would need around them, so the text is what was meant (amp: off)
        return value
    return typed if isinstance(typed, (int, float, bool)) or typed is None else value


def typed_overrides(overrides: Any) -> Any:
    """``--config`` overrides with the values inside nested mappings and lists typed.

    Snakemake parses ``--config training='{epochs: 30}'`` with YAML's BaseLoader,
    which keeps every nested value as text ("30"), and the schema then rejects
    it; a value at the top level is already typed. Nested text is read again as
    a config file would read it (``30`` → 30, ``true`` → True, ``1e-3`` → 0.001,
    ``null`` → None); anything else stays text, YAML 1.1's ``off``/``on``/``yes``/``no``
    too (``training='{amp: off}'``: the quotes a config file needs there are gone).
    """

    def walk(node: Any, nested: bool) -> Any:
        if isinstance(node, Mapping):
            return {k: walk(v, True) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, True) for v in node]
        return _typed_scalar(node) if nested and isinstance(node, str) else node

    return walk(overrides, False)
