"""Training time: the plan's time to train on this layout, against its target, and the fewest
GPUs that meet the target.

Fact `training` (GPU006, GPU007, GPU008; the storage read pace too).
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.numbers import num
from linter.physics import formulas as physics
from linter.physics.plan import expert_params
from linter.physics.values import (
    GB, MISSING, NO_GPU_POOL, TB, Unknown, apply, fact, get, known_or_none, rounded, unknowns
)


def chosen_checkpoint_interval(facts: dict[str, Any], policy: dict[str, float], cfg: dict, checkpoint_tb: Any) -> Any:
    """The checkpoint interval a plan that gives none is sized with (the sizer's choice), in
    minutes, and what it rests on: physics.checkpoint_interval_seconds with the mean time between
    interruptions at these GPUs (the policy's rate [llama3-reliability]), the pause while each GPU
    copies its share (the checkpoint over tensor x pipeline ranks, the most one rank holds) to host
    memory over its PCIe link one way [pytorch-async-checkpoint] (without a PCIe figure: the
    whole write, as a synchronous checkpoint pauses), and the policy's checkpoint_write_minutes,
    the time the sizer builds the checkpoint tier to write one in."""
    gpus, pcie = facts["gpus_training"], facts["link"]["pcie_gb_s"]
    if isinstance(gpus, Unknown) or isinstance(checkpoint_tb, Unknown):
        return gpus if isinstance(gpus, Unknown) else checkpoint_tb
    write_s = policy["checkpoint_write_minutes"] * 60
    rate = policy["interruptions_per_1000_gpu_days"] / 1000 / 86400 * gpus
    share = checkpoint_tb * TB / (cfg["t"] * cfg["p"])
    pause_s = share / (pcie / 2 * GB) if isinstance(pcie, (int, float)) and pcie > 0 else write_s
    seconds = physics.checkpoint_interval_seconds(pause_s, write_s, rate)
    young = physics.young_interval_seconds(pause_s, 1 / rate) if rate > 0 else None
    return {"minutes": rounded(seconds / 60, 1), "young_minutes": rounded(young / 60, 1) if young else None,
            "pause_s": rounded(pause_s, 2), "share_gb": rounded(share / GB, 2),
            "over_pcie": pause_s != write_s, "mtbf_minutes": rounded(1 / rate / 60, 1) if rate > 0 else None,
            "write_minutes": policy["checkpoint_write_minutes"], "young": seconds > write_s}


def time_to_train(data: dict, primary: int | None, facts: dict[str, Any], policy: dict[str, float], cfg: dict) -> dict[str, Any]:
    """Time to train for this layout (physics.training_time), against the target duration; hot
    spares take no part in the run."""
    gpus_total = facts["gpus_training"]
    out: dict[str, Any] = {
        "flops": fact(data, ["plan.model.parameters_billion", "plan.training_tokens_billion"],
                      lambda p, d: physics.training_flops(p * 1e9, d * 1e9)),
        "tokens_per_parameter": fact(data, ["plan.model.parameters_billion", "plan.training_tokens_billion"],
                                     lambda p, d: rounded(d / p, 1)),
        "target_days": fact(data, ["plan.target_duration_days"], lambda d: d),
    }
    if primary is None or isinstance(gpus_total, Unknown):
        unknown = gpus_total if isinstance(gpus_total, Unknown) else NO_GPU_POOL
        out.update(days=unknown, seconds=unknown, compute_seconds=unknown, breakdown=unknown, peak_tflops=unknown, mfu=unknown,
                   gpus_for_target=unknown, nodes_for_target=unknown)
        return out
    pool = f"node_pools[{primary}]"

    def peak(precision: str) -> Any:
        table = get(data, f"{pool}.gpu.dense_tflops")
        value = table.get(precision) if table is not MISSING else None
        return value if value else Unknown((f"{pool}.gpu.dense_tflops.{precision}",))

    out["peak_tflops"] = fact(data, ["plan.precision"], peak)
    # the policy's efficiency for this GPU's generation where it has one, else the general one
    arch = get(data, f"{pool}.gpu.architecture")
    key = f"compute_efficiency_{arch}" if arch is not MISSING and f"compute_efficiency_{arch}" in policy else "compute_efficiency"
    out["efficiency"], out["efficiency_policy"] = policy[key], key
    t, p, c, e = cfg["t"], cfg["p"], cfg["c"], cfg["e"]
    needs: list[str] = []

    def need(path: str, value: Any = MISSING) -> Any:
        value = get(data, path) if value is MISSING else value
        if value is MISSING or value is None:
            needs.append(path)
            return None
        if isinstance(value, Unknown):
            needs.extend(value.needs)
            return None
        return value

    params_b = need("plan.model.parameters_billion")
    tokens_b = need("plan.training_tokens_billion")
    tflops = need("plan.precision") and need("", out["peak_tflops"])
    d = get(data, "plan.parallelism.data")
    if d is MISSING:  # what the launcher does: the GPUs left over by t, p and c [megatron-lm-defaults]
        d = max(gpus_total // (t * p * c), 1)
    gpus_per_node = need(f"{pool}.gpu.count")
    shape: dict[str, Any] = {"layers": cfg["layers"], "seq": cfg["seq"], "hidden": cfg["hidden"]}
    wanted = {"layers": "plan.model.layers", "seq": "plan.model.sequence_length", "hidden": "plan.model.hidden_size"}
    if t > 1 or cfg["recompute"] == "selective" or cfg["moe"]:
        for key in ("layers", "seq", "hidden"):
            need(wanted[key], shape[key])
    micro = get(data, "plan.micro_batch_size")
    batch = get(data, "plan.global_batch_size")
    if p > 1:
        micro = need("plan.micro_batch_size")
    if p > 1 or d * c > 1:
        batch = need("plan.global_batch_size")
        need(wanted["seq"], shape["seq"])
    link = facts["link"]

    def link_rate() -> Any:
        """GB/s per GPU between the GPUs of a node (NVLink, else PCIe), or Unknown naming the link."""
        bw = link["bandwidth_gb_s"] if not isinstance(link["bandwidth_gb_s"], Unknown) else link["pcie_gb_s"]
        return Unknown(link["bandwidth_gb_s"].needs) if isinstance(bw, Unknown) else bw

    def fabric_rate() -> Any:
        """Bytes/s per GPU over the compute fabric, or Unknown naming what decides it."""
        per_gpu = facts["nics"]["gbps_per_gpu"]
        oversub = facts["fabric"].get("oversubscription", 1.0) if facts["fabric"].get("present") else 1.0
        missing = unknowns([per_gpu, oversub])
        if missing:
            return Unknown(missing)
        if not per_gpu:
            return Unknown((f"{pool}.nics (no compute NIC joins the nodes)",))
        return per_gpu / 8 * 1e9 / oversub

    link_bw = None
    if t > 1 or (cfg["moe"] and e > 1) or d * c > 1:
        link_bw = need("", link_rate())
    fabric_bw = None
    spans = [t, t * c * e if cfg["moe"] and e > 1 else 0, t * c * d if d * c > 1 else 0]
    if isinstance(gpus_per_node, int) and max(spans) > gpus_per_node:
        fabric_bw = need("", fabric_rate())
    interval = need("storage.checkpoint.interval_minutes")
    expert = expert_params(cfg)
    if isinstance(expert, Unknown):
        needs.extend(expert.needs)
    if needs:
        unknown = Unknown(tuple(dict.fromkeys(n for n in needs if n)))
        out.update(days=unknown, seconds=unknown, compute_seconds=unknown, breakdown=unknown, mfu=unknown,
                   gpus_for_target=unknown, nodes_for_target=unknown)
        return out
    params = params_b * 1e9
    active = params
    moe_layers = 0
    if cfg["moe"]:
        moe = cfg["moe"]
        active = params - expert + expert * moe["active"] / moe["experts"]
        moe_layers = cfg["layers"] // moe["every"]
    trainable_bytes = 4.0 if cfg["gradients"] == "fp32" else (4.0 if data["plan"].get("precision") in ("fp32", "tf32") else 2.0)
    if cfg["method"] in ("lora", "qlora"):
        trainable_bytes *= 0.0  # only the adapters' gradients cross the fabric: negligible, left out
    def run(gpus: int, ranks: int, link_bw: Any = link_bw, fabric_bw: Any = fabric_bw) -> dict[str, float]:
        return physics.training_time(
            params=params, tokens=tokens_b * 1e9, gpus=gpus, peak_flops=tflops * 1e12,
            efficiency=out["efficiency"], t=t, p=p, d=ranks, c=c, v=cfg["v"], e=e,
            micro_batch=micro if micro is not MISSING else None, global_batch=batch if batch is not MISSING else None,
            seq=shape["seq"], hidden=shape["hidden"], layers=shape["layers"], recompute=cfg["recompute"],
            active_params=active, moe_layers=moe_layers,
            active_experts=cfg["moe"]["active"] if cfg["moe"] else 1, capacity_factor=cfg["moe"]["capacity"] if cfg["moe"] else 1.0,
            gpus_per_node=gpus_per_node, link_bytes_per_s=link_bw / 2 * 1e9 if link_bw else None,
            fabric_bytes_per_s=fabric_bw, gradient_bytes=trainable_bytes, expert_params=expert, zero_stage=cfg["zero"],
            interruptions_per_gpu_second=policy["interruptions_per_1000_gpu_days"] / 1000 / 86400,
            interruption_cost_s=(policy["restart_minutes"] + interval / 2) * 60,
            frozen=cfg["method"] in ("lora", "qlora"), kv_fraction=cfg["kv_heads"] / cfg["heads"] if cfg["heads"] else 1.0,
        )

    result = run(gpus_total, d)
    out["seconds"] = result["total"]
    out["compute_seconds"] = result["compute"]  # the model FLOPs alone, a floor under any count's time (the sizer's)
    out["days"] = rounded(result["total"] / 86400, 1) if result["total"] != float("inf") else 1e9
    out["mfu"] = rounded(result["mfu"], 3)
    out["data_parallel_degree"] = d
    out["breakdown"] = {k: rounded(result[k] / 86400, 2) for k in
                        ("compute", "recompute", "bubble", "tensor_parallel", "context_parallel", "data_parallel",
                         "moe_all_to_all", "restarts")}

    # GPU008: the fewest whole nodes' GPUs that meet the target by the same time model, the
    # data-parallel degree growing or shrinking with them (t, p and c stay).
    target = out["target_days"]
    if isinstance(target, Unknown):
        out["gpus_for_target"] = out["nodes_for_target"] = target
        return out
    limit = target * 86400
    group = t * p * c
    # A layout of more data-parallel ranks than the manifest's own may need what its own does
    # not: the batch and sequence length (for the gradient all-reduce), the intra-node link or
    # the fabric. Where the manifest leaves one open, that layout is not estimated, and no count
    # found around it is known to be the fewest: the fact then names what is missing.
    wide_link = link_bw if link_bw else link_rate()
    wide_fabric = fabric_bw if fabric_bw else fabric_rate()
    open_batch = tuple(path for path, v in (("plan.global_batch_size", batch), (wanted["seq"], shape["seq"]))
                       if v is MISSING or v is None)
    blocked: list[str] = []
    known_link, known_fabric = known_or_none(wide_link), known_or_none(wide_fabric)

    def meets(n: int) -> bool:
        ranks = n // group
        if ranks < 1:
            return False
        if ranks * c > 1:
            lacking = open_batch + unknowns([wide_link if t * c * ranks <= gpus_per_node else wide_fabric])
            if lacking:
                blocked.extend(lacking)
                return False
        return run(ranks * group, ranks, known_link, known_fabric)["total"] <= limit

    step = math.lcm(gpus_per_node, group)
    ratio = gpus_total * result["total"] / limit
    guess = math.ceil(ratio) if math.isfinite(ratio) and ratio < 1e15 else gpus_total  # smallest_meeting caps it
    found = physics.smallest_meeting(meets, guess, step)
    if found is not None and isinstance(batch, int) and isinstance(micro, int):
        # a count to buy is one that can be launched: its data degree gives whole micro-batches per
        # step (GPU011); the next such count up, within DATA_REACH times the fewest, else the fewest
        def whole(n: int) -> bool:
            m = physics.micro_batches(batch, micro, n // group)
            return m == int(m) and m >= 1

        found = next((n for n in range(found, physics.DATA_REACH * found + 1, step) if whole(n) and meets(n)), found)
    if blocked:
        found = Unknown(tuple(dict.fromkeys(blocked)))
    elif found is None:  # GPU006 says the plan misses its target; this says more GPUs alone do not help
        found = Unknown((f"plan.target_duration_days (no GPU count of this layout, up to {num(physics.SEARCH_CAP)}, "
                         "meets it by this estimate)",))
    out["gpus_for_target"] = found
    out["nodes_for_target"] = apply(lambda n: n // gpus_per_node, found)
    return out
