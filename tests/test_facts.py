"""Derived facts of the bundled examples, checked against hand calculations."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES
from linter.physics.values import Unknown
from linter.engine.review import review_file
from linter.engine.rules import load_pack


@pytest.fixture(scope="module")
def pretrain():
    return review_file(str(EXAMPLES / "multi-node-pretrain.hw.yaml"), load_pack()).facts


def test_counts_come_from_the_catalog_system(pretrain):
    assert pretrain["gpus_total"] == 256
    assert pretrain["compute_nodes"] == 32
    assert pretrain["gpu_memory_total_gb"] == 256 * 80
    assert pretrain["host_ram_ratio"] == pytest.approx(2048 / 640, abs=0.01)


def test_memory_per_gpu_70b_t8_p4_zero1(pretrain):
    # P/(t*p) = 2.1875e9; ZeRO-1: 4P' + 12P'/8 = 12.03 GB. Activations (selective + SP):
    # 34*s*b*h/t per layer = 142.6 MB, the first stage holds ~L = 80 layers: 11.41 GB.
    mem = pretrain["memory"]
    assert mem["model_states_gb"] == pytest.approx(12.03, abs=0.01)
    assert mem["activations_gb"] == pytest.approx(11.41, abs=0.01)
    assert mem["usable_gb"] == pytest.approx(72)


def test_power_per_rack_and_facility(pretrain):
    power = pretrain["power"]
    # DGX + management nodes + 12 QM9700 (1,720 W, catalog) + 2 SN5600 (1,500 W, manifest) + 1 kW rack gear
    assert power["it_kw"] == pytest.approx(32 * 10.2 + 2 * 1.1 + 12 * 1.72 + 2 * 1.5 + 1)
    assert power["parts"] == pytest.approx(
        {"compute_kw": 326.4, "other_nodes_kw": 2.2, "switches_kw": 23.64, "rack_other_kw": 1})
    assert sum(power["parts"].values()) == pytest.approx(power["it_kw"])  # the parts add up to what PWR001 uses
    assert power["estimates"] == [] and power["racks"][0]["per_feed"] is True
    gpu_rack = power["racks"][0]
    assert gpu_rack["load_kw"] == pytest.approx(40.8)
    assert gpu_rack["circuit_rating_needed_kw"] == pytest.approx(51.0)
    assert power["facility_limit_kw"] == pytest.approx(400)


def test_fabric_ports_for_rail_optimized_su(pretrain):
    fabric = pretrain["fabric"]
    assert fabric["compute_nics"] == 256
    assert (fabric["ports_needed"], fabric["ports_present"]) == (512, 512)
    assert (fabric["spine_ports_needed"], fabric["spine_ports_present"]) == (256, 256)


def test_training_time_for_the_layout(pretrain):
    # Compute: (6 * 70e9 + 12 * 80 * 4096 * 8192) * 2e12 FLOPs / (256 * 989.5e12 * 0.51) = 81.0 days
    # (0.51: the policy's compute_efficiency_hopper for the H100).
    # Tensor parallel: 2e12 / 8 tokens per data-parallel rank * 4 all-reduces * 2 * 7/8 * 2 * 8192 bytes
    # * 80 / 4 layers over 450 GB/s (NVLink 900 GB/s bidirectional) = 14.7 days.
    training = pretrain["training"]
    parts = training["breakdown"]
    assert parts["compute"] == pytest.approx((6 * 70e9 + 12 * 80 * 4096 * 8192) * 2e12 / (256 * 989.5e12 * 0.51) / 86400, abs=0.01)
    assert parts["tensor_parallel"] == pytest.approx(2e12 / 8 * 4 * 2 * 7 / 8 * 2 * 8192 * 20 / 450e9 / 86400, abs=0.01)
    # Bubble: (p-1)/m = 3/128 of the busy time; m = 1024 / (1 * 8).
    busy = parts["compute"] + parts["recompute"] + parts["tensor_parallel"]
    assert parts["bubble"] == pytest.approx(busy * 3 / 128, abs=0.02)
    # the rest: the gradient all-reduce and the restarts (the policy's restart_minutes 12 plus half the
    # manifest's checkpoint interval, at 0.527 interruptions per 1,000 GPU-days)
    assert training["days"] == pytest.approx(100.7, abs=0.2)
    assert 0.38 <= training["mfu"] <= 0.52  # inside the published 38-52% band
    assert pretrain["checkpoint_tb"] == pytest.approx(0.98)


def test_missing_inputs_name_the_fields(tmp_path):
    text = (EXAMPLES / "single-gpu-experiment.hw.yaml").read_text().replace("    hidden_size: 2048\n", "")
    path = tmp_path / "m.hw.yaml"
    path.write_text(text)
    facts = review_file(str(path), load_pack()).facts
    assert facts["memory"]["activations_gb"] == Unknown(("plan.model.hidden_size",))
    assert facts["memory"]["model_states_gb"] == pytest.approx(17.6)


def _facts_of(tmp_path, text: str) -> dict:
    path = tmp_path / "m.hw.yaml"
    path.write_text(text, encoding="utf-8")
    return review_file(str(path), load_pack()).facts


def test_node_power_is_estimated_from_its_gpus_and_marked(tmp_path, hwlint):
    text = (EXAMPLES / "flawed-cluster.hw.yaml").read_text(encoding="utf-8").replace("    max_power_kw: 3.5\n", "")
    power = _facts_of(tmp_path, text)["power"]
    # 8 x (300 W V100 + 575 W host allowance) = 7 kW per node, 16 nodes
    assert power["node_kw"]["v100"] == pytest.approx(7.0)
    assert power["parts"]["compute_kw"] == pytest.approx(112)
    assert "estimated from 8 x 300 W GPUs + 8 x 575 W host allowance" in power["estimate_note"]
    run = hwlint("check", "--format", "markdown", tmp_path / "m.hw.yaml")
    assert "(estimate)" in run.out and "PWR001" in run.out


def test_feeds_follow_the_facility_unless_the_circuits_say(tmp_path):
    base = (EXAMPLES / "superpod-h100.hw.yaml").read_text(encoding="utf-8")
    rack = _facts_of(tmp_path, base)["power"]["racks"][0]
    assert rack["per_feed"] is True and "assumed from facility.ab_feeds" in rack["feed_basis"]
    assert rack["circuit_limit_kw"] == pytest.approx(55.2, abs=0.1)  # 3 x 23 kVA x 80%
    own = base.replace("breaker_a: 32}", "breaker_a: 32, ab_redundant: false}")
    rack = _facts_of(tmp_path, own)["power"]["racks"][0]
    assert rack["per_feed"] is False and rack["circuit_limit_kw"] == pytest.approx(110.4, abs=0.1)


def test_nodes_for_the_target_on_a_pool_far_larger_than_its_layout(tmp_path, hwlint):
    """1,000 DGX nodes for a data degree of 8: the smaller layouts the search tries span nodes
    the manifest's own does not, and are estimated over the DGX's NICs; one node is enough."""
    text = (EXAMPLES / "single-node-finetune.hw.yaml").read_text(encoding="utf-8")
    path = tmp_path / "m.hw.yaml"
    path.write_text(text.replace("    count: 1\n    system: DGX-H100", "    count: 1000\n    system: DGX-H100"), encoding="utf-8")
    run = hwlint("check", "-v", "--select", "GPU008", path)
    assert run.code == 0 and "rule error" not in run.out, run.out + run.err
    assert "about 8 GPUs (1 node like these) would meet the target" in run.out
    assert "but the manifest buys 8,000 (1,000 nodes)" in run.out
    assert "buy or rent about 1 node (then check" in run.out


def test_a_count_the_manifest_cannot_size_names_what_is_missing(tmp_path, hwlint):
    """Four NIC-less workstations on a data degree of 1: a layout of 2 or 3 of them spans
    workstations, so the fewest that meet the target waits for their NICs."""
    text = (EXAMPLES / "single-gpu-experiment.hw.yaml").read_text(encoding="utf-8")
    path = tmp_path / "m.hw.yaml"
    path.write_text(text.replace("    count: 1\n    gpu:", "    count: 4\n    gpu:")
                    .replace("target_duration_days: 30", "target_duration_days: 10"), encoding="utf-8")
    run = hwlint("check", "-v", "--select", "GPU008", path)
    assert "rule error" not in run.out, run.out + run.err
    assert "GPU008 pending The plan does not buy much more compute than its target duration needs: needs node_pools[0].nics" in run.out


def test_a_target_no_gpu_count_meets_is_a_finding_in_words(tmp_path, hwlint):
    """3 days for 70B on 2T tokens: with a batch of 1,024 and 4 pipeline stages the bubble
    grows faster than more GPUs save; GPU006 fails and says so, GPU008 is not asked."""
    text = (EXAMPLES / "multi-node-pretrain.hw.yaml").read_text(encoding="utf-8")
    path = tmp_path / "m.hw.yaml"
    path.write_text(text.replace("target_duration_days: 120", "target_duration_days: 3"), encoding="utf-8")
    facts = _facts_of(tmp_path, path.read_text(encoding="utf-8"))["training"]
    assert facts["nodes_for_target"] == Unknown(
        ("plan.target_duration_days (no GPU count of this layout, up to 10,000,000, meets it by this estimate)",))
    run = hwlint("check", "-v", "--select", "GPU006,GPU008", path)
    assert run.code == 1 and "rule error" not in run.out, run.out + run.err
    assert "but the plan allows 3. Fix: More GPUs of this layout are not shown to meet the target by this estimate" in run.out
    assert "1 failing (1 error), 1 passed" in run.out  # GPU008: 92 days is not early for 3
