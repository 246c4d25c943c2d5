"""Load rule packs: YAML records validated against schemas/rule.schema.json and compiled once.

A rule pack is a folder of `*.yaml` files, each holding `rules: [...]`. Loading checks
every record against the rule schema, rejects duplicate ids, compiles `when`, `require`,
`message`, `fix` and `at` in the sandbox, and checks that every `manifest.` path they read
exists in the manifest schema and every `facts.` name exists. Any problem is a RuleLoadError
that names the rule file and line; a rule is never silently dropped.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.engine.packcache import DATA_FILES, MAX_RULE_BYTES, pack_files, rule_files  # noqa: F401 - DATA_FILES re-exported
from linter.manifest.loader import Document, InputError
from linter.manifest.prebuilt import load_file
from linter.paths import data_dir
from linter.record import field, record
from linter.results import RESERVED_LAYERS, dotted, layer_of
from linter.manifest.validate import explain_errors, suggest

TIER_NAMES = ("single-gpu", "single-node", "multi-node", "large-cluster")
MAX_RULES = 2_000  # rules in one pack, the built-in ones included, counted before any is compiled


class Spec:
    """A rule record (or one of its test cases) as plain attributes, named as in the rule
    file, defaults filled in. A plainly valid record is read by `quick_specs`; any other goes
    through jsonschema and the pydantic models in linter.engine.rulespec (`plain_spec`). The
    loaded pack holds only these, so neither a pack build nor a cached pack needs pydantic."""

    def __init__(self, values: dict[str, Any]):
        self.__dict__.update(values)

    def __repr__(self) -> str:
        return f"Spec({self.__dict__!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Spec) and self.__dict__ == other.__dict__


class RuleLoadError(Exception):
    """A rule pack cannot be used; `problems` are 'file:line:col: message' strings."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@record
class Rule:
    spec: Spec
    file: str
    line: int
    when: Any
    require: Any
    message: Any
    fix: Any
    at: Any
    evidence: Any = None
    each: Any = None  # the failing items: `message` and `at` are rendered once per item, as `item`
    layer: str = field(init=False)

    def __post_init__(self) -> None:
        self.layer = layer_of(self.spec.id)

    @property
    def id(self) -> str:
        return self.spec.id


@record
class RulePack:
    rules: list[Rule]
    references: dict[str, dict[str, Any]]
    tiers: list[dict[str, Any]]
    policy: dict[str, dict[str, Any]]
    folders: list[Path]
    conditions: list[dict[str, Any]] = field(default_factory=list)
    # linter.manifest.dump.shape(): the manifest models as plain data, built with the pack so
    # that a cached pack carries it and a valid manifest is reviewed without pydantic
    manifest_shape: Any = None
    catalog_folders: list[Path] = field(default_factory=list)  # team catalogs (--catalog), after the built-in one
    # the built-in catalog as loaded (linter.manifest.catalog.load_catalog()), so that a cached
    # pack spares a one-manifest check parsing the catalog files (their bytes are in the cache key)
    catalog: Any = None
    # (source, kind) -> compiled, for the `when` and `reason` of tiers.yaml and conditions.yaml:
    # compiled with the pack, so a cached pack runs them without compiling again
    compiled: dict[tuple[str, str], Any] = field(default_factory=dict)

    def get(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)


def rule_schema() -> dict[str, Any]:
    from linter.engine.rulespec import RuleFile

    schema = RuleFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://hwlint.invalid/schemas/rule.schema.json"
    return schema


@lru_cache(maxsize=1)
def _rule_validator() -> Any:
    """jsonschema's validator for rule files, `pattern` read as pydantic reads it, so
    "OPS901\\n" is refused here, with the file and line, and never reaches pydantic."""
    from linter.manifest.validate import strict_validator

    return strict_validator(json.loads((data_dir("schemas") / "rule.schema.json").read_text(encoding="utf-8")))


