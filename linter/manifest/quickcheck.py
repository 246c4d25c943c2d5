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
from functools import lru_cache

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
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


@lru_cache(maxsize=64)  # the slow path asks again for each value it checks
def pattern_re(pattern: str) -> re.Pattern[str]:
    """A schema's `pattern` as JSON Schema (ECMA-262) and pydantic read it: each `$` outside
    a character class matches at the very end only (`\\Z`). Python's `re`, which jsonschema
    uses as it is, also lets `$` match before a final line break, so "USD\\n" (a block
    scalar's text) would pass `^[A-Z]{3}$`."""
    out: list[str] = []
    escaped, opened = False, -1  # opened: where the character class being read starts in `out`
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif opened >= 0:  # a `]` first in the class (after `[` or `[^`) is one of its characters
            if char == "]" and "".join(out[opened:]) not in ("[", "[^"):
                opened = -1
        elif char == "[":
            opened = len(out)
        elif char == "$":
            char = "\\Z"
        out.append(char)
    return re.compile("".join(out))


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
    building: set[str] = set()

    def ref(name: str) -> Check:
        if name not in compiled and name in defs and name not in building:
            building.add(name)  # a definition is built where it is first used: no lookup per call
            compiled[name] = build(defs[name])
        if name in compiled:
            return compiled[name]

        def check(value: Any) -> bool:  # a cycle (or a missing name): looked up when called
            return compiled[name](value)

        return check

    def build(node: Any) -> Check:
        if not isinstance(node, dict):
            return _never
        unknown = set(node) - _IGNORED - _BUILDERS.keys()
        if unknown:
            return _never
        fused = _fused(node, build, ref)
        if fused is not None:
            return fused
        return _every([_BUILDERS[key](node, build, ref) for key in node if key in _BUILDERS])

    return build({k: v for k, v in schema.items() if k != "$defs"})


# The usual node shapes, each as one function instead of one per keyword: the same
# predicate as _every over the keywords' own checks (each keyword's check is pure), cheaper.
_SCALAR_KEYS = frozenset({"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
                          "maxLength", "enum", "pattern"})
_OBJECT_KEYS = frozenset({"type", "properties", "additionalProperties", "required"})
_ARRAY_KEYS = frozenset({"type", "items", "minItems", "maxItems"})
_NULL_ONLY = {"type": "null"}


def _fused(node: dict, build: Any, ref: Any, nullable: bool = False) -> Check | None:
    """One function for a node of a usual shape, or None (then one check per keyword);
    `nullable`: of `value is None or node(value)`."""
    keys = set(node) - _IGNORED
    if keys == {"anyOf"} and not nullable and isinstance(node["anyOf"], list) and len(node["anyOf"]) == 2 \
            and _NULL_ONLY in node["anyOf"] and node["anyOf"][0] != node["anyOf"][1]:
        option = next(option for option in node["anyOf"] if option != _NULL_ONLY)  # a key that may be left blank
        blank = _fused(option, build, ref, nullable=True) if isinstance(option, dict) and not set(option) - _IGNORED - _BUILDERS.keys() else None
        if blank is not None:
            return blank
        other = build(option)
        return lambda value: value is None or other(value)
    if "type" not in keys:
        return None
    kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
    if any(k not in _TYPES for k in kinds):
        return None
    allowed = frozenset(t for k in kinds for t in _KINDS[k])
    if keys <= _SCALAR_KEYS:
        return _scalar(node, allowed, build, ref, nullable)
    if nullable:  # `value is None or check(value)`: an object's or a list's check passes the other types allowed
        allowed |= {type(None)}
    if keys <= _OBJECT_KEYS and kinds.count("object") == 1 and isinstance(node.get("properties", {}), dict):
        return _object(node, allowed, build)
    if keys <= _ARRAY_KEYS and kinds.count("array") == 1 and isinstance(node.get("items", {}), dict):
        return _array(node, allowed, build)
    return None


