"""Issue 24, item 5: every failing item is named. A rule that checks a list (racks, fabrics,
tiers, pools, quotes, catalog values) and fails on two items names both, each with its path and
its own numbers; SARIF and the GitHub annotations get one result per item, at that item's line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLES

from linter.engine.casetest import edit
from linter.engine.rules import Spec
from linter.manifest.loader import load_file
from linter.results import undotted

PRETRAIN = EXAMPLES / "multi-node-pretrain.hw.yaml"
FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
NVL72 = EXAMPLES / "gb200-nvl72-su.hw.yaml"

# rule, base, edits, the two items' paths (as the results name them), a figure of each item's own
CASES = [
    ("PWR002", PRETRAIN, {"facility.racks[0].power_budget_kw": 30, "facility.racks[1].power_budget_kw": 2},
     ["facility.racks[0].power_budget_kw", "facility.racks[1].power_budget_kw"], ["budget of 30 kW", "budget of 2 kW"]),
    ("PWR003", PRETRAIN, {"facility.racks[0].circuits.count": 1, "facility.racks[1].circuits.count": 1},
     ["facility.racks[0].circuits", "facility.racks[1].circuits"], ["at least 51 kW", "at least 16.8 kW"]),
    ("PWR004", PRETRAIN, {"facility.racks[0].cooling_capacity_kw": 30, "facility.racks[1].cooling_capacity_kw": 2},
     ["facility.racks[0].cooling_capacity_kw", "facility.racks[1].cooling_capacity_kw"], ["removes 30 kW", "removes 2 kW"]),
    ("PWR011", NVL72, {"facility.racks[0].liquid_cooling_kw": 60, "facility.racks[1].cooling": "immersion",
                       "facility.racks[1].liquid_cooling_kw": 1},
     ["facility.racks[0].liquid_cooling_kw", "facility.racks[1].liquid_cooling_kw"], ["removes 60 kW", "removes 1 kW"]),
    ("NET002", PRETRAIN, {"network.fabrics[0].switches[0].count": 1, "network.fabrics[1].switches[0].count": 1,
                          "node_pools[0].nics[1].count": 8},
     ["network.fabrics[0].switches", "network.fabrics[1].switches"], ["compute-ib", "storage-eth"]),
    ("NET010", PRETRAIN, {"network.fabrics[0].switches[0].model": "QM8700", "network.fabrics[0].switches[1].model": "QM8700",
                          "network.fabrics[1].switches[0]": {"model": "SN4600C", "role": "single", "count": 2}},
     ["network.fabrics[0].switches", "network.fabrics[1].switches"], ["run at 200 Gb/s", "run at 100 Gb/s"]),
    ("STO003", PRETRAIN, {"storage.checkpoint.tier": "archive", "storage.tiers[0].capacity_tb": 1,
                          "storage.tiers[1].capacity_tb": 1},
     ["storage.tiers[0].capacity_tb", "storage.tiers[1].capacity_tb"], ["must hold 60 TB", "must hold 19.6 TB"]),
    ("PWR005", PRETRAIN, {"facility.racks[0].cooling": "air", "facility.racks[1].other_kw": 40},
     ["facility.racks[0].cooling", "facility.racks[1].cooling"], ["air-cooled at 40.8 kW", "air-cooled at 52.9 kW"]),
    ("PWR009", PRETRAIN, {"node_pools[0].max_power_kw": 4.0, "node_pools[1].gpu": {"count": 8, "max_power_w": 700},
                          "node_pools[1].max_power_kw": 1.1},
     ["node_pools[0].max_power_kw", "node_pools[1].max_power_kw"], ["given 4 kW", "given 1.1 kW"]),
    ("PWR010", FLAWED, {"node_pools[0].max_power_kw": 3500, "node_pools[0].gpu.max_power_w": 7000},
     ["node_pools[0].max_power_kw", "node_pools[0].gpu.max_power_w"], ["3,500 kW", "7,000 W"]),
    ("PWR012", NVL72, {"facility.racks[0].air_cooling_kw": 10, "facility.racks[1].air_cooling_kw": 1},
     ["facility.racks[0].air_cooling_kw", "facility.racks[1].air_cooling_kw"], ["removes 10 kW", "removes 1 kW"]),
    ("NET003", PRETRAIN, {"network.fabrics[0].switches[1].count": 1, "network.fabrics[1].topology": "leaf-spine",
                          "network.fabrics[1].oversubscription": 1,
                          "network.fabrics[1].switches": [{"model": "SN5600", "role": "leaf", "count": 4},
                                                          {"model": "SN5600", "role": "spine", "count": 1, "ports": 8}]},
     ["network.fabrics[0].switches", "network.fabrics[1].switches"], ["have 64 ports", "have 8 ports"]),
    ("BUY005", FLAWED, {}, ["procurement.quotes[0]", "procurement.quotes[1]"],
     ["V100 servers arrives", "InfiniBand switches and cables arrives"]),
    ("BUY006", PRETRAIN, {"procurement.quotes[0].quantity": 30, "procurement.quotes[1].fabric": None},
     ["procurement.quotes[0]", "procurement.quotes[1]"], ["prices 30", "names no pool"]),
    ("BUY008", FLAWED, {"node_pools[0].nics[0].rate_gbps": 400, "network.fabrics[0].switches[0].ports": 64},
     ["node_pools[0].nics[0].rate_gbps", "network.fabrics[0].switches[0].ports"], ["of 400", "12,800"]),
]


def manifest(tmp_path: Path, base: Path, edits: dict) -> Path:
    data = edit(load_file(str(base)).data, Spec({"set": edits, "unset": []}))
    path = tmp_path / "two.hw.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("rule, base, edits, paths, figures", CASES, ids=[c[0] for c in CASES])
def test_two_failing_items_are_both_named_and_located(hwlint, tmp_path, rule, base, edits, paths, figures):
    path = manifest(tmp_path, base, edits)
    doc = load_file(str(path))
    lines = [doc.position(undotted(p))[0] for p in paths]
    assert lines[0] != lines[1]

    text = hwlint("check", path, "--select", rule, "--fail-on", "warning")
    assert text.code == 1, text.out
    finding = next(row for row in text.out.splitlines() if f" {rule} " in row)
    assert finding.startswith(f"{path}:{lines[0]}:"), finding  # at the first item
    for figure in figures:
        assert figure in finding, (figure, finding)

    sarif = json.loads(hwlint("check", path, "--select", rule, "--format", "sarif").out)
    results = sorted((r for r in sarif["runs"][0]["results"] if r["ruleId"] == rule),
                     key=lambda r: paths.index(r["properties"]["manifestPath"]))
    assert [r["properties"]["manifestPath"] for r in results] == paths
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results] == lines
    for result, own, other in zip(results, figures, reversed(figures)):
        message = result["message"]["text"].split(" Fix: ")[0]  # the fix may name every item
        assert own in message and other not in message, message

    annotations = [row for row in hwlint("check", path, "--select", rule, "--format", "github").out.splitlines()
                   if f"hwlint {rule}" in row]
    assert sorted(int(row.split(",line=")[1].split(",")[0]) for row in annotations) == sorted(lines)  # by line

    report = json.loads(hwlint("check", path, "--select", rule, "--format", "json").out)
    result = next(r for r in report["manifests"][0]["results"] if r["rule_id"] == rule)
    assert [i["path"] for i in result["items"]] == paths and [i["line"] for i in result["items"]] == lines


def test_one_failing_item_keeps_one_result_and_its_message(hwlint, tmp_path):
    path = manifest(tmp_path, PRETRAIN, {"facility.racks[0].circuits.count": 1})
    sarif = json.loads(hwlint("check", path, "--select", "PWR003", "--format", "sarif").out)
    results = sarif["runs"][0]["results"]
    assert len(results) == 1 and results[0]["message"]["text"].startswith("A rack of gpu-rack draws 40.8 kW continuously")


def test_the_diff_counts_each_failing_item_on_its_own(hwlint, tmp_path):
    """Two racks short of circuits; fixing the first resolves it, and the second stays open
    (it is not reported as introduced because the finding now points at it)."""
    both = manifest(tmp_path, PRETRAIN, {"facility.racks[0].circuits.count": 1, "facility.racks[1].circuits.count": 1})
    both = both.rename(tmp_path / "both.hw.yaml")
    fixed = manifest(tmp_path, PRETRAIN, {"facility.racks[1].circuits.count": 1}).rename(tmp_path / "fixed.hw.yaml")
    changes = json.loads(hwlint("diff", both, fixed, "--format", "json").out)["manifests"][0]["changes"]

    def pwr003(rows: list[dict]) -> list[str]:
        return [f["path"] for f in rows if f["rule_id"] == "PWR003"]

    assert pwr003(changes["introduced"]) == [], changes["introduced"]
    assert pwr003(changes["still_open"]) == ["facility.racks[1].circuits"]
    assert pwr003(changes["resolved"]) == ["facility.racks[0].circuits"]


def test_a_rule_that_reads_item_without_each_is_refused_with_its_line(hwlint, tmp_path):
    folder = tmp_path / "team-rules"
    folder.mkdir()
    (folder / "team.yaml").write_text(
        "rules:\n"
        "  - id: ORG001\n"
        "    title: Racks have names\n"
        "    severity: warning\n"
        "    tiers: all\n"
        "    require: \"facts.power.racks | length > 0\"\n"
        "    message: \"{{ item.name }} has no name\"\n"
        "    fix: Name it.\n"
        "    cite: [seed-hardware-layers]\n"
        "    at: facility.racks\n"
        "    tests:\n"
        "      - {name: racks, base: ../x.hw.yaml, expect: pass}\n"
        "      - {name: none, base: ../x.hw.yaml, expect: fail}\n")
    run = hwlint("check", "--rules", folder, PRETRAIN)
    assert run.code == 2 and "Traceback" not in run.err, run.err
    assert f"{folder / 'team.yaml'}:7:" in run.err and "message reads `item`, which only the message and at of a rule " \
        "with `each:`" in run.err, run.err