def load_pack(extra: list[str] | tuple[str, ...] = (), builtin: bool = True,
              catalogs: list[str] | tuple[str, ...] = (), cache: Any = None) -> RulePack:
    """The built-in rules (unless `builtin` is false) plus the rule folders in `extra`, with
    the built-in catalog and the team catalog folders `catalogs` (checked: CatalogError);
    served from the pack cache (linter.engine.packcache; `cache`: its packcache.Choice) when no file
    it depends on changed."""
    from linter.engine.packcache import cached

    folders = ([data_dir("rules")] if builtin else []) + [Path(f) for f in extra]
    # Naming a folder twice (e.g. `--rules rules` in this repository) loads it once.
    folders = [f for i, f in enumerate(folders) if f.resolve() not in {g.resolve() for g in folders[:i]}]
    teams = [Path(c) for c in catalogs]
    return cached(lambda: _build_pack(folders, teams), folders, data_dir("schemas"), teams, cache)


def _build_pack(folders: list[Path], catalogs: list[Path] | None = None) -> RulePack:
    from linter.manifest.catalog import load_catalog
    from linter.manifest.dump import shape

    base = data_dir("rules")
    pack = RulePack(
        rules=[],
        references=load_file(str(base / "references.yaml")).data["references"],
        tiers=load_file(str(base / "tiers.yaml")).data["tiers"],
        policy=load_file(str(base / "policy.yaml")).data,
        folders=folders,
        conditions=load_file(str(base / "conditions.yaml")).data["conditions"],
        manifest_shape=shape(),
        catalog=load_catalog(tuple(str(c) for c in catalogs or ())),  # team entries checked once, for the cache
        catalog_folders=list(catalogs or ()),
    )
    _compile_tests(pack)
    problems: list[str] = []
    seen: dict[str, str] = {}
    budget = _LoadBudget()
    for folder in folders:
        if not folder.is_dir():
            raise RuleLoadError([f"{folder}: not a folder of rule files"])
        for path in rule_files(folder):
            for rule in _load_file(path, folder, pack, problems, budget):
                where = f"{rule.file}:{rule.line}"
                if rule.id in seen:
                    problems.append(f"{where}:1: rule {rule.id} is defined twice (first at {seen[rule.id]})")
                    continue
                seen[rule.id] = where
                pack.rules.append(rule)
    if problems:
        raise RuleLoadError(problems)
    return pack


def _compile_tests(pack: RulePack) -> None:
    """The tier and condition tests, compiled once with the pack. One that does not compile
    is left out here and fails where the review runs it, as it would without the cache."""
    from linter.engine.compiler import compiled

    for entry in (*pack.tiers, *pack.conditions):
        for key, kind in TEST_SOURCES:
            source = entry.get(key)
            if not isinstance(source, str):
                continue
            try:
                pack.compiled[(source, kind)] = compiled(source, kind)
            except Exception:  # noqa: BLE001 - reported by the review that runs it
                continue


class _LoadBudget:
    """What building one pack may spend: MAX_RULES rules, and the pack's CPU-time budget
    (sandbox.PACK_BUDGET, the same as for running it on a manifest). Past either, the pack
    is refused at once, naming the file (and rule) where it ran out."""

    def __init__(self) -> None:
        from linter.engine.sandbox import PACK_BUDGET, cpu_time

        self.clock, self.seconds = cpu_time, PACK_BUDGET
        self.deadline, self.rules = cpu_time() + PACK_BUDGET, 0

    def spend(self, where: str, rules: int = 0) -> None:
        self.rules += rules
        if self.rules > MAX_RULES:
            raise RuleLoadError([f"{where}: the rule pack would hold {self.rules:,} rules with this file; a pack may "
                                 f"hold at most {MAX_RULES:,} (the built-in rules included)"])
        if self.clock() > self.deadline:
            raise RuleLoadError([f"{where}: loading the rule pack used more than {self.seconds:g} s of CPU time; "
                                 "refusing it: make the rule files fewer, smaller or simpler"])


