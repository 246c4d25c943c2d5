"""Validate a loaded manifest against schemas/manifest.schema.json, in plain words.

Each schema error becomes a Result pointing at the offending key (file:line:col), saying
what was found, what was expected and, for unknown keys and enum values, the closest
valid spelling.
"""

from __future__ import annotations

from functools import lru_cache

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.manifest.loader import Document, legacy_number
from linter.results import Result, dotted, file_finding
from linter.paths import manifest_schema_json

_TYPE_WORDS = {
    "integer": "a whole number",
    "number": "a number",
    "string": "text",
    "boolean": "true or false",
    "object": "a mapping (key: value lines)",
    "array": "a list",
}


@lru_cache(maxsize=1)
def _validator() -> Any:
    schema = manifest_schema_json()
    return strict_validator(inline_refs(schema, schema.get("$defs", {})))


def strict_validator(schema: dict[str, Any]) -> Any:
    """jsonschema's validator of `schema`, with `pattern` read as JSON Schema and pydantic
    read it (quickcheck.pattern_re: `$` at the very end only), as the quick check does."""
    from jsonschema import Draft202012Validator, ValidationError, validators

    from linter.manifest.quickcheck import pattern_re

    def pattern(validator: Any, expected: str, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and pattern_re(expected).search(instance) is None:
            yield ValidationError(f"{instance!r} does not match {expected!r}")

    return validators.extend(Draft202012Validator, {"pattern": pattern})(schema)


def inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with every `$ref` to `$defs` replaced by its target (the manifest schema has
    no cycles): the same errors, found about 30% faster than by resolving references."""
    if isinstance(node, list):
        return [inline_refs(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: inline_refs(v, defs) for k, v in node.items() if k not in ("$ref", "$defs")}
    if "$ref" in node:
        return {**inline_refs(defs[node["$ref"].split("/")[-1]], defs), **out}
    return out


def suggest(word: str, choices: list[str], cutoff: float = 0.6) -> str:
    """'; did you mean "X"?' for the closest choice, or nothing."""
    import difflib  # only when something is misspelt

    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=cutoff)
    return f'; did you mean "{close[0]}"?' if close else ""


MAX_UNKNOWN_KEYS = 20  # unknown keys named (with a suggestion) per mapping; the rest are counted


def kind(value: Any) -> str:
    """What `value` is, without any of its content."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (int, float)):
        return "a number"
    return {dict: "a mapping", list: "a list"}.get(type(value), "empty")


def describe(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'the text "{value[:60]}"'
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, int) and abs(value) >= 10**15:
        return f"{value:.3g}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def validate(doc: Document) -> list[Result]:
    if certainly_valid(doc.data):
        # certainly valid: jsonschema is not even imported (see linter.quickcheck)
        return _sorted(blank_keys(doc) + references(doc))
    # A file that is not a manifest at all (a credentials file, a key, someone's notes) is
    # named by its kind only: no finding quotes its content.
    if not isinstance(doc.data, dict):
        return [file_finding("SCHEMA", f"the top level is {kind(doc.data)}; expected a mapping of sections "
                             "(this does not look like an hwlint manifest)", doc.path, 1, 1)]
    if "manifest_version" not in doc.data:
        return [file_finding("SCHEMA", f"this is not an hwlint manifest: its top level is a mapping of {len(doc.data):,} "
                             "keys without manifest_version; add manifest_version: 1 if it is one, "
                             "or run `hwlint init` for a starter", doc.path, 1, 1)]
    return _sorted(explain_errors(_validator(), doc) + blank_keys(doc) + references(doc))


def _sorted(findings: list[Result]) -> list[Result]:
    return sorted(findings, key=lambda r: (r.line, r.column, r.message))


def _resolve(node: Any, defs: dict[str, Any]) -> Any:
    """`node` with its `$ref` followed and a nullable `anyOf` reduced to its non-null branch."""
    for _ in range(50):
        if not isinstance(node, dict):
            return None
        if "$ref" in node:
            node = {**defs.get(node["$ref"].split("/")[-1], {}), **{k: v for k, v in node.items() if k != "$ref"}}
            continue
        branches = [b for b in node.get("anyOf", ()) if b != {"type": "null"}]
        if "anyOf" in node and len(branches) == 1:
            node = {**branches[0], **{k: v for k, v in node.items() if k != "anyOf"}}
            continue
        return node
    return None


def blank_keys(doc: Document) -> list[Result]:
    """A key given with no value is dropped by the loader ("to confirm"), so the schema never
    sees it: each one must still be a key the schema knows where it is written."""
    if not doc.blanks:
        return []
    schema = manifest_schema_json()
    defs = schema.get("$defs", {})
    findings = []
    for path in sorted(doc.blanks, key=lambda p: doc.position(p)):
        node = _resolve(schema, defs)
        for step in path[:-1]:  # the mapping that holds the blank key
            if node is None:
                break
            if isinstance(step, int):
                node = _resolve(node.get("items"), defs)
            else:
                props = node.get("properties", {})
                extra = node.get("additionalProperties", True)
                node = _resolve(props[step] if step in props else extra if isinstance(extra, dict) else None, defs)
        if node is None or "properties" not in node or node.get("additionalProperties", True) is not False:
            continue  # the parent itself is unknown (reported on its own) or takes any key
        key, known = path[-1], sorted(node["properties"])
        if isinstance(key, str) and key not in known:
            where = dotted(path[:-1]) or "the top level"
            hint = suggest(key, known) or "; known keys: " + ", ".join(known)
            line, column = doc.position(path)
            findings.append(file_finding(
                "SCHEMA", f'unknown key "{key[:200]}" in {where} (given with no value){hint}',
                doc.path, line, column, dotted(path)))
    return findings


# Keys whose value names something defined elsewhere in the manifest:
# (where the references are, the key, where the names are defined, what they are called).
REFERENCES = (
    (("node_pools", "*", "nics", "*"), "fabric", ("network", "fabrics"), "fabric", "network.fabrics"),
    (("facility", "racks", "*", "contents", "*"), "pool", ("node_pools",), "node pool", "node_pools"),
    (("storage", "checkpoint"), "tier", ("storage", "tiers"), "storage tier", "storage.tiers"),
)


def _walk(node: Any, steps: tuple, path: tuple = ()) -> list[tuple[tuple, Any]]:
    """Every (path, value) that `steps` reach from `node` ("*" is each item of a list)."""
    if not steps:
        return [(path, node)]
    step, rest = steps[0], steps[1:]
    if step == "*":
        return [found for i, item in enumerate(node) for found in _walk(item, rest, path + (i,))] if isinstance(node, list) else []
    return _walk(node[step], rest, path + (step,)) if isinstance(node, dict) and step in node else []


def references(doc: Document) -> list[Result]:
    """A name that refers to a fabric, node pool or storage tier the manifest does not define
    is an error at that key, with the closest defined name; where the manifest defines none at
    all, the finding says so (the reference points at nothing either way)."""
    if not isinstance(doc.data, dict):
        return []
    findings = []
    for where, key, defined_at, what, defined_where in REFERENCES:
        names = [n for _, item in _walk(doc.data, defined_at + ("*",)) if isinstance(item, dict)
                 and isinstance(n := item.get("name"), str)]
        for path, holder in _walk(doc.data, where):
            if not isinstance(holder, dict) or not isinstance(holder.get(key), str) or holder[key] in names:
                continue
            at = path + (key,)
            named = holder[key]
            if names:
                hint = suggest(named, names) or "; defined: " + ", ".join(names[:MAX_UNKNOWN_KEYS])
                message = f'{dotted(at)} names the {what} "{named[:200]}", which {defined_where} does not define{hint}'
            else:
                message = (f'{dotted(at)} names the {what} "{named[:200]}", but the manifest defines no {what} '
                           f'({defined_where} is {"empty" if _walk(doc.data, defined_at) else "not given"})')
            line, column = doc.position(at)
            findings.append(file_finding("SCHEMA", message, doc.path, line, column, dotted(at),
                                         f"Correct the name, or add a {what} named {named[:200]} to {defined_where}."))
    return findings


def certainly_valid(data: Any) -> bool:
    """True only if `data` is valid under the manifest schema (the quick check: False may
    still be valid)."""
    return isinstance(data, dict) and _quick_check()(data)


@lru_cache(maxsize=1)
def _quick_check() -> Any:
    from linter.manifest.quickcheck import compile_schema

    return compile_schema(manifest_schema_json())


def certainly_valid_beyond(data: Any, accepted: dict | None) -> bool:
    """certainly_valid for `data` whose top-level values are partly the very objects of
    `accepted`, a manifest the schema check accepted (the catalog fills node_pools and network
    in copies, and shares the rest): only the other values are checked, each against its
    section's schema. The manifest schema's top level holds no rule across sections (only
    `type`, `properties`, `required`, `additionalProperties`), so with the same keys the rest
    is as valid as it was."""
    if accepted is None or not isinstance(data, dict) or data.keys() != accepted.keys():
        return certainly_valid(data)
    return all(value is accepted[key] or _quick_section(key)(value) for key, value in data.items())


@lru_cache(maxsize=None)
def _quick_section(key: str) -> Any:
    """The quick check of one top-level section (`plan`, `node_pools`, ...) alone."""
    from linter.manifest.quickcheck import compile_schema

    schema = manifest_schema_json()
    return compile_schema({"$defs": schema.get("$defs", {}), **schema["properties"][key]})


def certainly_valid_plan(plan: Any) -> bool:
    """certainly_valid for a plan: section alone (the sizer's drafts)."""
    return isinstance(plan, dict) and _quick_section("plan")(plan)


def explain_errors(validator: Any, doc: Document) -> list[Result]:
    """Every schema error in `doc`, as findings at the offending key."""
    if not isinstance(doc.data, dict):
        return [file_finding("SCHEMA", f"the top level is {kind(doc.data)}; expected a mapping", doc.path, 1, 1)]
    findings: list[Result] = []
    seen: set[tuple] = set()
    for error in validator.iter_errors(doc.data):
        for path, message in _explain(error):
            if (path, message) in seen:
                continue
            seen.add((path, message))
            line, column = doc.position(path)
            findings.append(file_finding("SCHEMA", message, doc.path, line, column, dotted(path)))
    return sorted(findings, key=lambda r: (r.line, r.column, r.message))


def _as_number(value: Any, expected: list[str]) -> str:
    """How to write a number that YAML 1.1 would have read in this text (`1_6`, `0b101`)."""
    number = legacy_number(value) if isinstance(value, str) and {"integer", "number"} & set(expected) else None
    if number is None:
        return ""
    why = [words for present, words in (("_" in value, "no _ separators"), ("0b" in value.lower(), "no 0b binary"),
                                       (value[:1] in "+-" and value[1:3].lower() in ("0x", "0o"), "no sign before 0x or 0o"))
           if present]
    return (f"; YAML 1.2, which hwlint and editors read, has {' and '.join(why) or 'no such number'}: "
            f"write {number if isinstance(number, int) else repr(number)}")


def _explain(error: Any) -> list[tuple[tuple, str]]:
    path = tuple(error.absolute_path)
    where = dotted(path) or "the top level"
    kind, value, schema = error.validator, error.instance, error.schema
    if kind == "additionalProperties":
        known = sorted(schema.get("properties", {}))
        unknown = [key for key in value if key not in known]
        out = [
            (path + (key,), f'unknown key "{key[:200]}" in {where}{suggest(key, known) or "; known keys: " + ", ".join(known)}')
            for key in unknown[:MAX_UNKNOWN_KEYS]
        ]
        if len(unknown) > MAX_UNKNOWN_KEYS:
            rest = len(unknown) - MAX_UNKNOWN_KEYS
            out.append((path, f"{where} has {rest:,} more unknown keys; known keys: {', '.join(known)}"))
        return out
    if kind == "required":
        missing = [k for k in error.validator_value if k not in value]
        return [(path, f'{where} is missing the required key "{k}"') for k in missing]
    if kind == "anyOf" and {"type": "null"} in error.validator_value:
        # a key that may be blank: explain what its value should be, not that it may be empty
        null_branch = error.validator_value.index({"type": "null"})
        explained = [found for sub in error.context if sub.relative_schema_path[0] != null_branch for found in _explain(sub)]
        if explained:
            return explained
    if kind == "type":
        expected = error.validator_value
        expected = [t for t in (expected if isinstance(expected, list) else [expected]) if t != "null"]
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in expected)
        return [(path, f"{where} must be {words}, not {describe(value)}{_as_number(value, expected)}")]
    if kind in ("enum", "const"):
        options = [o for o in error.validator_value if o is not None] if kind == "enum" else [error.validator_value]
        listed = ", ".join(str(o) for o in options)
        return [(path, f"{where} is {describe(value)}; expected one of: {listed}{suggest(value, options)}")]
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        relation = {
            "minimum": "at least",
            "exclusiveMinimum": "greater than",
            "maximum": "at most",
            "exclusiveMaximum": "less than",
        }[kind]
        return [(path, f"{where} is {describe(value)}; it must be {relation} {error.validator_value:g}")]
    if kind in ("minItems", "maxItems", "minLength", "maxLength"):
        # jsonschema's own message repeats the whole value, which may be megabytes long
        unit = "items" if kind.endswith("Items") else "characters"
        relation = "at least" if kind.startswith("min") else "at most"
        return [(path, f"{where} has {len(value):,} {unit}; it must have {relation} {error.validator_value:,}")]
    if kind == "pattern":
        # a `|` or `>` block keeps its final line break, which the message would show as a space
        why = "; it ends in a line break: remove it (a | or > block keeps one)" \
            if isinstance(value, str) and value.endswith("\n") else ""
        return [(path, f"{where} is {describe(value)}, which does not match the expected form {error.validator_value}{why}")]
    message = error.message if len(error.message) <= 300 else error.message[:300] + "…"
    return [(path, f"{where}: {message}")]
