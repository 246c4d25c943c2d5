"""Modern training plans: attention kernels, model shapes, MoE, adapters, and time that depends
on the layout, each against its published figure."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES
from linter.physics import formulas as physics

GB = 1e9
DAY = 86400


def megatron_time(**layout):
    # Megatron-LM's published runs exclude failures: no restart allowance here.
    return physics.training_time(efficiency=0.57, recompute="full", link_bytes_per_s=300e9, fabric_bytes_per_s=25e9,
                                 gpus_per_node=8, **layout)


def test_gpt3_175b_on_1024_a100_takes_about_34_days():
    # Narayanan et al. 2021 §5.1: 175B, 300B tokens, 1,024 A100, batch 1536: about 34 days. Layout
    # t=8, p=8, d=16, b=1; A100 312 TFLOPS dense BF16, NVLink 600 GB/s bidirectional, 8 x HDR 200 Gb/s per DGX A100.
    result = megatron_time(params=175e9, tokens=300e9, gpus=1024, peak_flops=312e12, t=8, p=8, d=16,
                           micro_batch=1, global_batch=1536, seq=2048, hidden=12288, layers=96)
    assert result["total"] / DAY == pytest.approx(34, rel=0.10)
    assert result["bubble"] > 0 and result["tensor_parallel"] > 0 and result["data_parallel"] > 0


def test_1t_on_3072_a100_takes_about_84_days():
    # Narayanan et al. 2021 §5.1 and Table 1: 1T (128 layers, h 25600), 450B tokens, 3,072 A100, t=8, p=64,
    # batch 3072: about 84 days.
    result = megatron_time(params=1e12, tokens=450e9, gpus=3072, peak_flops=312e12, t=8, p=64, d=6,
                           micro_batch=1, global_batch=3072, seq=2048, hidden=25600, layers=128)
    assert result["total"] / DAY == pytest.approx(84, rel=0.10)
    # the end-to-end MFU lands in Megatron's reported band (163 TFLOP/s with recompute = 52% hardware, 39% model)
    assert 0.33 <= result["mfu"] <= 0.45


def test_model_flops_with_full_recompute_match_narayanan_eq_3():
    # 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) per iteration; our logits are recomputed too, so within 0.5%.
    B, s, l, h, V = 1536, 2048, 96, 12288, 51200
    params = 12 * l * h * h + V * h
    tokens = B * s
    flops = physics.model_flops(params, tokens, l, s, h)
    total = flops + physics.recompute_flops("full", flops, tokens, l, s, h)
    assert total == pytest.approx(96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)), rel=0.005)


def test_bubble_is_p_minus_1_over_v_m():
    base = dict(params=1e9, tokens=1e12, gpus=64, peak_flops=1e15, efficiency=0.5, t=1, p=8, d=8,
                micro_batch=1, global_batch=512, seq=2048, fabric_bytes_per_s=50e9, link_bytes_per_s=450e9)
    plain = physics.training_time(**base)
    interleaved = physics.training_time(**base, v=4)
    busy = plain["compute"]
    assert plain["bubble"] == pytest.approx(busy * 7 / 64)
    assert interleaved["bubble"] == pytest.approx(busy * 7 / (4 * 64))


def test_oversubscription_and_slower_nics_lengthen_the_all_reduce():
    base = dict(params=70e9, tokens=2e12, gpus=256, peak_flops=989.5e12, efficiency=0.57, d=256,
                global_batch=1024, seq=4096, link_bytes_per_s=450e9)
    fast = physics.training_time(**base, fabric_bytes_per_s=50e9)
    slow = physics.training_time(**base, fabric_bytes_per_s=25e9 / 2)  # 200 Gb/s at 2:1
    # ring all-reduce: 2(n-1)/n of the 2-byte gradients per iteration, less what the backward pass of
    # the last of the m = 1024 / 256 = 4 micro-batches hides (DDP buckets, Megatron overlap-grad-reduce)
    iterations = 2e12 / (1024 * 4096)
    hidden = fast["compute"] * 2 / 3 / 4
    assert fast["data_parallel"] == pytest.approx(iterations * 2 * 255 / 256 * 2 * 70e9 / 50e9 - hidden)
    assert slow["data_parallel"] == pytest.approx(4 * (fast["data_parallel"] + hidden) - hidden)


def test_the_all_reduce_hides_under_the_backward_pass_as_frameworks_overlap_it():
    base = dict(params=70e9, tokens=2e12, gpus=256, peak_flops=989.5e12, efficiency=0.57, d=256,
                global_batch=256, seq=4096, link_bytes_per_s=450e9, fabric_bytes_per_s=0.1e9)  # a slow 0.8 Gb/s
    raw = 2e12 / (256 * 4096) * 2 * 255 / 256 * 2 * 70e9 / 0.1e9  # the all-reduce's own time
    # one micro-batch per step: the whole backward pass (4 of the 6 FLOPs per parameter) overlaps it
    one = physics.training_time(**base, micro_batch=1)
    assert one["data_parallel"] == pytest.approx(raw - one["compute"] * 2 / 3)
    # ZeRO-3 / FSDP, 4 micro-batches of one sequence per step: 1.5x the volume for each, prefetched
    # under all of the compute
    fsdp = physics.training_time(**{**base, "global_batch": 1024}, micro_batch=1, zero_stage=3)
    assert fsdp["data_parallel"] == pytest.approx(raw / 4 * 1.5 * 4 - fsdp["compute"])
    assert 0 < fsdp["data_parallel"] < raw * 1.5
    # a fabric fast enough is hidden entirely (1.9M steps of 5.6 s at 50 GB/s are not: 10.6e6 s > 3.9e6 s)
    assert physics.training_time(**{**base, "fabric_bytes_per_s": 500e9}, micro_batch=1)["data_parallel"] == 0
    assert physics.training_time(**{**base, "fabric_bytes_per_s": 50e9}, micro_batch=1)["data_parallel"] > 0


def test_goodput_uses_the_llama3_interruption_rate():
    # 466 interruptions in 54 days on 16,384 GPUs; at 1 hour lost each, 16,384 GPUs keep 1 - 466/54/24 = 64%... per day:
    rate = 466 / (54 * 16384) / DAY
    share = physics.goodput(rate, 16384, 3600)
    assert share == pytest.approx(1 - 466 / 54 / 24)
    assert physics.goodput(rate, 16384, 10 * 3600) == 0  # restarts outpace training


def test_flash_attention_drops_the_stored_scores():
    # A 7B (32 layers, h 4096, 32 heads) at s=4096, b=1 without recompute: 104 GB of activations with standard
    # attention (Korthikanti Table 2), of which FlashAttention keeps about 18 GB (34*s*b*h per layer).
    s, b, h, a, L = 4096, 1, 4096, 32, 32
    standard = physics.activation_bytes_per_gpu(physics.activation_bytes_per_layer(s, b, h, a), L) / GB
    flash = physics.activation_bytes_per_gpu(physics.activation_bytes_per_layer(s, b, h, a, attention="flash"), L) / GB
    assert standard == pytest.approx(104.2, abs=0.1)
    assert flash == pytest.approx(18.3, abs=0.1)


def test_default_shape_is_korthikanti_exactly():
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    sbh = s * b * h
    explicit = physics.activation_bytes_per_layer(s, b, h, a, t, attention="standard", kv_heads=a, ffn=4 * h,
                                                  activation="gelu")
    assert explicit == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)), rel=1e-12)


def test_grouped_query_attention_and_swiglu_change_the_terms():
    s, b, h, a = 4096, 1, 8192, 64
    sbh = s * b * h
    gqa = physics.activation_bytes_per_layer(s, b, h, a, attention="flash", kv_heads=8)
    mha = physics.activation_bytes_per_layer(s, b, h, a, attention="flash")
    assert mha - gqa == pytest.approx(4 * sbh * (1 - 8 / 64))  # K and V shrink by n_kv/a
    f = physics.default_ffn_width(h, "swiglu")
    assert f == 21824  # int(8 * 8192 / 3 / 64) * 64, Megatron-LM's default
    swiglu = physics.activation_bytes_per_layer(s, b, h, a, attention="flash", ffn=28672, activation="swiglu")
    gelu = physics.activation_bytes_per_layer(s, b, h, a, attention="flash", ffn=28672)
    assert swiglu - gelu == pytest.approx(2 * s * b * 28672)
    attention, ffn = physics.layer_parameters(8192, 64, 8, 28672, "swiglu")
    # Llama 2 70B: 80 layers of (attention + FFN) plus 2 * 32000 * 8192 embeddings = 69.0B
    assert (80 * (attention + ffn) + 2 * 32000 * 8192) / 1e9 == pytest.approx(68.98, abs=0.05)


def test_moe_tokens_run_k_experts_and_context_parallelism_splits_the_sequence():
    s, b, h, a = 4096, 1, 4096, 32
    dense = physics.activation_bytes_per_layer(s, b, h, a, attention="flash")
    top2 = physics.activation_bytes_per_layer(s, b, h, a, attention="flash", expert_tokens=2)
    assert top2 - dense == pytest.approx(4 * s * b * 4 * h)  # the FFN part doubles
    assert physics.activation_bytes_per_layer(s, b, h, a, attention="flash", context=4) == pytest.approx(dense / 4)


def test_lora_adapters_and_qlora_base_weights():
    # LoRA r=16 on q and v of Llama 2 70B: 80 * 16 * ((8192 + 8192) + (8192 + 1024)) = 33.6M trainable weights.
    assert physics.lora_parameters(80, 8192, 64, 8, 28672, 16, ["q", "v"]) == 80 * 16 * (16384 + 9216)
    # QLoRA: 4-bit NormalFloat plus one 32-bit constant per 64 weights = 4.5 bits.
    assert physics.BASE_WEIGHT_BYTES[4] == pytest.approx(0.5625)


def test_the_review_shows_the_time_breakdown_and_plan_defaults(hwlint):
    run = hwlint("check", "--format", "markdown", str(EXAMPLES / "multi-node-pretrain.hw.yaml"))
    assert "Time to train (estimate)" in run.out
    for term in ("compute", "pipeline bubble", "tensor-parallel traffic", "gradient all-reduce", "restarts"):
        assert term in run.out.split("Time to train (estimate)")[1].split("\n")[0]
    assert "| plan.model.attention | flash |" in run.out
    assert "16-bit" in run.out and "18" in run.out  # both conventions named, the one used first


def _days(hwlint, tmp_path, name, change) -> float:
    import re

    import yaml

    doc = yaml.safe_load((EXAMPLES / "multi-node-pretrain.hw.yaml").read_text())
    change(doc)
    path = tmp_path / f"{name}.hw.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    run = hwlint("check", "--format", "markdown", str(path))
    return float(re.search(r"Time to train \(estimate\) \| ([0-9.,]+) days", run.out).group(1).replace(",", ""))


def test_time_depends_on_the_layout(hwlint, tmp_path):
    # The three layouts that all showed 35 days under 6PD at a fixed MFU.
    def layout(**par):
        return lambda doc: doc["plan"]["parallelism"].update(par)

    def roce(doc):
        doc["node_pools"][0]["nics"][0].update(rate_gbps=200, kind="roce")
        doc["network"]["fabrics"][0].update(kind="roce", oversubscription=2)

    base = _days(hwlint, tmp_path, "base", lambda doc: None)
    t4p2 = _days(hwlint, tmp_path, "t4p2", layout(tensor=4, pipeline=2, data=32))
    flat = _days(hwlint, tmp_path, "flat", layout(tensor=1, pipeline=1, data=256, zero_stage=3,
                                                   activation_recompute="full", sequence_parallel=False))
    slow = _days(hwlint, tmp_path, "slow", lambda doc: (layout(tensor=1, pipeline=1, data=256, zero_stage=3,
                                                               activation_recompute="full")(doc), roce(doc)))
    assert len({base, t4p2, flat, slow}) == 4
    assert flat > base  # full recompute costs a third more compute, ZeRO-3 1.5x the all-reduce
    assert slow > flat  # a quarter of the per-GPU bandwidth for the same gradients


def _facts(name: str) -> dict:
    from linter.engine.review import review_file
    from linter.engine.rules import load_pack

    return review_file(str(EXAMPLES / name), load_pack()).facts


def test_qlora_70b_on_one_node_counts_the_4_bit_base_and_the_adapters():
    # 69e9 frozen weights at 4.5 bits = 38.8 GB on every GPU (plain data parallelism); rank-64 adapters on
    # q, k, v, o, gate, up, down: 80 * 64 * (16384 + 9216 + 9216 + 16384 + 3 * 36864) = 828.4M at 16 bytes.
    memory = _facts("qlora-70b-one-node.hw.yaml")["memory"]
    adapters = 80 * 64 * (16384 + 9216 + 9216 + 16384 + 3 * 36864)
    assert memory["states"]["frozen"] == pytest.approx(69e9 * 0.5625 / GB, abs=0.01)
    assert memory["states"]["optimizer"] == pytest.approx(12 * adapters / GB, abs=0.01)
    assert memory["model_states_gb"] == pytest.approx((69e9 * 0.5625 + 16 * adapters) / GB, abs=0.02)
    assert memory["total_gb"] <= memory["usable_gb"]


def test_moe_experts_are_split_by_expert_parallelism():
    # Experts: 56 layers * 8 * 3 * 6144 * 16384 = 135.3B, over p=8 and e=8 per GPU, optimizer sharded over
    # d/e = 4 expert-data-parallel ranks; the other 5.3B over p=8 with ZeRO-1 over d=32.
    memory = _facts("moe-pretrain.hw.yaml")["memory"]
    experts = 56 * 8 * 3 * 6144 * 16384
    dense = 140.6e9 - experts
    expected = (dense / 8 * (4 + 12 / 32) + experts / 64 * (4 + 12 / 4)) / GB
    assert memory["model_states_gb"] == pytest.approx(expected, abs=0.02)
    training = _facts("moe-pretrain.hw.yaml")["training"]
    assert training["breakdown"]["moe_all_to_all"] > 0 and 0.38 <= training["mfu"] <= 0.52
