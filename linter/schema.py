"""Generate the manifest JSON Schema from the pydantic models.

Run `python -m linter.schema` to refresh `schemas/manifest.schema.json` and
`schemas/rule.schema.json`; a test fails when a committed file differs from what the models
generate.
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


def manifest_schema() -> dict[str, Any]:
    from linter.manifest.model import Manifest

    schema = Manifest.model_json_schema(by_alias=True, schema_generator=_OmitNull)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://hwlint.invalid/schemas/manifest.schema.json"
    return schema


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    from linter.engine.rules import rule_schema

    for path, schema in ((manifest_schema_path(), manifest_schema()), (data_dir("schemas") / "rule.schema.json", rule_schema())):
        path.write_text(render(schema), encoding="utf-8")
        print(f"wrote {path}")
