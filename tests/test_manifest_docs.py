"""docs/manifest.md is generated from the models and the bundled examples, so it cannot drift."""

from __future__ import annotations

from conftest import ROOT
from linter.report import manifest_docs
from linter.schema import manifest_schema


def test_the_committed_manifest_page_is_current():
    expected = manifest_docs.render(manifest_schema(), manifest_docs.bundled_examples(ROOT))
    assert (ROOT / "docs" / "manifest.md").read_text(encoding="utf-8") == expected, \
        "run: python -m linter.schema"


def test_every_key_of_the_models_has_a_row():
    text = (ROOT / "docs" / "manifest.md").read_text(encoding="utf-8")
    from linter.manifest.model import ModelShape, Plan

    for model in (Plan, ModelShape):
        assert all(f"| `{key}`" in text for key in model.model_fields), model.__name__