def _load_file(path: Path, folder: Path, pack: RulePack, problems: list[str], budget: _LoadBudget) -> list[Rule]:
    try:
        doc = load_file(str(path), str(folder), MAX_RULE_BYTES, "rule files")
    except InputError as exc:
        problems.append(f"{path}:{exc.line}:{exc.column}: {exc.what}")
        return []
    records = doc.data.get("rules") if isinstance(doc.data, dict) else None
    budget.spend(f"{path}:1:1", len(records) if isinstance(records, list) else 0)
    specs = quick_specs(doc.data)
    if specs is None:  # not plainly valid: jsonschema words the errors, pydantic reads the records
        errors = explain_errors(_rule_validator(), doc)
        if errors:
            problems.extend(f"{path}:{r.line}:{r.column}: {r.message}" for r in errors)
            return []
    out = []
    for index, raw in enumerate(doc.data["rules"]):
        spec = plain_spec(raw) if specs is None else specs[index]
        budget.spend(f"{path}:{doc.position(('rules', index))[0]}:1")
        rule = _compile(spec, doc, index, pack, problems)
        if rule is not None:
            out.append(rule)
    return out


def plain_spec(raw: dict[str, Any]) -> Spec:
    """A rule record validated by RuleSpec (defaults filled in), as a plain Spec."""
    from linter.engine.rulespec import RuleCase, RuleSpec

    model = RuleSpec.model_validate(raw)
    values = {name: getattr(model, name) for name in RuleSpec.model_fields}
    values["tests"] = [Spec({name: getattr(case, name) for name in RuleCase.model_fields}) for case in model.tests]
    return Spec(values)


class _Unsure(Exception):
    """This rule file is for jsonschema and pydantic to judge."""


def quick_specs(data: Any) -> list[Spec] | None:
    """The records of a rule file as `plain_spec` gives them, without jsonschema or pydantic;
    None unless the file is plainly valid (then the slow path finds and words the errors).

    Sound, never complete, like linter.manifest.quickcheck, whose predicate it uses on
    schemas/rule.schema.json: it may send a valid file the slow way, never let through one
    that jsonschema or pydantic would refuse. A key left out gets the schema's default, which
    pydantic wrote there from the models; a record or a list of records becomes Spec objects
    as in `plain_spec`."""
    check, read = _quick_rule_check()
    if not check(data):
        return None
    try:
        return read(data["rules"])
    except _Unsure:
        return None


@lru_cache(maxsize=1)
def _quick_rule_check() -> tuple[Any, Any]:
    from linter.manifest.quickcheck import compile_schema

    schema = json.loads((data_dir("schemas") / "rule.schema.json").read_text(encoding="utf-8"))
    return compile_schema(schema), _reader(schema["properties"]["rules"], schema["$defs"], ())


def _unsure(value: Any) -> Any:
    raise _Unsure


def _reader(node: dict[str, Any], defs: dict[str, Any], within: tuple[str, ...]) -> Any:
    """A function from a value valid under `node` to what pydantic's models give for it: an
    object of a `$defs` model as a Spec with every field (defaults filled in), a list of them
    as a list of Specs; None where the value is taken as it is."""
    from linter.manifest.loader import plain_copy

    if "$ref" in node:
        name = node["$ref"].split("/")[-1]
        if name in within:
            return _unsure  # a model within itself: not in the rule format, so not handled here
        fields = tuple((key, ("value", sub["default"]) if "default" in sub else None, _reader(sub, defs, (*within, name)))
                       for key, sub in defs[name]["properties"].items())

        def read(value: Any) -> Spec:
            values = {}
            for key, default, inner in fields:
                if key in value:
                    values[key] = value[key] if inner is None else inner(value[key])
                elif default is not None:
                    values[key] = plain_copy(default[1])
                else:
                    raise _Unsure  # required, so present in a valid record; or a default the schema does not give
            return Spec(values)

        return read
    items = node.get("items")
    if isinstance(items, dict) and "$ref" in items:
        each = _reader(items, defs, within)
        return lambda value: [each(item) for item in value]
    if "anyOf" in node and any("$ref" in option or "$ref" in option.get("items", {}) for option in node["anyOf"]):
        return _unsure  # a model among options: not in the rule format, so not handled here
    return None


