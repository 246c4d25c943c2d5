"""The formulas against the worked examples in their sources (DOMAIN.md)."""

from __future__ import annotations

import pytest

from linter.physics import formulas as physics

GB = 1e9


@pytest.mark.parametrize(
    "stage, expected_gb",
    [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)],
)
def test_zero_figure_1_per_gpu_model_states(stage, expected_gb):
    # ZeRO (Rajbhandari et al. 2020) Fig. 1: P = 7.5e9, d = 64, K = 12.
    got = physics.model_state_bytes_per_gpu(7.5e9, stage, 64) / GB
    assert got == pytest.approx(expected_gb, abs=0.05)


def test_tensor_and_pipeline_divide_the_parameters():
    # Transformer Math 101: P/(t*p) per GPU before ZeRO sharding.
    whole = physics.model_state_bytes_per_gpu(70e9, 0, 1)
    split = physics.model_state_bytes_per_gpu(70e9, 0, 1, t=8, p=4)
    assert split == pytest.approx(whole / 32)


def test_offload_moves_optimizer_state_off_the_gpu():
    # ZeRO-Offload (Ren et al. 2021 §4): gradients go to host memory as they are reduced, so only the
    # 16-bit weights stay: 2 bytes/param, as DeepSpeed's estimate_zero2_model_states_mem_needs counts with offload
    on_gpu = physics.model_state_bytes_per_gpu(7.5e9, 0, 1, offload=True)
    assert on_gpu == pytest.approx(2 * 7.5e9)


def test_gpt3_training_time_matches_megatron_paper():
    # Narayanan et al. 2021: 175B, 300B tokens, 1024 GPUs at 140 TFLOP/s: about 34 days.
    seconds = physics.training_seconds_achieved(175e9, 300e9, 1024, 140e12, full_recompute=True)
    assert seconds / 86400 == pytest.approx(34, abs=0.5)


def test_compute_is_six_p_d():
    assert physics.training_flops(70e9, 2e12) == pytest.approx(8.4e23)


def test_mfu_time_uses_model_flops():
    seconds = physics.training_seconds_at_mfu(1e9, 1e9, 1, 100e12, 0.5)
    assert seconds == pytest.approx(6e18 / 50e12)


def test_activation_memory_table_2():
    # Korthikanti et al. 2022 Table 2, per layer, s*b*h factored out.
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    sbh = s * b * h
    assert physics.activation_bytes_per_layer(s, b, h, a) == pytest.approx(sbh * (34 + 5 * a * s / h))
    assert physics.activation_bytes_per_layer(s, b, h, a, t) == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)))
    assert physics.activation_bytes_per_layer(s, b, h, a, t, True) == pytest.approx(sbh * (34 / t + 5 * a * s / (h * t)))
    assert physics.activation_bytes_per_layer(s, b, h, a, t, True, "selective") == pytest.approx(34 * sbh / t)
    assert physics.activation_bytes_per_layer(s, b, h, a, t, True, "full") == pytest.approx(2 * sbh)


def test_interleaved_pipeline_multiplies_first_stage_activations():
    per_layer = 1.0
    assert physics.activation_bytes_per_gpu(per_layer, 80, p=4) == 80
    assert physics.activation_bytes_per_gpu(per_layer, 80, p=4, v=2) == pytest.approx(80 * (1 + 3 / 8))


def test_superpod_scalable_unit_power_and_circuits():
    # DOMAIN.md: 32 DGX H100 at 10.2 kW = 326.4 kW; 4 per rack = 40.8 kW; circuits >= 51 kW.
    rack_kw = 4 * 10.2
    assert 32 * 10.2 == pytest.approx(326.4)
    assert rack_kw / 0.8 == pytest.approx(51.0)
    # 51 kW of single-phase 230 V / 32 A circuits (7.36 kVA each) at 80%: 6 circuits are not enough, 7 are.
    kva = physics.circuit_kva(230, 32, 1)
    assert physics.continuous_limit_kw(6, kva, False, 80) < rack_kw <= physics.continuous_limit_kw(7, kva, False, 80)


def test_three_phase_circuit_and_ab_feeds():
    kva = physics.circuit_kva(415, 32, 3)
    assert kva == pytest.approx(23.0, abs=0.05)
    # With A/B feeds only one side counts.
    assert physics.continuous_limit_kw(6, kva, True, 80) == pytest.approx(3 * kva * 0.8)


def test_fat_tree_ports():
    # Al-Fares 2008: k-port switches, two tiers, non-blocking: k^2/2 hosts; uplinks = down / oversubscription.
    assert physics.nonblocking_two_tier_endpoints(64) == 2048
    assert physics.uplinks_needed(256, 1) == 256
    assert physics.uplinks_needed(256, 3) == 86


