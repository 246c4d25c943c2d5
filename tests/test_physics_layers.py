"""linter/physics has one module per layer, and each says which rules read its facts, so a
reader goes from a rule id to the numbers it judges in one step."""

from __future__ import annotations

import ast
import re

import pytest
import yaml

from conftest import ROOT

PHYSICS = ROOT / "linter" / "physics"
LAYERS = ("memory", "training", "network", "power", "storage", "procurement")


def _docstring(module: str) -> str:
    return ast.get_docstring(ast.parse((PHYSICS / f"{module}.py").read_text())) or ""


def _rule_ids(text: str) -> set[str]:
    """Rule ids a docstring names, ranges (PWR001-PWR010) spelled out."""
    ids = set(re.findall(r"\b[A-Z]{3}\d{3}\b", text))
    for prefix, first, last in re.findall(r"\b([A-Z]{3})(\d{3})-[A-Z]{3}(\d{3})\b", text):
        ids |= {f"{prefix}{n:03d}" for n in range(int(first), int(last) + 1)}
    return ids


def _readers() -> dict[str, set[str]]:
    """fact name -> ids of the built-in rules whose source reads `facts.<name>`."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / "rules").glob("*.yaml")):
        records = (yaml.safe_load(path.read_text()) or {})
        for rule in records.get("rules", []) if isinstance(records, dict) else []:
            for name in set(re.findall(r"\bfacts\.([a-z_]+)", yaml.safe_dump(rule))):
                out.setdefault(name, set()).add(rule["id"])
    return out


def _owner(fact: str) -> str | None:
    """The layer module whose docstring introduces `fact` (in backticks)."""
    owners = [m for m in LAYERS if f"`{fact}`" in _docstring(m)]
    assert len(owners) <= 1, f"fact {fact} is claimed by {owners}"
    return owners[0] if owners else None


def test_each_layer_has_its_own_module_and_facts_only_assembles():
    assert all((PHYSICS / f"{m}.py").exists() for m in LAYERS)
    facts = ast.parse((PHYSICS / "facts.py").read_text())
    defined = {n.name for n in facts.body if isinstance(n, ast.FunctionDef)}
    assert defined <= {"derive", "layout_facts", "node_facts", "layout_memory", "_counts"}, defined


@pytest.mark.parametrize("fact", sorted(n for n in _readers() if _owner(n)))
def test_the_layer_module_names_every_rule_that_reads_its_fact(fact):
    named = _rule_ids(_docstring(_owner(fact)))
    missing = sorted(_readers()[fact] - named)
    assert not missing, f"linter/physics/{_owner(fact)}.py: rules {missing} read facts.{fact} but its docstring does not name them"


def test_every_layer_fact_a_rule_reads_has_an_owner():
    # facts every layer shares (counts, the primary pool, the policy) and those the review sets
    shared = {"policy", "compute_nodes", "compute_servers", "nodes_total", "spare_nodes", "gpus_total", "gpus_training", "gpus_per_node_min",
              "gpus_per_node_max", "gpu_memory_total_gb", "primary_pool", "tier", "tier_inferred", "tier_inferred_reason",
              "tier_rank", "today", "catalog", "catalog_dates", "catalog_bounds", "plan"}
    orphans = sorted(n for n in _readers() if n not in shared and _owner(n) is None)
    assert not orphans, f"facts read by rules but introduced by no layer module's docstring: {orphans}"