SOURCES = (("when", "expr"), ("require", "expr"), ("message", "tmpl"), ("fix", "tmpl"), ("at", "tmpl"),
           ("evidence", "tmpl"), ("each", "expr"))  # a rule's expressions and templates
TEST_SOURCES = (("when", "expr"), ("reason", "tmpl"))  # a tier's or condition's


def renders_as_itself(template: str) -> bool:
    """Whether a template is plain text, its own rendering: no tag, and no carriage return
    (the template language turns line ends into \\n)."""
    return "{" not in template and "\r" not in template


def translated(source: str, kind: str, look_up: bool = True) -> tuple[str | None, list[str]]:
    """The Python of a rule source (None when it has none) and its problems, each worded to
    follow "FILE:LINE:COL: rule ID: KEY ". A source of the built-in pack is looked up in the
    table `python -m linter.schema` writes (rules/compiled.json: the built-in sources that
    have no problem) unless `look_up` is false, else parsed, checked and translated."""
    from linter.engine.compiler import Refused, SourceError, check_template, descendants, known, parse, python_source, references

    text = known(source, kind) if look_up else None
    if text is not None:
        return text, []
    found: list[str] = []
    try:
        tree = parse(source, kind)
        every = descendants(tree)
        for root, path, _ in references(tree, every):
            problem = check_reference(root, path)
            if problem:
                found.append(f"reads {root}.{dotted(path)}, {problem}")
        found.extend(check_template(tree, every))
        text = python_source(tree, kind, every)
    except SourceError as exc:  # reported alone, as a source that does not compile
        return None, [f"is not a valid {'expression' if kind == 'expr' else 'template'}: {exc}"]
    except Refused as exc:  # a construct the checks above name already, or one only the compiler knows
        return None, found or [f"uses {exc}, which rules may not use"]
    except RecursionError:
        return None, ["is nested too deeply to compile"]
    return (None if found else text), found


def compiled_table() -> str:
    """rules/compiled.json: the Python of every source of the built-in pack that has no
    problem (rule files, tiers and conditions), by kind and source."""
    from linter.engine.compiler import table

    folder = data_dir("rules")
    sources = {("true", "expr")}  # `when` when a rule leaves it out
    for path in rule_files(folder):
        for rule in (load_file(str(path), str(folder), MAX_RULE_BYTES, "rule files").data or {}).get("rules", []):
            sources.update((rule[key], kind) for key, kind in SOURCES if isinstance(rule.get(key), str))
    for name in ("tiers", "conditions"):
        for entry in load_file(str(folder / f"{name}.yaml")).data[name]:
            sources.update((entry[key], kind) for key, kind in TEST_SOURCES if isinstance(entry.get(key), str))
    return table({(source, kind): translated(source, kind, look_up=False) for source, kind in sources})


