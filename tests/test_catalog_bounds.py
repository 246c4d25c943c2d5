"""Values beyond the named catalog part (BUY008, catalog/bounds.yaml) and the values a manifest
sets over the catalog, listed in the Markdown review and the JSON report; storage fabrics get the
same port and rate checks as the compute fabric."""

from __future__ import annotations

import json

import pytest

from conftest import EXAMPLES

FLAWED = (EXAMPLES / "flawed-cluster.hw.yaml").read_text()
PRETRAIN = (EXAMPLES / "multi-node-pretrain.hw.yaml").read_text()


def write(tmp_path, text, name="bounds.hw.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def line_of(text, fragment):
    return next(i for i, row in enumerate(text.splitlines(), 1) if fragment in row)


@pytest.mark.parametrize(
    "old, new, key, fragments",
    [
        ("rate_gbps: 200, kind: infiniband", "rate_gbps: 400, kind: infiniband", "rate_gbps: 400",
         ["node_pools[0].nics[0].rate_gbps gives port rate (Gb/s) of 400, but ConnectX-6 has at most 200",
          "catalog max_port_rate_gbps", "NVIDIA MLNX_OFED Documentation v23.10"]),
        ("{model: QM8700, role: leaf, count: 2, max_power_w: 500}", "{model: QM8700, role: leaf, count: 2, ports: 64, max_power_w: 500}",
         "ports: 64", ["network.fabrics[0].switches[0].ports gives ports x port rate (Gb/s) of 64 x 200 = 12,800, "
                       "but QM8700 has at most 40 x 200 = 8,000", "QM87xx 1U HDR 200Gb/s InfiniBand Switch Systems User Manual",
                       "dated 2022-07-31"]),
        ("gpu: {model: V100-SXM2-32GB, count: 8}", "gpu: {model: V100-SXM2-32GB, count: 8, memory_gb: 40}", "memory_gb: 40",
         ["node_pools[0].gpu.memory_gb gives memory (GB) of 40, but V100-SXM2-32GB has at most 32"]),
    ],
)
def test_a_value_beyond_the_named_part_is_an_error_at_its_key(hwlint, tmp_path, old, new, key, fragments):
    assert old in FLAWED
    text = FLAWED.replace(old, new, 1)
    path = write(tmp_path, text)
    run = hwlint("check", path, "--select", "BUY008")
    assert run.code == 1, run.out
    finding = run.out.splitlines()[0]
    column = text.splitlines()[line_of(text, key) - 1].index(key.split(":")[0]) + 1
    assert finding.startswith(f"{path}:{line_of(text, key)}:{column}: BUY008 error "), finding
    for fragment in fragments:
        assert fragment in finding, finding


def test_more_gpus_than_the_named_server_holds(hwlint, tmp_path):
    text = PRETRAIN.replace("    system: DGX-H100 ", "    gpu: {count: 16}\n    system: DGX-H100 ", 1)
    path = write(tmp_path, text)
    run = hwlint("check", path, "--select", "BUY008")
    assert run.code == 1 and f"{path}:{line_of(text, 'count: 16')}:" in run.out, run.out
    assert "node_pools[0].gpu.count gives GPUs per node of 16, but DGX-H100 has at most 8" in run.out


def test_the_same_switch_split_another_way_and_a_slower_nic_pass(hwlint, tmp_path):
    text = PRETRAIN.replace("{model: SN5600, role: single, count: 2,", "{model: SN5600, role: single, count: 2, ports: 64, port_rate_gbps: 800,")
    text = text.replace("count: 2, rate_gbps: 400, kind: ethernet", "count: 2, rate_gbps: 200, kind: ethernet")
    path = write(tmp_path, text)
    run = hwlint("check", "-v", path, "--select", "BUY008")
    assert run.code == 0 and "BUY008 error" not in run.out and "0 failing, 1 passed" in run.out, run.out


def test_values_set_over_the_catalog_are_listed_in_markdown_and_json(hwlint, tmp_path):
    text = FLAWED.replace("rate_gbps: 200, kind: infiniband", "rate_gbps: 100, kind: infiniband", 1)
    path = write(tmp_path, text)
    markdown = hwlint("check", path, "--format", "markdown").out
    section = markdown[markdown.index("## Values set over the catalog"):]
    row = next(r for r in section.splitlines() if "rate\\_gbps" in r)
    assert "| 100 | 200 | ConnectX-6 | date unknown |" in row, row  # the release notes read print no date
    report = json.loads(hwlint("check", path, "--format", "json").out)
    overrides = report["manifests"][0]["catalog_overrides"]
    found = next(o for o in overrides if o["path"] == "node_pools[0].nics[0].rate_gbps")
    assert (found["manifest"], found["catalog"], found["entry"], found["kind"]) == (100, 200, "ConnectX-6", "nics")
    assert found["source"]["title"].startswith("NVIDIA MLNX_OFED") and found["as_of"] == ""


def test_a_manifest_that_overrides_nothing_lists_nothing(hwlint):
    markdown = hwlint("check", EXAMPLES / "flawed-cluster.hw.yaml", "--format", "markdown").out
    assert "## Values set over the catalog" not in markdown
    report = json.loads(hwlint("check", EXAMPLES / "flawed-cluster.hw.yaml", "--format", "json").out)
    assert report["manifests"][0]["catalog_overrides"] == []


def test_storage_nics_faster_than_the_storage_switches_fail_at_that_fabric(hwlint, tmp_path):
    text = PRETRAIN.replace("count: 2, rate_gbps: 400, kind: ethernet", "count: 2, rate_gbps: 200, kind: ethernet")
    text = text.replace("{model: SN5600, role: single, count: 2, max_power_w: 1500}", "{model: SN4600C, role: single, count: 2}")
    path = write(tmp_path, text)
    run = hwlint("check", path, "--select", "NET010", "--fail-on", "warning")
    assert run.code == 1, run.out
    rows = text.splitlines()
    switches = next(i for i in range(line_of(text, "name: storage-eth"), len(rows)) if rows[i].strip() == "switches:") + 1
    finding = run.out.splitlines()[0]
    assert finding.startswith(f"{path}:{switches}:"), finding
    assert "NICs on the storage-eth storage fabric run at 200 Gb/s, but its slowest switch ports run at 100 Gb/s" in finding
    assert "network.fabrics[1]" in hwlint("check", path, "--select", "NET010", "--format", "json").out


def test_storage_nics_beyond_the_storage_switch_ports_fail(hwlint, tmp_path):
    text = PRETRAIN.replace("count: 2, rate_gbps: 400, kind: ethernet", "count: 8, rate_gbps: 400, kind: ethernet")
    text = text.replace("{model: SN5600, role: single, count: 2,", "{model: SN5600, role: single, count: 1,")
    path = write(tmp_path, text)
    run = hwlint("check", path, "--select", "NET002")
    assert run.code == 1, run.out
    assert "The storage-eth storage fabric has 256 NIC ports on it but its switches have 128 ports." in run.out


def test_the_budget_shows_the_storage_fabric_ports_too(hwlint, tmp_path):
    text = PRETRAIN.replace("count: 2, rate_gbps: 400, kind: ethernet", "count: 8, rate_gbps: 400, kind: ethernet")
    text = text.replace("{model: SN5600, role: single, count: 2,", "{model: SN5600, role: single, count: 1,")
    markdown = hwlint("check", write(tmp_path, text), "--format", "markdown").out
    row = next(r for r in markdown.splitlines() if r.startswith("| Switch ports (storage-eth)"))
    assert row == "| Switch ports (storage-eth) | 256 | 128 | ❌ |", row
