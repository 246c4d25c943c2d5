"""Write every generated file: the JSON Schemas from the pydantic models, and the prebuilt
forms of the built-in rules and catalog.

Run `python -m linter.schema` to refresh `schemas/manifest.schema.json`,
`schemas/rule.schema.json` and `schemas/manifest.shape.json` (the models' shape that
linter.manifest.dump reads, so a pack is built without pydantic); a test fails when a
committed file differs from what the models generate. It also writes `rules/loaded.json` and
`catalog/loaded.json`, the loader's Documents of the YAML files there (linter.manifest.prebuilt:
a pack is built without parsing them), and `rules/compiled.json`, the Python of the built-in
rule sources (linter.engine.compiler: a pack is built without Jinja2), which tests keep
current too: run it after editing a rule or catalog file, or the compiler.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic.json_schema import GenerateJsonSchema

from linter.paths import data_dir, manifest_schema_path


class _OmitNull(GenerateJsonSchema):
    """Optional fields are written as the plain type: the loader drops keys given with no
    value, so `null` never reaches validation, and error messages stay simple."""

    def nullable_schema(self, schema: Any) -> Any:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: Any) -> Any:
        generated = super().default_schema(schema)
        if generated.get("default", 0) is None:
            generated.pop("default")
        return generated

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False  # "Pue" on hover says nothing; the description says what the key means


# Relative: resolved against wherever the file is read from (the package's copy, or the copy
# `hwlint init` writes beside a manifest), so it always names a file that exists.
SCHEMA_ID = "hwlint.schema.json"


def manifest_schema() -> dict[str, Any]:
    from linter.manifest.model import Manifest

    schema = Manifest.model_json_schema(by_alias=True, schema_generator=_OmitNull)
    _describe_policy(schema["$defs"]["Policy"])
    for node in (schema, *schema["$defs"].values()):
        _accept_blanks(node)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    return schema


def _describe_policy(policy: dict[str, Any]) -> None:
    """Policy keys are described by rules/policy.yaml (meaning, unit, default), not twice."""
    import yaml

    defaults = yaml.safe_load((data_dir("rules") / "policy.yaml").read_text(encoding="utf-8"))
    for key, prop in policy.get("properties", {}).items():
        entry = defaults.get(key)
        if "description" in prop or not isinstance(entry, dict):
            continue
        unit = entry.get("unit") or ""
        unit = unit if unit in ("%", "x") else f" {unit}" if unit else ""
        prop["description"] = f"{entry['means']}; default {entry['default']}{unit}"


def _accept_blanks(node: dict[str, Any]) -> None:
    """A key given with no value (`key:`) means "to confirm": the loader drops it before
    validation, so it is accepted wherever the key may be left out. Say so in the schema, so
    an editor does not flag the blanks `hwlint init` writes. (Required keys stay non-null.)"""
    required = set(node.get("required", ()))
    for key, prop in node.get("properties", {}).items():
        if key in required:
            continue
        if "$ref" in prop:
            prop["anyOf"] = [{"$ref": prop.pop("$ref")}, {"type": "null"}]
        elif "anyOf" in prop:
            prop["anyOf"].append({"type": "null"})
        elif isinstance(prop.get("type"), str):
            prop["type"] = [prop["type"], "null"]
        else:
            continue
        if "enum" in prop:
            prop["enum"] = [*prop["enum"], None]


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def render_shape() -> str:
    """schemas/manifest.shape.json: linter.manifest.dump's shape of the models, one field a line."""
    from linter.manifest.dump import model_shape

    return _shape_text(model_shape(), 0) + "\n"


def _shape_text(node: tuple, depth: int) -> str:
    if node[0] != "model":
        return json.dumps(node)
    pad = "  " * (depth + 1)
    fields = [f"{pad}[{json.dumps(list(f[:4]))[1:-1]}, {_shape_text(f[4], depth + 1)}]" for f in node[1]]
    return '["model", [\n' + ",\n".join(fields) + "\n" + "  " * depth + "]]"


if __name__ == "__main__":
    from linter.engine.rules import rule_schema

    from linter.manifest import prebuilt
    from linter.manifest.dump import SHAPE_FILE

    from linter.engine.compiler import TABLE
    from linter.engine.rules import compiled_table

    for path, text in ((manifest_schema_path(), render(manifest_schema())),
                       (data_dir("schemas") / "rule.schema.json", render(rule_schema())),
                       (data_dir("schemas") / SHAPE_FILE, render_shape()),
                       *((data_dir(name) / prebuilt.LOADED, prebuilt.render(data_dir(name))) for name in ("rules", "catalog")),
                       (data_dir("rules") / TABLE, compiled_table())):
        if path.parent.name == "rules" and path.name == TABLE:
            from pathlib import Path

            from linter.report import manifest_docs

            root = Path(__file__).resolve().parents[1]
            if (root / "docs").is_dir():  # a checkout, not an installed wheel
                (root / "docs" / "manifest.md").write_text(
                    manifest_docs.render(manifest_schema(), manifest_docs.bundled_examples(root)), encoding="utf-8")
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
