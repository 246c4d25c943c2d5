"""A fast yes/no check of a manifest against the manifest schema, before jsonschema.

Most manifests are valid, and for those jsonschema only costs time: about 50 ms to import
and a millisecond or two per manifest. `compile_schema` turns the schema into plain
Python predicates once; when one says *valid*, there is nothing to report and jsonschema
is never imported. When it says *invalid*, validate.py asks jsonschema, which finds and
explains the errors exactly as before.

So this check only has to be sound, never complete: it may reject what jsonschema would
accept (a float such as 8.0 where a whole number is expected, a keyword it does not
know), which merely costs the slow path, but it must never accept what jsonschema would
reject. Every rule below is as strict as the JSON Schema keyword or stricter, and any
keyword not listed makes the predicate reject everything. tests/test_fuzz.py checks
both directions on generated and mutated manifests.
"""

from __future__ import annotations

import re
from typing import Any, Callable

Check = Callable[[Any], bool]

# Keywords that never change whether an instance is valid here (no format checker is used).
_IGNORED = {"title", "description", "default", "format", "$schema", "$id", "$defs", "examples"}
_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) in (int, float),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}


def _never(value: Any) -> bool:
    return False


def compile_schema(schema: dict[str, Any]) -> Check:
    """A predicate that is true only for instances valid under `schema`."""
    defs = schema.get("$defs", {})
    compiled: dict[str, Check] = {}

    def ref(name: str) -> Check:
        def check(value: Any) -> bool:
            return compiled[name](value)

        return check

    def build(node: Any) -> Check:
        if not isinstance(node, dict):
            return _never
        unknown = set(node) - _IGNORED - _BUILDERS.keys()
        if unknown:
            return _never
        checks = [_BUILDERS[key](node, build, ref) for key in node if key in _BUILDERS]
        if not checks:
            return lambda value: True
        if len(checks) == 1:
            return checks[0]
        return lambda value: all(check(value) for check in checks)

    for name, node in defs.items():
        compiled[name] = build(node)
    return build({k: v for k, v in schema.items() if k != "$defs"})


def _ref(node: dict, build: Any, ref: Any) -> Check:
    target = node["$ref"]
    if not target.startswith("#/$defs/"):
        return _never
    return ref(target.split("/")[-1])


def _type(node: dict, build: Any, ref: Any) -> Check:
    kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
    if any(k not in _TYPES for k in kinds):
        return _never
    tests = [_TYPES[k] for k in kinds]
    return lambda value: any(test(value) for test in tests)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b  # 1, 1.0 and True are all different here


def _enum(node: dict, build: Any, ref: Any) -> Check:
    options = list(node["enum"])
    return lambda value: any(_same(value, option) for option in options)


def _const(node: dict, build: Any, ref: Any) -> Check:
    wanted = node["const"]
    return lambda value: _same(value, wanted)


def _properties(node: dict, build: Any, ref: Any) -> Check:
    checks = {key: build(sub) for key, sub in node["properties"].items()}
    return lambda value: type(value) is not dict or all(key not in value or check(value[key]) for key, check in checks.items())


def _additional(node: dict, build: Any, ref: Any) -> Check:
    known = set(node.get("properties", {}))
    extra = node["additionalProperties"]
    if extra is True:
        return lambda value: True
    if extra is False:
        return lambda value: type(value) is not dict or known.issuperset(value)
    check = build(extra)
    return lambda value: type(value) is not dict or all(check(v) for k, v in value.items() if k not in known)


def _required(node: dict, build: Any, ref: Any) -> Check:
    keys = list(node["required"])
    return lambda value: type(value) is not dict or all(key in value for key in keys)


def _items(node: dict, build: Any, ref: Any) -> Check:
    if not isinstance(node["items"], dict):
        return _never
    check = build(node["items"])
    return lambda value: type(value) is not list or all(check(item) for item in value)


def _any_of(node: dict, build: Any, ref: Any) -> Check:
    options = [build(option) for option in node["anyOf"]]
    return lambda value: any(option(value) for option in options)


def _limit(key: str, holds: Callable[[Any, Any], bool], applies: Callable[[Any], bool]) -> Callable[..., Check]:
    def builder(node: dict, build: Any, ref: Any) -> Check:
        limit = node[key]
        return lambda value: not applies(value) or holds(value, limit)

    return builder


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _pattern(node: dict, build: Any, ref: Any) -> Check:
    pattern = re.compile(node["pattern"])
    return lambda value: type(value) is not str or pattern.search(value) is not None


_BUILDERS: dict[str, Callable[..., Check]] = {
    "$ref": _ref,
    "type": _type,
    "enum": _enum,
    "const": _const,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "items": _items,
    "anyOf": _any_of,
    "pattern": _pattern,
    "minimum": _limit("minimum", lambda v, x: v >= x, _is_number),
    "maximum": _limit("maximum", lambda v, x: v <= x, _is_number),
    "exclusiveMinimum": _limit("exclusiveMinimum", lambda v, x: v > x, _is_number),
    "exclusiveMaximum": _limit("exclusiveMaximum", lambda v, x: v < x, _is_number),
    "minLength": _limit("minLength", lambda v, x: len(v) >= x, lambda v: type(v) is str),
    "maxLength": _limit("maxLength", lambda v, x: len(v) <= x, lambda v: type(v) is str),
    "minItems": _limit("minItems", lambda v, x: len(v) >= x, lambda v: type(v) is list),
    "maxItems": _limit("maxItems", lambda v, x: len(v) <= x, lambda v: type(v) is list),
}
