"""The derived facts the full rule pack reads, against their sources and hand calculations."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES
from linter.physics import formulas as physics
from linter.physics.values import Unknown
from linter.engine.review import review_file
from linter.engine.rules import load_pack

PACK = load_pack()


def facts_of(name: str) -> dict:
    return review_file(str(EXAMPLES / name), PACK).facts


@pytest.fixture(scope="module")
def pretrain():
    return facts_of("multi-node-pretrain.hw.yaml")


@pytest.fixture(scope="module")
def flawed():
    return facts_of("flawed-cluster.hw.yaml")


@pytest.mark.parametrize("generation, lanes, expected", [(3, 16, 32), (4, 16, 64), (5, 16, 128), (4, 8, 32)])
def test_pcie_bandwidth_as_datasheets_print_it(generation, lanes, expected):
    # A100 datasheet: PCIe Gen4 64 GB/s; H100: Gen5 128 GB/s (x16, bidirectional).
    assert physics.pcie_gb_s(generation, lanes) == expected


@pytest.mark.parametrize("raid, usable", [("raid0", 8 * 3.84), ("none", 8 * 3.84), ("raid1", 4 * 3.84),
                                          ("raid10", 4 * 3.84), ("raid5", 7 * 3.84), ("raid6", 6 * 3.84)])
def test_raid_usable_capacity(raid, usable):
    assert physics.raid_usable_tb(8, 3.84, raid) == pytest.approx(usable)


def test_zero_offload_host_ram_follows_deepspeeds_estimators():
    # estimate_zero2_model_states_mem_needs: P * max(4G, 16) * 1.5 -> 13B on 8 GPUs: 624 GB, 3.4x the
    # 14 bytes/param / 8 GPUs * 8 = 182 GB of the bare model states.
    assert physics.offload_host_bytes_per_node(13e9, 2, 8, 1) == pytest.approx(13e9 * 32 * 1.5)
    assert physics.offload_host_bytes_per_node(13e9, 2, 8, 1) / (14 * 13e9) == pytest.approx(3.43, abs=0.01)
    assert physics.offload_host_bytes_per_node(13e9, 1, 2, 1) == pytest.approx(13e9 * 16 * 1.5)  # max(8, 16)
    # estimate_zero3_model_states_mem_needs with zero_init: 16P (optimizer) or 18P (and parameters) / nodes * 1.5.
    assert physics.offload_host_bytes_per_node(70e9, 3, 8, 2) == pytest.approx(70e9 * 16 / 2 * 1.5)
    assert physics.offload_host_bytes_per_node(70e9, 3, 8, 2, offload_params=True) == pytest.approx(70e9 * 18 / 2 * 1.5)


def test_payback_and_power_bill():
    # 56 kW * PUE 1.6 * 730 h * 0.15/kWh = 9,811.2 a month; 1.02M / (70,000 - 9,811.2) = 16.9 months.
    bill = physics.electricity_per_month(56, 1.6, 0.15)
    assert bill == pytest.approx(9811.2)
    assert physics.payback_months(1_020_000, 70_000, bill) == pytest.approx(16.95, abs=0.01)
    assert physics.payback_months(1_020_000, 5_000, bill) is None  # rent below the power bill: never


def test_data_rate_the_plan_implies(pretrain):
    # 60 TB / 2,000B tokens = 30 bytes/token; 2e12 tokens * 30 B over the 100.7-day estimate = 6.9 MB/s.
    storage = pretrain["storage"]
    assert storage["bytes_per_token"] == 30
    assert storage["read_pace_from"] == "the time-to-train estimate"
    seconds = pretrain["training"]["seconds"]
    assert storage["read_needed_gb_s"] == pytest.approx(2e12 * 30 / seconds / 1e9, abs=1e-4)
    assert storage["read_needed_gb_s"] == pytest.approx(0.0069, abs=1e-4)


def test_without_an_estimate_the_rate_follows_the_target_duration(flawed):
    # No dense bf16 figure for the V100: 600B tokens * 4 B over 60 days = 0.46 MB/s.
    assert isinstance(flawed["training"]["seconds"], Unknown)
    storage = flawed["storage"]
    assert storage["read_pace_from"] == "the target duration"
    assert storage["read_needed_gb_s"] == pytest.approx(600e9 * 4 / (60 * 86400) / 1e9, abs=1e-4)


def test_checkpoint_write_time_and_capacity(pretrain, flawed):
    # 70B * 14 B = 0.98 TB at 60 GB/s = 16 s; 20 retained + the 60 TB dataset on scratch.
    assert pretrain["storage"]["checkpoint_write_minutes"] == pytest.approx(0.3)
    (scratch,) = pretrain["storage"]["capacity"]
    assert scratch["need_tb"] == pytest.approx(60 + 20 * 0.98)
    # 30B * 14 B = 0.42 TB at 0.5 GB/s = 14 minutes.
    assert flawed["storage"]["checkpoint_write_minutes"] == pytest.approx(14.0)


def test_nics_per_gpu_and_procurement(pretrain, flawed):
    assert pretrain["nics"]["gbps_per_gpu"] == 400 and pretrain["nics"]["rdma"] is True
    assert flawed["nics"]["gbps_per_gpu"] == 100  # 4 x 200 Gb/s for 8 GPUs
    buy = pretrain["procurement"]
    assert buy["capex"] == 14_700_000 and buy["rent_per_month"] == 550_000
    # 353.24 kW (nodes, switches, rack gear) * 1.3 * 730 h * 0.12 = 40,227 a month;
    # 14.7M / (550,000 - 40,227) = 28.8 months.
    assert buy["owned_opex_per_month"] == 40_227 and buy["payback_months"] == pytest.approx(28.8)
    assert buy["latest_delivery"]["date"] == "2027-02-01"  # ordered 2026-11-09 + 12 weeks
    assert buy["ready_date"] == "2027-02-25"  # + 10 days installation + 14 days burn-in
    assert flawed["procurement"]["oldest_quote"]["date"] == "2026-07-15"


def test_local_disk_needs_the_raid_level(pretrain):
    disk = pretrain["local_disk"]
    assert disk["usable_tb"] == pytest.approx(8 * 3.84)  # DGX data drives, striped
    assert disk["checkpoint_shard_tb"] == pytest.approx(0.98 / 32, abs=1e-4)


def test_a_lead_time_beyond_the_calendar_is_late_not_a_crash(hwlint, tmp_path):
    text = (EXAMPLES / "multi-node-pretrain.hw.yaml").read_text(encoding="utf-8")
    path = tmp_path / "m.hw.yaml"
    path.write_text(text.replace("lead_time_weeks: 12,", "lead_time_weeks: 900000000000,"), encoding="utf-8")
    run = hwlint("check", "--select", "BUY005", path)
    assert run.code == 0 and "BUY005 warning 32x DGX H100 arrives about 9999-12-31" in run.out, run.err
