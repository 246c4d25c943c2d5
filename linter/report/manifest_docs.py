"""docs/manifest.md: every manifest key, what it means, its type and bounds, and an example,
generated from the models' JSON Schema and the bundled examples so it cannot drift (a test
compares the committed page with this output; `python -m linter.schema` rewrites it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from linter.report.escape import cell

HEADER = """# The manifest format, key by key

Generated from the pydantic models (`linter/manifest/model.py`) by `python -m linter.schema`;
do not edit by hand. Each key gives its type, its bounds, what it means and an example: the
value a bundled example in `examples/` sets (named after it), else the models' own example,
default or first choice. A key left out, or given with no value, is "not known yet": the
rules that need it report *to confirm* instead of guessing. Units are part of the names: GB =
10^9 bytes, TB = 10^12 bytes, Gb/s for network rates, GB/s for bus and disk rates, kW / W.
"""


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """The node behind a `$ref`, an optional (`anyOf` with null) or an array's items."""
    while True:
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
        elif "anyOf" in node:
            choices = [c for c in node["anyOf"] if c.get("type") != "null"]
            if len(choices) != 1:
                return node
            node = choices[0]
        else:
            return node


def _type(schema: dict[str, Any], node: dict[str, Any]) -> str:
    node = _resolve(schema, node)
    if "enum" in node:
        return "one of " + ", ".join(f"`{v}`" for v in node["enum"] if v is not None)
    if "anyOf" in node:
        return " or ".join(_type(schema, c) for c in node["anyOf"] if c.get("type") != "null")
    kind = node.get("type", "any")
    kind = [k for k in kind if k != "null"][0] if isinstance(kind, list) else kind
    if kind == "array":
        inner = _resolve(schema, node.get("items", {}))
        return "list of " + ("entries (below)" if inner.get("type") == "object" else _type(schema, inner))
    if kind == "object" and "properties" not in node:
        return "map of " + _type(schema, node.get("additionalProperties") or {})
    words = {"integer": "whole number", "number": "number", "string": "text", "boolean": "true / false", "object": "section (below)"}
    text = words.get(kind, kind)
    if node.get("format") == "date" or node.get("format") == "date-time":
        text = "date (YYYY-MM-DD)"
    bounds = []
    for key, sign in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<")):
        if key in node and not (key == "maximum" and node[key] >= 1e15):
            bounds.append(f"{sign} {_number(node[key])}")
    if "pattern" in node:
        bounds.append(f"pattern `{node['pattern']}`")
    return text + (f" ({', '.join(bounds)})" if bounds else "")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _walk(schema: dict[str, Any], node: dict[str, Any], path: str, found: list[tuple[str, dict[str, Any]]]) -> None:
    """Every (path, object schema) of the manifest, depth first in key order."""
    node = _resolve(schema, node)
    if node.get("type") == "array" or "items" in node:
        _walk(schema, node.get("items", {}), path + "[]", found)
    elif "properties" in node:
        if any(n is node for _, n in found if path.startswith(_ + ".")):
            return  # a section inside itself
        found.append((path, node))
        for key, prop in node["properties"].items():
            _walk(schema, prop, f"{path}.{key}" if path else key, found)
    elif isinstance(node.get("additionalProperties"), dict):
        _walk(schema, node["additionalProperties"], path + ".*", found)


def _objects(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str | None]]:
    """(path, object schema, None) of every section, and (path, schema, where it is spelled
    out) of a section met again: an option's node pools are node pools, shown once, at the
    shortest path."""
    found: list[tuple[str, dict[str, Any]]] = []
    _walk(schema, schema, "", found)
    home: dict[int, str] = {}
    for path, node in found:
        if id(node) not in home or path.count(".") < home[id(node)].count("."):
            home[id(node)] = path
    inside_copy: list[str] = []
    for path, node in found:
        if any(path.startswith(c + ".") or path.startswith(c + "[]") for c in inside_copy):
            continue
        if home[id(node)] != path:
            inside_copy.append(path)
            yield path, node, home[id(node)]
        else:
            yield path, node, None


def _values(data: Any, steps: list[str]) -> Iterator[Any]:
    """Every value at `steps` in `data` (`[]` for each list item, `*` for each map value)."""
    if not steps:
        yield data
        return
    step, rest = steps[0], steps[1:]
    if step == "[]" and isinstance(data, list):
        for item in data:
            yield from _values(item, rest)
    elif step == "*" and isinstance(data, dict):
        for item in data.values():
            yield from _values(item, rest)
    elif isinstance(data, dict) and step in data:
        yield from _values(data[step], rest)


def _steps(path: str) -> list[str]:
    out: list[str] = []
    for part in path.split("."):
        name = part.replace("[]", "")
        if name:
            out.append(name)
        out += ["[]"] * part.count("[]")
    return out


def _shown(value: Any, name: str) -> str:
    if not isinstance(value, dict) and not (isinstance(value, list) and value and isinstance(value[0], dict)):
        return f"`{_inline(value)}` ({name})"
    return f"see below ({name})"


