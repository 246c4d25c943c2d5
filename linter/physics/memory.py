"""Memory: per-GPU model states and activations, and host RAM per GPU memory.

Facts `memory` (GPU001, MEM002, MEM005) and `host_ram_ratio` (MEM001).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.physics import formulas as physics
from linter.physics.plan import expert_params
from linter.physics.values import GB, NO_GPU_POOL, Unknown, apply, fact, maybe_rounded, rounded, sum_of


OFFLOADED = "offloaded"  # the breakdown's key for what offload moves off the GPU, split off before it is shown


def gpu_memory(data: dict, primary: int | None, policy: dict[str, float], cfg: dict) -> dict[str, Any]:
    """Per-GPU memory of the largest compute pool: model states (F1-F3, F15-F22) + activations (F4, F5, F14-F17)."""
    keys = ("model_states_gb", "activations_gb", "total_gb", "capacity_gb", "usable_gb", "bytes_per_param",
            "host_offload_gb_per_node", "states", "logits_gb", "convention", "offloaded_gb_per_gpu", "nvme_offload_gb_per_node")
    if primary is None:
        return {k: NO_GPU_POOL for k in keys}
    pool = f"node_pools[{primary}]"
    t, p, v, c, e, zero = cfg["t"], cfg["p"], cfg["v"], cfg["c"], cfg["e"], cfg["zero"]
    plan = data["plan"]

    def per_param(precision: str, optimizer: str) -> Any:
        found = physics.state_bytes(precision, optimizer, cfg["gradients"], plan.get("optimizer_bytes_per_param"))
        return found if found else Unknown((f"plan.optimizer (no memory model for {optimizer})",))

    bpp = fact(data, ["plan.precision", "plan.optimizer"], per_param)
    deepspeed = cfg["gradients"] == "fp32"  # DeepSpeed's estimators' convention, chosen with fp32 gradients
    experts = expert_params(cfg)
    data_degree = fact(data, ["plan.parallelism.data"], lambda d: d) if zero else 1
    lora = None
    if cfg["method"] in ("lora", "qlora"):
        shape = [("layers", cfg["layers"]), ("hidden_size", cfg["hidden"]), ("attention_heads", cfg["heads"])]
        needs = tuple(f"plan.model.{k}" for k, val in shape if val is None)
        lora = Unknown(needs) if needs else physics.lora_parameters(
            cfg["layers"], cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["ffn"], cfg["lora_rank"], cfg["lora_targets"])

    def states(params_b: float) -> Any:
        def compute(b: tuple, expert: float, d: int, adapters: Any) -> dict[str, float]:
            total = params_b * 1e9
            dp = d * c  # Megatron's distributed optimizer shards over the data- and context-parallel ranks
            parts = {"weights": 0.0, "gradients": 0.0, "optimizer": 0.0, "frozen": 0.0, "buffer": 0.0}
            moved = [0.0]  # the states offload takes off the GPU: what the same layout keeps without it, less what it keeps

            def add(count: float, shard: int, ranks: int, per: tuple) -> None:
                w, g, k = physics.sharded_state_bytes(count / shard, zero, max(ranks, 1), per, cfg["offload"], cfg["offload_params"],
                                                      deepspeed)
                parts["weights"] += w
                parts["gradients"] += g
                parts["optimizer"] += k
                if cfg["offload"]:
                    moved[0] += sum(physics.sharded_state_bytes(count / shard, zero, max(ranks, 1), per, deepspeed=deepspeed)) \
                        - (w + g + k)

            if adapters is None:
                add(total - expert, t * p, dp, b)
                if expert:
                    add(expert, t * p * e, dp // e, b)
            else:  # frozen base at its bits, sharded like weights; adapters train with the optimizer [lora-2022]
                base = physics.BASE_WEIGHT_BYTES[cfg["base_bits"]]
                parts["frozen"] = base * ((total - expert) / (t * p) + expert / (t * p * e)) / (dp if zero >= 3 else 1)
                add(adapters, t * p, dp, b)
            if (cfg["offload_params"] or deepspeed) and zero >= 3 and None not in (cfg["hidden"], cfg["ffn"]):
                # DeepSpeed keeps 4 bytes x the largest layer on the GPU [deepspeed-estimators]
                largest = max(cfg["hidden"] * cfg["ffn"], cfg["hidden"] * (cfg["vocab"] or 0))
                parts["buffer"] = 4 * largest
            return {**{k: rounded(val / GB, 3) for k, val in parts.items()}, OFFLOADED: rounded(moved[0] / GB, 3)}
        return apply(compute, bpp, experts, data_degree, lora)

    with_offloaded = fact(data, ["plan.model.parameters_billion"], states)
    breakdown = apply(lambda parts: {k: val for k, val in parts.items() if k != OFFLOADED}, with_offloaded)
    offloaded = apply(lambda parts: parts[OFFLOADED], with_offloaded)
    model_states = apply(lambda parts: rounded(sum(parts.values())), breakdown)

    def activations(s: int, b: int, h: int, a: int, L: int) -> Any:
        common = dict(attention=cfg["attention"], kv_heads=cfg["kv_heads"], ffn=cfg["ffn"], activation=cfg["activation"],
                      context=c)
        args = (s, b, h, a, t, cfg["sequence_parallel"], cfg["recompute"])
        dense = physics.activation_bytes_per_layer(*args, **common)
        moe = cfg["moe"]
        if moe:
            moe_layers = L // moe["every"]
            sparse = physics.activation_bytes_per_layer(*args, **common, expert_tokens=moe["active"] * moe["capacity"])
            per_layer = (dense * (L - moe_layers) + sparse * moe_layers) / L
        else:
            per_layer = dense
        return physics.activation_bytes_per_gpu(per_layer, L, p, v) / GB

    acts = fact(data, ["plan.model.sequence_length", "plan.micro_batch_size", "plan.model.hidden_size",
                       "plan.model.attention_heads", "plan.model.layers"], activations)
    # Logits: 16-bit and an fp32 copy for the cross-entropy, split over t (vocabulary-parallel
    # output layer); on the first stage only when there is one stage.
    logits = 0.0
    if cfg["vocab"] and p == 1:
        logits = fact(data, ["plan.model.sequence_length", "plan.micro_batch_size"],
                      lambda s, b: rounded(6 * s * b * cfg["vocab"] / t / c / GB, 3))
    acts_total = sum_of(acts, logits)
    nodes = sum(pl["count"] for pl in data["node_pools"] if pl.get("role", "compute") == "compute" and "gpu" in pl)

    nvme = (data["plan"].get("parallelism") or {}).get("offload") == "nvme"

    def host(params_b: float, gpus: int) -> Any:
        # ZeRO-Infinity keeps the offloaded states on NVMe, host RAM only its buffers [zero-infinity-2021] §5
        states = physics.offload_host_bytes_per_node(params_b * 1e9, zero, gpus, max(nodes, 1), cfg["offload_params"])
        return 0.0 if nvme else rounded(states / GB)

    offload_host = fact(data, ["plan.model.parameters_billion", f"{pool}.gpu.count"], host)
    # ZeRO-Infinity: each GPU's share of the offloaded states lives on its own node's NVMe
    # [zero-infinity-2021] §5 (the states as above, so the same convention as the GPU's own share)
    on_nvme = fact(data, [f"{pool}.gpu.count"], lambda gpus: apply(lambda gb: rounded(gb * gpus, 3), offloaded)) \
        if nvme else 0.0
    capacity = fact(data, [f"{pool}.gpu.memory_gb"], lambda m: m)
    reserve = policy["gpu_memory_reserve_pct"]
    total = sum_of(model_states, acts_total)
    usable = apply(lambda cap: rounded(cap * (1 - reserve / 100)), capacity)
    per_param = apply(lambda b: sum(b), bpp)
    return {
        "model_states_gb": maybe_rounded(model_states),
        "states": breakdown,
        "activations_gb": maybe_rounded(acts_total),
        "logits_gb": logits,
        "total_gb": maybe_rounded(total),
        "capacity_gb": capacity,
        "usable_gb": usable,
        "bytes_per_param": per_param,
        "convention": _convention(cfg, zero, nvme) + (
            f" ({on_nvme:g} GB of them per node on its NVMe)" if nvme and isinstance(on_nvme, (int, float)) else ""),
        "host_offload_gb_per_node": offload_host,
        "offloaded_gb_per_gpu": offloaded,
        "nvme_offload_gb_per_node": on_nvme,
    }


def _convention(cfg: dict, zero: int, nvme: bool) -> str:
    """The accounting the estimate follows, named for GPU001's assumptions."""
    if cfg["gradients"] == "fp32":
        text = ("fp32 gradients, DeepSpeed's estimators' convention (18 bytes/param for Adam; ZeRO-1/2 keep the 16-bit "
                "gradients whole: 4P + 16P/N; ZeRO-3 adds 4 bytes x the largest layer)")
    else:
        text = "16-bit gradients (the ZeRO paper's convention: 16 bytes/param for Adam; DeepSpeed's estimators count 18)"
    if cfg["offload"]:
        where = "NVMe (ZeRO-Infinity, Rajbhandari et al. 2021)" if nvme else "host memory (ZeRO-Offload, Ren et al. 2021 §4)"
        kept = "nothing but one layer's buffer" if cfg["offload_params"] and zero >= 3 else "the 16-bit weights"
        text += f"; optimizer state and gradients offloaded to {where}, the GPU keeps {kept}"
    return text


def host_ram_ratio(data: dict, compute_idx: list[int]) -> Any:
    ratios = [
        fact(data, [f"node_pools[{i}].host_ram_gb", f"node_pools[{i}].gpu.memory_gb", f"node_pools[{i}].gpu.count"],
             lambda ram, mem, n: ram / (mem * n))
        for i in compute_idx
    ]
    if not ratios:
        return Unknown(("node_pools[].host_ram_gb",))
    return apply(lambda *known: rounded(min(known)), *ratios)