def _bounds(node: dict, low: str, high: str, strict_low: str = "", strict_high: str = "") -> Check | None:
    """The limits `node` gives as one test of a value of the right type, or None without any."""
    tests = [(operator.ge, node[low]) if low in node else None, (operator.gt, node[strict_low]) if strict_low in node else None,
             (operator.le, node[high]) if high in node else None, (operator.lt, node[strict_high]) if strict_high in node else None]
    tests = [t for t in tests if t is not None]
    if not tests:
        return None
    if len(tests) == 2 and tests[0][0] in (operator.ge, operator.gt) and tests[1][0] in (operator.le, operator.lt):
        (above, lo), (below, hi) = tests
        if above is operator.ge and below is operator.le:
            return lambda v: lo <= v <= hi
        if above is operator.gt and below is operator.le:
            return lambda v: lo < v <= hi
    if len(tests) == 1:
        (holds, limit), = tests
        return lambda v: holds(v, limit)
    return lambda v: all(holds(v, limit) for holds, limit in tests)


def _scalar(node: dict, allowed: frozenset, build: Any, ref: Any, nullable: bool = False) -> Check:
    """`nullable`: of `value is None or node(value)`."""
    numbers = _bounds(node, "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    lengths = _bounds(node, "minLength", "maxLength")
    length = (lambda v: lengths(len(v))) if lengths is not None else None
    pattern = pattern_re(node["pattern"]) if "pattern" in node else None
    enum = _enum(node, build, ref) if "enum" in node else None
    if numbers is None and length is None and pattern is None:
        if enum is None:
            allowed = allowed | {type(None)} if nullable else allowed
            return lambda value: type(value) in allowed
        if nullable:
            return lambda value: value is None or (type(value) in allowed and enum(value))
        return lambda value: type(value) in allowed and enum(value)

    def check(value: Any) -> bool:
        kind = type(value)
        if kind not in allowed:
            return nullable and value is None
        if kind is int or kind is float:  # a bool is no number here
            if numbers is not None and not numbers(value):
                return False
        elif kind is str:
            if length is not None and not length(value):
                return False
            if pattern is not None and pattern.search(value) is None:
                return False
        return enum is None or enum(value) or (nullable and value is None)

    return check


def _object(node: dict, allowed: frozenset, build: Any) -> Check:
    checks = _Lazy(node.get("properties", {}), build)
    extra = node.get("additionalProperties", True)
    closed = extra is not True and not isinstance(extra, dict)  # false (or not a schema): no other key
    other = build(extra) if isinstance(extra, dict) else None
    required = frozenset(node.get("required", ()))

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return type(value) in allowed
        if required and not required <= value.keys():
            return False
        for key, item in value.items():
            test = checks[key]
            if test is None:
                if closed or (other is not None and not other(item)):
                    return False
            elif not test(item):
                return False
        return True

    return check


class _Lazy(dict):
    """The checks of an object's properties by key, each built when a value first has that key
    (None: a key the schema does not list, kept as such): a check meets part of the schema (a
    fleet's racks, a rental's terms, the plan's options) and need not build the rest. A key met
    before is a plain dict lookup."""

    def __init__(self, properties: dict, build: Any):
        super().__init__()
        self.properties, self.build = properties, build

    def __missing__(self, key: str) -> Check | None:
        built = self[key] = self.build(self.properties[key]) if key in self.properties else None
        return built


def _array(node: dict, allowed: frozenset, build: Any) -> Check:
    test = build(node["items"]) if "items" in node else _always
    sizes = _bounds(node, "minItems", "maxItems")

    def check(value: Any) -> bool:
        if type(value) is not list:
            return type(value) in allowed
        if sizes is not None and not sizes(len(value)):
            return False
        for item in value:
            if not test(item):
                return False
        return True

    return check


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
    checks = _Lazy(node["properties"], build)

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return True
        for key, item in value.items():  # the keys given; a schema key not given has nothing to check
            test = checks[key]
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
    pattern = pattern_re(node["pattern"])
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