def test_checkpoint_size_bloom():
    # 14 bytes/param: BLOOM-176B's checkpoint with optimizer state is listed at 2.3 TB.
    assert physics.checkpoint_bytes(176e9) / 1e12 == pytest.approx(2.46, abs=0.01)


def test_state_bytes_conventions():
    assert physics.state_bytes("bf16", "adamw") == (2, 2, 12)
    assert sum(physics.state_bytes("fp32", "adam")) == 16
    # DeepSpeed's estimators and llm-analysis: 18 with fp32 gradients.
    assert sum(physics.state_bytes("bf16", "adamw", gradients="fp32")) == 18
    # 8-bit Adam: both moments in 8 bits, 2 bytes instead of 8 (Dettmers et al. 2022), plus the fp32 master.
    assert physics.state_bytes("bf16", "adamw-8bit") == (2, 2, 6)
    # Adafactor: factored second moment, no first moment: only the fp32 master copy per parameter.
    assert physics.state_bytes("bf16", "adafactor") == (2, 2, 4)
    assert physics.state_bytes("bf16", "adamw", optimizer_bytes=8) == (2, 2, 8)
    assert physics.state_bytes("bf16", "unknown-optimizer") is None


def test_ups_kw():
    assert physics.ups_kw(500, 0.9) == pytest.approx(450)


def test_smallest_meeting_inverts_a_forward_model_by_calling_it():
    # GPT-3 175B on 300B tokens at Megatron-LM's 140 TFLOP/s per A100 with full recompute:
    # 1,024 GPUs take about 34 days [narayanan-2021] §5.1; the fewest whole 8-GPU nodes for 34 days.
    days = lambda n: physics.training_seconds_achieved(175e9, 300e9, n, 140e12) / 86400
    n = physics.smallest_meeting(lambda n: days(n) <= 34, 8, 8)
    assert n % 8 == 0 and days(n) <= 34 < days(n - 8)
    assert 1000 <= n <= 1100
    assert physics.smallest_meeting(lambda n: days(n) <= 34, 100_000, 8) == n  # from above, too
    assert physics.smallest_meeting(lambda n: False, 8, 8, cap=64) is None


def test_nonblocking_fabric_switches_match_the_fat_tree_counts():
    # One DGX SuperPOD scalable unit: 256 NDR endpoints on 64-port switches, 8 leaves + 4 spines.
    assert physics.nonblocking_fabric_switches(256, 64) == {"single": 0, "leaf": 8, "spine": 4, "core": 0}
    # Al-Fares 2008 §3: a three-tier k-ary fat tree holds k^3/4 hosts with 5k^2/4 switches.
    for k in (4, 8, 64):
        counts = physics.nonblocking_fabric_switches(k ** 3 // 4, k)
        assert counts["core"] > 0 and sum(counts.values()) == 5 * k * k // 4
    assert physics.nonblocking_fabric_switches(64, 64)["single"] == 1
    assert physics.nonblocking_fabric_switches(2048, 64)["core"] == 0  # k^2/2: still two tiers


def test_fat_tree_reach_al_fares_2008():
    # §3: a fat tree of 48-port switches supports k^3/4 = 27,648 hosts; two tiers reach k^2/2.
    assert physics.three_tier_max_endpoints(48) == 27_648
    assert physics.two_tier_max_endpoints(64) == 2_048
    # at 3:1 a leaf gives 48 of its 64 ports to hosts, and 64 such leaves fit under 64-port spines
    assert physics.two_tier_max_endpoints(64, 3) == 64 * 48


def test_youngs_checkpoint_interval_against_dalys_figure_3():
    # Daly 2006, Fig. 3: M = 24 h, checkpoint 5 min: the higher-order optimum is 117 minutes; Young's
    # first-order sqrt(2 x 5 x 1,440) = 120 minutes is within 3% of it
    from linter.physics.formulas import checkpoint_interval_seconds, young_interval_seconds

    young = young_interval_seconds(5 * 60, 24 * 3600) / 60
    assert young == pytest.approx(120, abs=0.1) and abs(young - 117) / 117 < 0.03
    # never shorter than the write; with no interruptions, the write time
    assert checkpoint_interval_seconds(0.5, 600, 1 / 7600) == 600
    assert checkpoint_interval_seconds(300, 600, 1 / 86400) == pytest.approx(young * 60)
    assert checkpoint_interval_seconds(300, 600, 0) == 600
