"""A list the manifest leaves out is Unknown, never an empty list: every count, sum or maximum
over it waits for it (pending, naming the path), and the budget table says "? — needs ...".
An explicitly empty list (`nics: []`, `switches: []`, `quotes: []`) is the manifest saying
"none" and is judged as such (docs/format.md, "Left out or empty")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from conftest import EXAMPLES

PLAN = """\
plan:
  goal: pretrain
  model: {parameters_billion: 70, layers: 80, hidden_size: 8192, attention_heads: 64, sequence_length: 4096}
  micro_batch_size: 1
  global_batch_size: 1024
  precision: bf16
  optimizer: adamw
  parallelism: {tensor: 8, pipeline: 4, data: 16, zero_stage: 1}
  training_tokens_billion: 2000
  target_duration_days: 120
"""

# The repro: 64 nodes, 512 GPUs, no NICs listed, a fabric of one 64-port leaf.
NO_NICS = f"""\
manifest_version: 1
name: no NICs listed
owner: ml-infra@example.com
date: 2026-11-02
{PLAN}node_pools:
  - name: gpu
    count: 64
    gpu: {{model: H100-SXM5-80GB, count: 8}}
    max_power_kw: 10.2
network:
  fabrics:
    - name: ib
      purpose: compute
      kind: infiniband
      topology: leaf-spine
      oversubscription: 1
      switches:
        - {{model: QM9700, role: leaf, count: 1}}
