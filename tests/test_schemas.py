"""The committed JSON Schemas are exactly what the pydantic models generate."""

from __future__ import annotations

import json

from conftest import ROOT
from linter.engine.rules import rule_schema
from linter.schema import manifest_schema, render


def test_manifest_schema_is_current():
    committed = (ROOT / "schemas" / "manifest.schema.json").read_text(encoding="utf-8")
    assert committed == render(manifest_schema()), "run: python -m linter.schema"


def test_rule_schema_is_current():
    committed = (ROOT / "schemas" / "rule.schema.json").read_text(encoding="utf-8")
    assert committed == render(rule_schema()), "regenerate schemas/rule.schema.json from linter.engine.rules.rule_schema()"


def test_manifest_schema_forbids_unknown_keys_everywhere():
    schema = manifest_schema()
    objects = [schema, *schema["$defs"].values()]
    assert all(o.get("additionalProperties") is False for o in objects if o.get("type") == "object")


def test_every_example_validates_against_the_schema():
    from jsonschema import Draft202012Validator
    from ruamel.yaml import YAML

    validator = Draft202012Validator(json.loads((ROOT / "schemas" / "manifest.schema.json").read_text()))
    for path in (ROOT / "examples").glob("*.hw.yaml"):
        data = json.loads(json.dumps(YAML(typ="safe").load(path.read_text()), default=str))
        errors = [e.message for e in validator.iter_errors(data)]
        assert not errors, (path.name, errors)


def test_a_resolved_manifest_is_checked_again_only_where_the_catalog_filled_it():
    """validate.certainly_valid_beyond trusts the sections shared with the data the schema check
    accepted, which is sound only while the schema's top level holds no rule across sections;
    a catalog-filled section that breaks the schema is still caught."""
    import copy

    from conftest import EXAMPLES
    from linter.manifest.catalog import resolve
    from linter.manifest.loader import load_file
    from linter.manifest.validate import certainly_valid, certainly_valid_beyond

    top = json.loads((ROOT / "schemas" / "manifest.schema.json").read_text())
    assert set(top) - {"$defs", "$id", "$schema", "title", "description"} == {
        "type", "properties", "required", "additionalProperties"}
    doc = load_file(str(EXAMPLES / "multi-node-pretrain.hw.yaml"))
    resolved = resolve(doc).data
    assert resolved["node_pools"] is not doc.data["node_pools"] and resolved["plan"] is doc.data["plan"]
    assert certainly_valid_beyond(resolved, doc.data) and certainly_valid(resolved)
    broken = {**resolved, "node_pools": copy.deepcopy(resolved["node_pools"])}
    broken["node_pools"][0]["count"] = -1  # as a catalog value could make it
    assert not certainly_valid_beyond(broken, doc.data) and not certainly_valid(broken)
    extra = {**resolved, "surprise": 1}  # a section the accepted data had not: the whole is checked
    assert not certainly_valid_beyond(extra, doc.data)
    copied = copy.deepcopy(resolved)  # nothing shared (an option's variant): every section is checked
    copied["plan"]["global_batch_tokens"] = "many"
    assert not certainly_valid_beyond(copied, doc.data)
