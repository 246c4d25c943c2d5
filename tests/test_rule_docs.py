"""Rule documentation: every rule carries its why, examples and known sources; `hwlint rules
show` prints them; docs/rules.md is generated from the same data and must not go stale."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from ruamel.yaml import YAML

from conftest import ROOT
from linter.report.docs import policy_used
from linter.engine.rules import load_pack

PACK = load_pack()
IDS = [r.id for r in PACK.rules]


@pytest.mark.parametrize("rule", PACK.rules, ids=IDS)
def test_rule_has_why_examples_and_known_sources(rule):
    spec = rule.spec
    for field in ("why", "example_fail", "example_pass"):
        assert (getattr(spec, field) or "").strip(), f"{rule.id} lacks {field}"
    assert spec.example_fail.strip() != spec.example_pass.strip()
    unknown = [key for key in spec.cite if key not in PACK.references]
    assert spec.cite and not unknown, unknown


def addressed_sources(spec, references: dict) -> list[str]:
    """The rule's sources that have an address (a standard, datasheet, paper or vendor guide);
    the two source articles have none."""
    return [key for key in spec.cite if (references.get(key) or {}).get("url")]


@pytest.mark.parametrize("rule", PACK.rules, ids=IDS)
def test_rule_cites_a_source_with_an_address_or_says_why_none_exists(rule):
    assert addressed_sources(rule.spec, PACK.references) or (rule.spec.uncited or "").strip(), (
        f"{rule.id} cites only {rule.spec.cite}: cite a standard, datasheet, paper or vendor guide with an address "
        "(rules/references.yaml), or say in `uncited` why none exists")


def test_the_source_articles_alone_do_not_count_as_addressed():
    from types import SimpleNamespace

    articles = SimpleNamespace(cite=["seed-hardware-layers", "seed-gear-check"])
    assert addressed_sources(articles, PACK.references) == []
    with_standard = SimpleNamespace(cite=["seed-hardware-layers", "nec-210"])
    assert addressed_sources(with_standard, PACK.references) == ["nec-210"]


@pytest.mark.parametrize("rule", PACK.rules, ids=IDS)
def test_rule_examples_are_yaml(rule):
    yaml = YAML(typ="safe", pure=True)
    for snippet in (rule.spec.example_fail, rule.spec.example_pass):
        assert isinstance(yaml.load(snippet), dict)


@pytest.mark.parametrize("rule", PACK.rules, ids=IDS)
def test_rules_show_prints_every_section(hwlint, rule):
    run = hwlint("rules", "show", rule.id.lower())
    assert run.code == 0, run.err
    for heading in ("What it checks:", "Why it matters:", "Fails:", "Passes:", "Fix:", "Sources:"):
        assert heading in run.out, heading
    assert "applies at: " + ("every tier" if rule.spec.tiers == "all" else ", ".join(rule.spec.tiers)) in run.out
    for key in rule.spec.cite:
        assert PACK.references[key]["title"] in run.out
    assert "{{" not in run.out.split("Fix:")[1].split("Sources:")[0]


def test_rules_show_names_the_policy_values_a_rule_reads(hwlint):
    run = hwlint("rules", "show", "GPU006")
    assert "compute_efficiency = 0.57" in run.out


def test_rules_show_an_unknown_rule_suggests_one(hwlint):
    run = hwlint("rules", "show", "GPU0O5")
    assert run.code == 2
    assert "did you mean GPU005?" in run.err


def test_rules_md_is_generated_from_the_rules():
    fresh = subprocess.run([sys.executable, "-m", "linter.report.docs"], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == fresh, "docs/rules.md is stale: run `python -m linter.report.docs > docs/rules.md`"
    for rule in PACK.rules:
        assert f"### {rule.id}: {rule.spec.title}" in committed


def test_a_rule_citing_an_unknown_source_is_a_load_error(hwlint, tmp_path):
    (tmp_path / "x.yaml").write_text(
        "rules:\n  - id: OPS199\n    title: t\n    severity: info\n    tiers: all\n    require: 'true'\n"
        "    message: m\n    fix: f\n    cite: [zero-2021]\n    at: name\n", encoding="utf-8")
    run = hwlint("rules", "list", "--rules", tmp_path)
    assert run.code == 2
    assert 'x.yaml:9:' in run.err and 'cites "zero-2021"' in run.err and 'did you mean "zero-2020"' in run.err


def test_every_policy_value_is_documented_read_and_settable_in_a_manifest(hwlint):
    schema = json.loads(hwlint("schema").out)
    settable = set(schema["$defs"]["Policy"]["properties"])
    for name, spec in PACK.policy.items():
        assert {"default", "unit", "means", "why"} <= set(spec), name
        assert name in settable, f"policy {name} cannot be set in a manifest"
    read = {name for rule in PACK.rules for name in policy_used(rule)}
    assert read <= set(PACK.policy), read - set(PACK.policy)
    engine = {"waiver_max_days",  # read by the engine itself: linter/engine/waivers.py (WVR008)
              "schedule_margin_pct",  # read by the sizer: linter/sizing/search.py
              "storage_growth_pct"}  # read by the sizer: linter/sizing/design.py
    assert set(PACK.policy) - read - engine == set(), "policy values no rule reads"