def _compile(spec: Spec, doc: Document, index: int, pack: RulePack, problems: list[str]) -> Rule | None:
    from linter.engine.compiler import from_python

    before = len(problems)

    def where(key: str) -> str:
        line, column = doc.position(("rules", index, key))
        return f"{doc.path}:{line}:{column}: rule {spec.id}"

    compiled: dict[str, Any] = {}
    for key, kind in SOURCES:
        source = getattr(spec, key)
        if source is None:
            continue
        text, found = translated(source, kind)
        problems.extend(f"{where(key)}: {key} {problem}" for problem in found)
        if text is None:
            continue
        for name, keys in (("item", ("message", "at")), ("items", ("fix",))):
            if f"_resolve(ctx, {name!r})" in text and (getattr(spec, "each", None) is None or key not in keys):
                problems.append(f"{where(key)}: {key} reads `{name}`, which only the {' and '.join(keys)} of a rule with "
                                "`each:` (its failing items) can read")
        # messages, fixes and evidence are rendered only for some results: Python compiles
        # them when first rendered; a plain-text `at` is never rendered
        lazy = key in ("message", "fix", "evidence") or (key == "at" and renders_as_itself(source))
        try:
            compiled[key] = from_python(text, kind, lazy)
        except RecursionError:
            problems.append(f"{where(key)}: {key} is nested too deeply to compile")
    for ref in spec.cite:
        if ref not in pack.references:
            problems.append(f"{where('cite')}: cites \"{ref}\", which is not in rules/references.yaml"
                            + suggest(ref, list(pack.references)))
    names = [c["name"] for c in pack.conditions]
    for name in spec.not_applicable_when:
        if name not in names:
            problems.append(f"{where('not_applicable_when')}: names the condition \"{name}\", which is not in "
                            "rules/conditions.yaml" + suggest(name, names))
    if layer_of(spec.id) in RESERVED_LAYERS:
        problems.append(f"{where('id')}: the prefix {layer_of(spec.id)} is reserved for hwlint's own findings; "
                        "choose another 2-5 capital letters, e.g. ORG")
    if spec.never_skip and (spec.waivable or spec.tiers != "all"):
        problems.append(f"{where('never_skip')}: a never-skip rule applies at all tiers and is not waivable "
                        "(tiers: all, waivable: false)")
    if len(problems) > before:
        return None
    line, _ = doc.position(("rules", index))
    return Rule(spec=spec, file=doc.path, line=line, **compiled)


@lru_cache(maxsize=1)
def _schema_tree() -> dict[str, Any]:
    """The manifest schema as nested {key: subtree}; lists are stepped through."""
    from linter.paths import manifest_schema_json

    schema = manifest_schema_json()
    defs = schema.get("$defs", {})

    def tree(node: dict, depth: int = 0) -> Any:
        if depth > 20:
            return {}
        if "$ref" in node:
            node = defs[node["$ref"].split("/")[-1]]
        kinds = node.get("type")
        if "items" in node and "array" in (kinds if isinstance(kinds, list) else [kinds]):
            return {"[]": tree(node["items"], depth + 1)}
        if "properties" in node:
            return {k: tree(v, depth + 1) for k, v in node["properties"].items()}
        for option in node.get("anyOf", []):
            sub = tree(option, depth + 1)
            if sub:
                return sub
        return {}

    return tree(schema)


def check_reference(root: str, path: tuple) -> str | None:
    """None if `root.path` can exist, else the problem in words."""
    if root in ("item", "items"):
        return None  # one or all of the items the rule's `each` lists: whatever they hold
    if root == "facts":
        from linter.physics.facts import FACT_NAMES

        name = path[0] if path else ""
        if name not in FACT_NAMES:
            return "which is not a derived fact" + suggest(str(name), list(FACT_NAMES))
        return None
    node: Any = _schema_tree()
    if root == "pool":
        path = ("node_pools", 0) + tuple(path)
    for step in path:
        if not isinstance(node, dict):
            return None
        if "[]" in node:
            node = node["[]"]
            if isinstance(step, int):
                continue
        if isinstance(step, int):
            continue
        if step not in node:
            return "which is not in the manifest schema" + suggest(str(step), list(node))
        node = node[step]
    return None


def pack_digest(pack: RulePack) -> str:
    """sha256 of the rule pack as loaded: every file the loader reads (`pack_files`: the rule
    files of every folder, the built-in references, tiers and policy), folder by folder in load order, files sorted by name, then
    the catalog (a corrected spec changes results as surely as a changed rule).

    Each file contributes its name, its length and its bytes, so moving text from one file
    to another changes the digest too. The same pack gives the same digest on any machine:
    reports and sign-offs quote it to say exactly which rules judged a manifest.
    """
    from linter.digest import sha256
    from linter.manifest.loader import read_bytes

    parts = []
    catalogs = [data_dir("catalog"), *pack.catalog_folders]
    catalog_files = [(folder, p) for folder in catalogs for p in sorted(folder.glob("*.yaml"))]
    for folder, path in [*pack_files(pack.folders), *catalog_files]:
        data = read_bytes(str(path), str(folder))
        parts += [f"{path.name}\0{len(data)}\0".encode(), data]
    return "sha256:" + sha256(b"".join(parts))
