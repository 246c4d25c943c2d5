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


def test_every_key_has_an_example_but_the_liquid_share_no_document_gives():
    """An example from the bundled examples, the catalog, the policy or the models. The share
    of heat a liquid loop carries is printed by no document the catalog read
    (catalog/LEFT_OUT.md), so it has none rather than a made-up one; nor has an option's
    rack_scale (only the catalog's GB200 entry sets one, and no example's option changes it)."""
    missing = manifest_docs.missing_examples(manifest_schema(), manifest_docs.bundled_examples(ROOT))
    assert sorted(missing) == ["node_pools[].liquid_heat_pct", "procurement.options[].node_pools[].liquid_heat_pct",
                       "procurement.options[].node_pools[].rack_scale"], missing