"""


def _write(tmp_path: Path, text: str, name: str = "m.hw.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _results(hwlint, path: Path) -> dict[str, dict]:
    run = hwlint("check", "--format", "json", path)
    assert run.code in (0, 1), run.err
    return {r["rule_id"]: r for r in json.loads(run.out)["manifests"][0]["results"]}


def _edited(example: str, edit) -> str:
    data = yaml.safe_load((EXAMPLES / example).read_text())
    edit(data)
    return yaml.safe_dump(data, sort_keys=False)


def test_a_pool_without_nics_leaves_the_fabric_ports_unknown(hwlint, tmp_path):
    results = _results(hwlint, _write(tmp_path, NO_NICS))
    for rule in ("NET002", "NET003"):
        assert results[rule]["status"] == "pending", results[rule]
        assert results[rule]["missing"] == ["node_pools[0].nics"]


def test_the_budget_table_says_what_the_leaf_ports_need(hwlint, tmp_path):
    run = hwlint("check", "--format", "markdown", _write(tmp_path, NO_NICS))
    row = next(line for line in run.out.splitlines() if line.startswith("| Leaf switch ports (ib)"))
    assert "? — needs node\\_pools\\[0\\].nics" in row
    assert row.rstrip().endswith("| ? |") and "✅" not in row
    assert not re.search(r"Leaf (switch )?ports[^|]*\| 0 ", run.out)


def test_nics_listed_as_empty_are_none(hwlint, tmp_path):
    """`nics: []` is the manifest saying the nodes have no NIC: the ports are decided (none
    needed) and the missing bandwidth fails where it matters."""
    results = _results(hwlint, _write(tmp_path, NO_NICS.replace("    max_power_kw: 10.2\n",
                                                                 "    max_power_kw: 10.2\n    nics: []\n")))
    assert results["NET002"]["status"] == "pass"
    assert results["NET005"]["status"] == "fail"


def test_a_nic_without_a_count_is_not_one_nic(hwlint, tmp_path):
    def edit(data):
        del data["node_pools"][0]["nics"][0]["count"]

    results = _results(hwlint, _write(tmp_path, _edited("flawed-cluster.hw.yaml", edit)))
    for rule in ("NET002", "NET003"):
        assert results[rule]["status"] == "pending", results[rule]
        assert "node_pools[0].nics[0].count" in results[rule]["missing"]


def test_a_fabric_without_switches_has_unknown_ports_and_power(hwlint, tmp_path):
    def edit(data):
        del data["network"]["fabrics"][0]["switches"]

    results = _results(hwlint, _write(tmp_path, _edited("flawed-cluster.hw.yaml", edit)))
    assert results["NET002"]["status"] == "pending"
    assert "network.fabrics[0].switches" in results["NET002"]["missing"]
    assert results["PWR008"]["status"] == "pending", results["PWR008"]
    assert "network.fabrics[0].switches" in results["PWR008"]["missing"]


def test_a_rack_without_contents_has_an_unknown_load(hwlint, tmp_path):
    def edit(data):
        del data["facility"]["racks"][0]["contents"]

    results = _results(hwlint, _write(tmp_path, _edited("flawed-cluster.hw.yaml", edit)))
    for rule in ("PWR003", "PWR004"):
        assert results[rule]["status"] == "pending", results[rule]
        assert "facility.racks[0].contents" in results[rule]["missing"]


def test_a_network_rack_without_contents_holds_no_nodes_when_the_others_hold_them_all(hwlint, tmp_path):
    """superpod-h100's network racks list switches only: every node is in a GPU rack, so they
    hold none, and the example stays decided."""
    results = _results(hwlint, EXAMPLES / "superpod-h100.hw.yaml")
    for rule in ("PWR003", "PWR004", "PWR008"):
        assert results[rule]["status"] == "pass", results[rule]


def test_quotes_left_out_are_unknown_not_none(hwlint, tmp_path):
    def edit(data):
        del data["procurement"]["quotes"]

    results = _results(hwlint, _write(tmp_path, _edited("flawed-cluster.hw.yaml", edit)))
    for rule in ("BUY003", "BUY005"):
        assert results[rule]["status"] == "pending", results[rule]
        assert results[rule]["missing"] == ["procurement.quotes"]

    def empty(data):
        data["procurement"]["quotes"] = []

    results = _results(hwlint, _write(tmp_path, _edited("flawed-cluster.hw.yaml", empty), "empty.hw.yaml"))
    assert results["BUY003"]["status"] == "skipped"  # `quotes: []`: the manifest lists none


def test_capex_waits_for_a_quote_of_every_bought_pool(hwlint, tmp_path):
    def edit(data):
        del data["procurement"]["quotes"][0]  # the servers' quote; the switches' quote stays

    results = _results(hwlint, _write(tmp_path, _edited("flawed-cluster.hw.yaml", edit)))
    assert results["BUY001"]["status"] == "pending", results["BUY001"]
    assert results["BUY001"]["missing"] == ["procurement.quotes[] (a purchase quote for node pool v100)"]


def test_options_review_a_manifest_without_storage(hwlint, tmp_path):
    def edit(data):
        del data["storage"]

    run = hwlint("check", _write(tmp_path, _edited("two-vendors-or-cloud.hw.yaml", edit)))
    assert run.code in (0, 1), run.out + run.err
    assert "internal error" not in run.out + run.err


def test_an_option_without_quotes_is_reviewed(hwlint, tmp_path):
    def edit(data):
        del data["procurement"]["options"][0]["quotes"]

    run = hwlint("check", _write(tmp_path, _edited("two-vendors-or-cloud.hw.yaml", edit)))
    assert run.code in (0, 1), run.out + run.err
    assert "internal error" not in run.out + run.err


def test_a_named_system_supplies_its_nics(hwlint, tmp_path):
    """The catalog fill counts as given: a DGX H100 brings its eight compute ConnectX-7, so the
    leaf ports are decided (512 NICs + 512 uplinks against one 64-port leaf)."""
    text = NO_NICS.replace("    gpu: {model: H100-SXM5-80GB, count: 8}\n    max_power_kw: 10.2\n",
                           "    system: DGX-H100\n")
    results = _results(hwlint, _write(tmp_path, text))
    assert results["NET002"]["status"] == "fail"
    assert "1,024 leaf ports" in results["NET002"]["message"]


def test_the_budget_table_and_chart_never_show_a_rack_left_empty_as_zero(hwlint, tmp_path):
    def edit(data):
        del data["facility"]["racks"][0]["contents"]

    run = hwlint("check", "--format", "markdown", _write(tmp_path, _edited("flawed-cluster.hw.yaml", edit)))
    row = next(line for line in run.out.splitlines() if line.startswith("| Power per rack (row-a, x2)"))
    assert "? — needs facility.racks\\[0\\].contents" in row and row.rstrip().endswith("| ? |")
    assert "row-a x2 load" not in run.out  # no bar drawn for a load nobody knows