def _mappings(data: Any, at: str = "") -> Iterator[tuple[str, dict]]:
    """Every mapping in `data` with its path (`node_pools[0].gpu`)."""
    if isinstance(data, dict):
        yield at, data
        for key, value in data.items():
            yield from _mappings(value, f"{at}.{key}" if at else str(key))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            yield from _mappings(item, f"{at}[{i}]")


def _example(schema: dict[str, Any], prop: dict[str, Any], path: str, examples: dict[str, Any],
             siblings: frozenset[str] = frozenset()) -> str:
    for name, data in examples.items():
        for value in _values(data, _steps(path)):
            if value is not None:
                return _shown(value, name)
    # A section of the same shape elsewhere (a procurement option's node pools are node pools):
    # the key in a mapping that shares two other keys with this section and has most of its
    # keys among this section's (a NIC, which also has a model and a count, is not a switch).
    key = path.rsplit(".", 1)[-1]
    for name, data in examples.items():
        for at, mapping in _mappings(data):
            shared = set(mapping) & siblings
            if mapping.get(key) is not None and len(shared - {key}) >= 2 and len(shared) >= 0.6 * len(mapping):
                return _shown(mapping[key], f"{name}, at {at}.{key}")
    node = _resolve(schema, prop)
    for key in ("examples", "default", "enum"):
        choices = prop.get(key, node.get(key))
        if key == "default" and choices is not None:
            return f"`{_inline(choices)}` (default)"
        if isinstance(choices, list) and [c for c in choices if c is not None]:
            return f"`{_inline([c for c in choices if c is not None][0])}`"
    return ""


def _inline(value: Any) -> str:
    if isinstance(value, str):
        return value if value and not value[0].isdigit() and ":" not in value else json.dumps(value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return str(value)


def _anchor(path: str) -> str:
    """GitHub's heading anchor of a section named `path` in code."""
    return "".join(c for c in path.lower() if c.isalnum() or c in "-_ ").replace(" ", "-")


def render(schema: dict[str, Any], examples: dict[str, Any]) -> str:
    """The page: one section per object of the manifest, one table row per key."""
    out = [HEADER]
    for path, node, first in _objects(schema):
        out.append(f"\n## `{path or '(top level)'}`\n")
        if first:
            out.append(f"The same keys as [`{first}`](#{_anchor(first)}).")
            continue
        required = set(node.get("required", ()))
        if node.get("description"):
            out.append(cell(node["description"]) + "\n")
        out.append("| key | type | meaning | example |\n| --- | --- | --- | --- |")
        for key, prop in node["properties"].items():
            full = f"{path}.{key}" if path else key
            meaning = prop.get("description") or _resolve(schema, prop).get("description") or ""
            name = f"`{key}`" + (" (required)" if key in required else "")
            out.append(f"| {name} | {cell(_type(schema, prop))} | {cell(meaning)} | {cell(_example(schema, prop, full, examples, frozenset(node['properties'])))} |")
    return "\n".join(out) + "\n"


def missing_examples(schema: dict[str, Any], examples: dict[str, Any]) -> list[str]:
    """Keys the page shows with no example."""
    out = []
    for path, node, first in _objects(schema):
        if first:
            continue
        for key, prop in node["properties"].items():
            full = f"{path}.{key}" if path else key
            if not _example(schema, prop, full, examples, frozenset(node["properties"])):
                out.append(full)
    return out


# Where a catalog entry's keys sit in a manifest: a system fills a node pool, a GPU its `gpu`.
_CATALOG_AT = {"systems": ["node_pools"], "gpus": ["node_pools", "gpu"], "nics": ["node_pools", "nics"],
               "switches": ["network", "fabrics", "switches"]}


def bundled_examples(data: Path) -> dict[str, Any]:
    """The examples' manifests by file name; then the catalog's entries and the policy's
    defaults, each placed where a manifest would hold it (the values hwlint fills in)."""
    import yaml

    out: dict[str, Any] = {p.name: yaml.safe_load(p.read_text(encoding="utf-8"))
                           for p in sorted((data / "examples").glob("*.hw.yaml"))}
    for path in sorted((data / "catalog").glob("*.yaml")):
        for kind, entries in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items():
            if kind not in _CATALOG_AT or not isinstance(entries, list):
                continue
            for entry in entries:
                node: Any = entry
                for step in reversed(_CATALOG_AT[kind]):
                    node = {step: [node] if step in ("node_pools", "fabrics", "switches", "nics") else node}
                out[f"catalog/{path.name}: {entry.get('name')}"] = node
    policy = yaml.safe_load((data / "rules" / "policy.yaml").read_text(encoding="utf-8")) or {}
    out["rules/policy.yaml default"] = {"policy": {k: v["default"] for k, v in policy.items()
                                                   if isinstance(v, dict) and "default" in v}}
    return out


