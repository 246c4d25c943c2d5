"""Broken manifests end in a finding at file:line:col with plain words, never a traceback."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES

BASE = (EXAMPLES / "single-node-finetune.hw.yaml").read_text()


def review(hwlint, tmp_path, text):
    path = tmp_path / "bad.hw.yaml"
    path.write_text(text)
    run = hwlint("check", path)
    assert "Traceback" not in run.out + run.err
    return path, run


@pytest.mark.parametrize(
    "old, new, fragment, code",
    [
        ("    hidden_size: 5120", "    hidden_sise: 5120", 'unknown key "hidden_sise" in plan.model; did you mean "hidden_size"?', 1),
        ("  goal: finetune", "  goal: fine-tune", 'plan.goal is the text "fine-tune"; expected one of: pretrain, continued-pretrain, finetune, experiment; did you mean "finetune"?', 1),
        ("    count: 1\n    system", "    count: one\n    system", 'node_pools[0].count must be a whole number, not the text "one"', 1),
        ("    count: 1\n    system", "    count: -4\n    system", "node_pools[0].count is -4; it must be at least 1", 1),
        ("    system: DGX-H100", "    system: DGX-H10", 'names "DGX-H10", which is not in the catalog; did you mean "DGX-H100"?', 1),
        ("  precision: bf16", "  precision: [bf16", "not valid YAML", 2),
        ("  optimizer: adamw", "  optimizer: adamw\n  optimizer: adam", 'duplicate key "optimizer"', 2),
    ],
)
def test_problem_is_reported_at_its_line(hwlint, tmp_path, old, new, fragment, code):
    assert old in BASE
    text = BASE.replace(old, new, 1)
    edited = text.splitlines().index(new.splitlines()[-1 if "optimizer" in new else 0]) + 1
    path, run = review(hwlint, tmp_path, text)
    assert run.code == code, run.out
    first = run.out.splitlines()[0]
    # A YAML parser may notice an unclosed bracket on the next line.
    assert any(first.startswith(f"{path}:{line}:") for line in (edited, edited + 1)[: 2 if code == 2 else 1]), first
    assert fragment in first


def test_missing_required_section(hwlint, tmp_path):
    text = BASE[: BASE.index("plan:")] + BASE[BASE.index("procurement:"):]
    _, run = review(hwlint, tmp_path, text)
    assert run.code == 1 and 'the top level is missing the required key "plan"' in run.out


def test_empty_value_means_to_confirm(hwlint, tmp_path):
    text = BASE.replace("  it_capacity_kw: 17", "  it_capacity_kw:")
    path, run = review(hwlint, tmp_path, text)
    verbose = hwlint("check", "-v", path)
    assert "PWR001 pending" in verbose.out and "facility.it_capacity_kw" in verbose.out


PRETRAIN = (EXAMPLES / "multi-node-pretrain.hw.yaml").read_text()


@pytest.mark.parametrize(
    "old, new, fragment",
    [
        ("  monitoring: true", "  monitoring: true\n  monitorng:",
         'unknown key "monitorng" in operations (given with no value); did you mean "monitoring"?'),
        ("  mode: rent", "  mode: rent\nopertions_budget:",
         'unknown key "opertions_budget" in the top level'),
        ("    local_nvme: {raid: raid0}", "    local_nvme: {raid: raid0}\n    max_power_k:",
         'unknown key "max_power_k" in node_pools[0] (given with no value); did you mean "max_power_kw"?'),
    ],
)
def test_a_misspelt_key_with_no_value_is_a_schema_error(hwlint, tmp_path, old, new, fragment):
    assert old in BASE
    text = BASE.replace(old, new, 1)
    path, run = review(hwlint, tmp_path, text)
    line = text.splitlines().index(new.splitlines()[-1]) + 1
    assert run.code == 1, run.out
    first = run.out.splitlines()[0]
    assert first.startswith(f"{path}:{line}:") and "SCHEMA" in first and fragment in first, first


def test_a_known_key_with_no_value_stays_to_confirm(hwlint, tmp_path):
    text = BASE.replace("  monitoring: true", "  monitoring:")
    _, run = review(hwlint, tmp_path, text)
    assert "SCHEMA" not in run.out and "unknown key" not in run.out


@pytest.mark.parametrize(
    "base, old, new, fragment",
    [
        ("pretrain", "purpose: compute, fabric: compute-ib}", "purpose: compute, fabric: compute-lb}",
         'node_pools[0].nics[0].fabric names the fabric "compute-lb", which network.fabrics does not define; did you mean "compute-ib"?'),
        ("pretrain", "contents: [{pool: dgx, nodes: 4}]", "contents: [{pool: dgxx, nodes: 4}]",
         'facility.racks[0].contents[0].pool names the node pool "dgxx", which node_pools does not define; did you mean "dgx"?'),
        ("finetune", "tier: local, restore", "tier: locl, restore",
         'storage.checkpoint.tier names the storage tier "locl", which storage.tiers does not define; did you mean "local"?'),
    ],
)
def test_a_reference_to_a_name_not_defined_is_an_error_at_that_key(hwlint, tmp_path, base, old, new, fragment):
    source = PRETRAIN if base == "pretrain" else BASE
    assert old in source
    text = source.replace(old, new, 1)
    path, run = review(hwlint, tmp_path, text)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if new in row)
    assert run.code == 1, run.out
    finding = next(row for row in run.out.splitlines() if fragment in row)
    assert finding.startswith(f"{path}:{line}:") and " SCHEMA " in finding, finding


@pytest.mark.parametrize(
    "old, new, fragment",
    [
        ("    local_nvme: {raid: raid0}",
         "    local_nvme: {raid: raid0}\n    nics: [{model: ConnectX-7, count: 8, fabric: compute-ib}]",
         'node_pools[0].nics[0].fabric names the fabric "compute-ib", but the manifest defines no fabric (network.fabrics is not given)'),
        ("storage:\n  tiers:\n    - {name: local, kind: local-nvme, capacity_tb: 30, read_gb_s: 25, write_gb_s: 12}\n",
         "storage:\n  tiers: []\n",
         'storage.checkpoint.tier names the storage tier "local", but the manifest defines no storage tier (storage.tiers is empty)'),
    ],
)
def test_a_reference_when_nothing_of_its_kind_is_defined_is_an_error_at_that_key(hwlint, tmp_path, old, new, fragment):
    assert old in BASE
    text = BASE.replace(old, new, 1)
    path, run = review(hwlint, tmp_path, text)
    assert run.code == 1, run.out
    finding = next((row for row in run.out.splitlines() if fragment in row), None)
    assert finding is not None, run.out
    key = "fabric: compute-ib" if "fabric" in fragment else "tier: local"
    line = next(i for i, row in enumerate(text.splitlines(), 1) if key in row)
    assert finding.startswith(f"{path}:{line}:") and " SCHEMA " in finding, finding
