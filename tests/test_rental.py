"""Rented capacity: the provider's facility and fabric are not ours to check, everything that
depends on our plan, data and the instance's own specification still is.

The mechanism is data: rules list conditions from rules/conditions.yaml in
`not_applicable_when:`; these tests go through the command line on the rental example.
"""

from __future__ import annotations

import json

import pytest

from conftest import EXAMPLES
from linter.engine.rules import load_pack

RENTED = EXAMPLES / "rented-h100-cluster.hw.yaml"


def results(hwlint, path):
    run = hwlint("check", "--format", "json", path)
    assert run.code in (0, 1), run.err
    return {r["rule_id"]: r for r in json.loads(run.out)["manifests"][0]["results"]}


def test_the_providers_facility_makes_every_power_rule_not_applicable(hwlint):
    found = results(hwlint, RENTED)
    power = {k: r for k, r in found.items() if k.startswith("PWR")}
    assert len(power) == len([rule for rule in load_pack().rules if rule.id.startswith("PWR")]) >= 12
    for rule_id, r in power.items():
        assert r["status"] == "skipped", rule_id
        assert r["reason"].startswith("the provider's facility: the capacity is rented from Example Cloud"), r["reason"]


def test_a_provider_managed_fabric_skips_the_switch_rules_but_not_the_bandwidth_per_gpu(hwlint):
    found = results(hwlint, RENTED)
    for rule_id in ("NET001", "NET002", "NET003", "NET004", "NET009", "NET010"):
        assert found[rule_id]["status"] == "skipped", rule_id
        assert "a provider-managed fabric" in found[rule_id]["reason"]
    # per-GPU bandwidth from the instance's spec (8 x 400 Gb/s for 8 GPUs), NIC rate, RDMA
    for rule_id in ("NET005", "NET006", "NET007"):
        assert found[rule_id]["status"] == "pass", rule_id
    assert found["NET005"]["facts"]["facts.nics.gbps_per_gpu"] == 400


@pytest.mark.parametrize("rule_id", ["STO001", "STO002", "STO003", "STO006", "STO007", "GPU001", "MEM004"])
def test_data_checkpoints_backup_and_memory_fit_still_apply(hwlint, rule_id):
    assert results(hwlint, RENTED)[rule_id]["status"] == "pass"


@pytest.mark.parametrize("rule_id", ["STO002", "STO006", "GPU001", "NET005"])
def test_the_rules_that_still_apply_can_fail_on_rented_capacity(hwlint, tmp_path, rule_id):
    text = RENTED.read_text(encoding="utf-8")
    broken = {
        "STO002": text.replace("write_gb_s: 40}", "write_gb_s: 0.5}"),
        "STO006": text.replace("backup: {copies: 1, offsite: true}", "backup: {copies: 0}"),
        "GPU001": text.replace("tensor: 8 ", "tensor: 1 ").replace("data: 16 ", "data: 128 ")
                      .replace("zero_stage: 1", "zero_stage: 0"),
        "NET005": text.replace("count: 8, rate_gbps: 400", "count: 2, rate_gbps: 400"),
    }[rule_id]
    path = tmp_path / "rented.hw.yaml"
    path.write_text(broken, encoding="utf-8")
    assert results(hwlint, path)[rule_id]["status"] == "fail"


def test_bought_or_self_managed_capacity_is_checked_as_ours(hwlint, tmp_path):
    text = RENTED.read_text(encoding="utf-8")
    bought = tmp_path / "bought.hw.yaml"
    bought.write_text(text.replace("mode: rent", "mode: buy"), encoding="utf-8")
    found = results(hwlint, bought)
    assert found["PWR001"]["status"] == "pending"  # no facility given: ours to confirm
    # a fabric that leaves its switches out: not known, to confirm (`switches: []` would fail)
    assert found["NET001"]["status"] == "pending" and found["NET001"]["missing"] == ["network.fabrics[0].switches"]
    own_fabric = tmp_path / "own-fabric.hw.yaml"
    own_fabric.write_text(text.replace("managed_by: provider", "managed_by: owner"), encoding="utf-8")
    found = results(hwlint, own_fabric)
    assert found["PWR001"]["status"] == "skipped"
    assert found["NET001"]["status"] == "pending"
    listed_empty = tmp_path / "no-switches.hw.yaml"
    listed_empty.write_text(text.replace("managed_by: provider", "managed_by: owner\n      switches: []"), encoding="utf-8")
    assert results(hwlint, listed_empty)["NET001"]["status"] == "fail"


def test_a_rule_naming_an_unknown_condition_is_a_load_error(hwlint, tmp_path, monkeypatch):
    monkeypatch.setenv("HWLINT_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "mine.yaml").write_text(
        "rules:\n  - id: PWR901\n    title: Mine\n    severity: error\n    tiers: all\n"
        "    not_applicable_when: [provider-facilty]\n    require: 'true'\n    message: m\n    fix: f\n"
        "    cite: [nec-210]\n    at: facility\n", encoding="utf-8")
    run = hwlint("check", "--rules", folder, RENTED)
    assert run.code == 2
    assert "mine.yaml:6:" in run.err and 'names the condition "provider-facilty"' in run.err
    assert "did you mean" in run.err and "provider-facility" in run.err
