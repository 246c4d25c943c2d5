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
