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

import operator
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
# the same tests as type sets: `type(value) in` the union of a list of types
_KINDS = {"object": (dict,), "array": (list,), "string": (str,), "integer": (int,), "number": (int, float),
          "boolean": (bool,), "null": (type(None),)}


def _never(value: Any) -> bool:
    return False


def _always(value: Any) -> bool:
    return True


def _every(checks: list[Check]) -> Check:
    """All of `checks`, in order (plain loops: this runs some 500 times per manifest)."""
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    tests = tuple(checks)

    def check(value: Any) -> bool:
        for test in tests:
            if not test(value):
                return False
        return True

    return check


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
        return _every([_BUILDERS[key](node, build, ref) for key in node if key in _BUILDERS])

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
    if len(kinds) == 1:
        return _TYPES[kinds[0]]
    allowed = frozenset(t for k in kinds for t in _KINDS[k])
    return lambda value: type(value) in allowed


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b  # 1, 1.0 and True are all different here


def _enum(node: dict, build: Any, ref: Any) -> Check:
    options = list(node["enum"])
    try:
        keyed = frozenset((type(option), option) for option in options)  # (type, value): 1, 1.0, True differ
    except TypeError:  # a list or mapping among the options: compare one by one
        return lambda value: any(_same(value, option) for option in options)

    def check(value: Any) -> bool:
        try:
            return (type(value), value) in keyed
        except TypeError:  # unhashable: no option (all hashable) has its type
            return False

    return check


def _const(node: dict, build: Any, ref: Any) -> Check:
    wanted = node["const"]
    return lambda value: _same(value, wanted)


def _properties(node: dict, build: Any, ref: Any) -> Check:
    checks = {key: build(sub) for key, sub in node["properties"].items()}

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return True
        for key, item in value.items():  # the keys given; a schema key not given has nothing to check
            test = checks.get(key)
            if test is not None and not test(item):
                return False
        return True

    return check


def _pattern_properties(node: dict, build: Any, ref: Any) -> Check:
    """Each key that a pattern finds (re.search, as jsonschema) holds a value valid under it."""
    tests = tuple((re.compile(pattern), build(sub)) for pattern, sub in node["patternProperties"].items())

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return True
        for key, item in value.items():
            for pattern, test in tests:
                if pattern.search(key) is not None and not test(item):
                    return False
        return True

    return check


def _additional(node: dict, build: Any, ref: Any) -> Check:
    known = set(node.get("properties", {}))
    patterns = tuple(re.compile(pattern) for pattern in node.get("patternProperties", {}))
    extra = node["additionalProperties"]
    if extra is True:
        return _always
    if extra is False and not patterns:
        return lambda value: type(value) is not dict or known.issuperset(value)
    test = build(extra) if extra is not False else _never

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return True
        for key, item in value.items():  # additional: neither a property nor found by a pattern
            if key not in known and not any(p.search(key) is not None for p in patterns) and not test(item):
                return False
        return True

    return check


def _required(node: dict, build: Any, ref: Any) -> Check:
    keys = frozenset(node["required"])
    return lambda value: type(value) is not dict or keys <= value.keys()


def _items(node: dict, build: Any, ref: Any) -> Check:
    if not isinstance(node["items"], dict):
        return _never
    test = build(node["items"])

    def check(value: Any) -> bool:
        if type(value) is not list:
            return True
        for item in value:
            if not test(item):
                return False
        return True

    return check


def _any_of(node: dict, build: Any, ref: Any) -> Check:
    options = tuple(build(option) for option in node["anyOf"])

    def check(value: Any) -> bool:
        for option in options:
            if option(value):
                return True
        return False

    return check


def _limit(key: str, holds: Callable[[Any, Any], bool], kinds: tuple[type, ...]) -> Callable[..., Check]:
    """`holds(value, limit)` for a value of exactly one of `kinds` (a bool is no number here)."""
    def builder(node: dict, build: Any, ref: Any) -> Check:
        limit = node[key]
        return lambda value: type(value) not in kinds or holds(value, limit)

    return builder


def _pattern(node: dict, build: Any, ref: Any) -> Check:
    pattern = re.compile(node["pattern"])
    return lambda value: type(value) is not str or pattern.search(value) is not None


_NUMBER = (int, float)
_BUILDERS: dict[str, Callable[..., Check]] = {
    "$ref": _ref,
    "type": _type,
    "enum": _enum,
    "const": _const,
    "properties": _properties,
    "additionalProperties": _additional,
    "patternProperties": _pattern_properties,
    "required": _required,
    "items": _items,
    "anyOf": _any_of,
    "pattern": _pattern,
    "minimum": _limit("minimum", operator.ge, _NUMBER),
    "maximum": _limit("maximum", operator.le, _NUMBER),
    "exclusiveMinimum": _limit("exclusiveMinimum", operator.gt, _NUMBER),
    "exclusiveMaximum": _limit("exclusiveMaximum", operator.lt, _NUMBER),
    "minLength": _limit("minLength", lambda v, x: len(v) >= x, (str,)),
    "maxLength": _limit("maxLength", lambda v, x: len(v) <= x, (str,)),
    "minItems": _limit("minItems", lambda v, x: len(v) >= x, (list,)),
    "maxItems": _limit("maxItems", lambda v, x: len(v) <= x, (list,)),
}
