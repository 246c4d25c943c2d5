"""The catalog: every entry sourced and dated, valid against the models, cross-references sound."""

from __future__ import annotations

import pytest
from ruamel.yaml import YAML

from conftest import ROOT
from linter.manifest.catalog import load_catalog
from linter.manifest.model import CatalogGpu, CatalogNic, CatalogSwitch, CatalogSystem

MODELS = {"gpus": CatalogGpu, "nics": CatalogNic, "switches": CatalogSwitch, "systems": CatalogSystem}


def entries():
    for path in sorted((ROOT / "catalog").glob("*.yaml")):
        for kind, items in (YAML(typ="safe").load(path.read_text()) or {}).items():
            if kind == "bounds":
                continue  # bounds.yaml: which values the parts bound, not parts (test_bounds_name_real_fields)
            for item in items:
                yield pytest.param(kind, item, id=f"{kind}:{item['name']}")


@pytest.mark.parametrize("kind, entry", list(entries()))
def test_entry_is_valid_sourced_and_dated(kind, entry):
    """Sourced, and dated by its document, or saying why the document prints no date; never
    dated by the day it was read."""
    model = MODELS[kind].model_validate(entry)
    assert model.source.title and (model.as_of or model.undated)
    assert model.as_of is None or model.as_of != model.read_on, "as_of is the reading day: give the printed date or undated"


@pytest.mark.parametrize("change, words", [
    ({"undated": None}, "give it, or say in `undated` why the document prints no date"),
    ({"as_of": "2025-01-01"}, "both given"),
])
def test_an_entry_is_dated_or_says_why_not(change, words):
    entry = {"name": "X", "vendor": "NVIDIA", "gpu": {"model": "B200-SXM-180GB", "count": 8},
             "source": {"title": "a page"}, "undated": "the page prints no date"}
    entry.update({k: v for k, v in change.items() if v is not None})
    if change.get("undated", "") is None:
        entry.pop("undated")
    with pytest.raises(ValueError, match=words.split(":")[0][:20]):
        CatalogSystem.model_validate(entry)


def test_required_parts_are_present():
    catalog = load_catalog()
    for name in ["V100 SXM2", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H100-PCIe-80GB", "H200-SXM-141GB",
                 "B200-SXM-180GB", "L40S", "RTX-4090", "RTX-6000-Ada", "MI250X", "MI300X"]:
        assert catalog.find("gpus", name), name
    assert catalog.find("nics", "ConnectX-7") and catalog.find("switches", "QM9700")
    assert any(s["kind"] == "ethernet" and s.get("port_rate_gbps", 0) >= 400 for s in catalog.switches.values())
    assert catalog.find("systems", "DGX-A100") and catalog.find("systems", "DGX-H100")


def test_domain_facts_hold():
    catalog = load_catalog()
    assert "bf16" not in catalog.find("gpus", "V100-SXM2-32GB")["precisions"]
    assert catalog.find("gpus", "RTX-4090")["link"]["kind"] == "pcie"
    assert catalog.find("gpus", "H100-PCIe-80GB")["link"] == {**catalog.find("gpus", "H100-PCIe-80GB")["link"], "kind": "nvlink-bridge", "max_gpus": 2}
    assert catalog.find("switches", "QM9700")["ports"] == 64
    assert catalog.find("systems", "DGX-H100")["max_power_kw"] == 10.2


def test_systems_name_catalog_parts():
    catalog = load_catalog()
    for system in catalog.systems.values():
        assert catalog.find("gpus", system["gpu"]["model"]), system["name"]
        for nic in system.get("nics", []):
            assert catalog.find("nics", nic["model"]), (system["name"], nic["model"])


def test_bounds_name_real_fields():
    """Every bound in catalog/bounds.yaml compares keys that exist: the catalog key on at least one
    entry of its kind, the manifest key in the manifest schema where such a part is named."""
    import json

    catalog = load_catalog()
    schema = json.loads((ROOT / "schemas" / "manifest.schema.json").read_text())
    text = json.dumps(schema)
    assert catalog.bounds, "catalog/bounds.yaml lists no bounds"
    for bound in catalog.bounds:
        entries = list(getattr(catalog, bound["part"]).values())
        for key in str(bound["catalog"]).split("*"):
            key = key.strip().removesuffix(".")
            if not key:
                continue
            head = key.split(".")[0]
            assert any(head in e for e in entries), (bound, key)
        for key in str(bound["manifest"]).split("*"):
            key = key.strip().removesuffix(".")
            if key:
                assert f'"{key.split(".")[-1]}"' in text or key.endswith("*"), (bound, key)
