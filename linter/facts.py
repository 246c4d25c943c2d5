"""Derive the quantities rules reason about from a resolved manifest.

Every fact is either a value or `Unknown(needs)`, naming the manifest fields that would
decide it; a rule that reads an unknown fact is *pending* on exactly those fields. The
arithmetic lives in linter.physics; this module only gathers its inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from . import physics
from .results import undotted

GB = 1e9
TB = 1e12


@dataclass(frozen=True)
class Unknown:
    needs: tuple[str, ...]


_MISSING = object()


def get(data: Any, path: str) -> Any:
    node = data
    for part in undotted(path):
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return node


def fact(data: dict, paths: list[str], compute: Callable[..., Any]) -> Any:
    """compute(*values at paths), or Unknown naming every path the manifest leaves out."""
    values = [get(data, p) for p in paths]
    missing = tuple(p for p, v in zip(paths, values) if v is _MISSING)
    if missing:
        return Unknown(missing)
    inner = tuple(n for v in values if isinstance(v, Unknown) for n in v.needs)
    if inner:
        return Unknown(inner)
    return compute(*values)


def _round(x: float, digits: int = 2) -> float:
    return round(x, digits)


def derive(data: dict, policy: dict[str, float]) -> dict[str, Any]:
    pools = data.get("node_pools", [])
    compute_idx = [i for i, p in enumerate(pools) if p.get("role", "compute") == "compute" and "gpu" in p]
    facts: dict[str, Any] = {"policy": policy}
    facts.update(_counts(data, pools, compute_idx))
    primary = max(compute_idx, key=lambda i: pools[i]["count"] * pools[i]["gpu"].get("count", 0), default=None)
    facts["primary_pool"] = f"node_pools[{primary}]" if primary is not None else Unknown(("node_pools[].gpu",))
    facts["memory"] = _memory(data, primary, policy)
    facts["host_ram_ratio"] = _host_ram_ratio(data, compute_idx)
    facts["link"] = _link(data, primary)
    facts["power"] = _power(data, pools, policy)
    facts["fabric"] = _fabric(data, pools)
    facts["checkpoint_tb"] = fact(
        data, ["plan.model.parameters_billion", "plan.precision"],
        lambda p, prec: _round(physics.checkpoint_bytes(p * 1e9, prec not in ("fp32", "tf32")) / TB, 3),
    )
    facts["training"] = _training(data, primary, facts["gpus_total"], policy)
    return facts


def _counts(data: dict, pools: list[dict], compute_idx: list[int]) -> dict[str, Any]:
    gpus_per_node = [get(data, f"node_pools[{i}].gpu.count") for i in compute_idx]
    known = [g for g in gpus_per_node if g is not _MISSING]
    counts: dict[str, Any] = {
        "compute_nodes": sum(pools[i]["count"] for i in compute_idx),
        "nodes_total": sum(p["count"] for p in pools),
    }
    if len(known) < len(gpus_per_node) or not compute_idx:
        needs = tuple(f"node_pools[{i}].gpu.count" for i, g in zip(compute_idx, gpus_per_node) if g is _MISSING)
        unknown = Unknown(needs or ("node_pools[].gpu",))
        counts.update(gpus_total=unknown, gpus_per_node_min=unknown, gpus_per_node_max=unknown)
    else:
        counts["gpus_total"] = sum(pools[i]["count"] * g for i, g in zip(compute_idx, known))
        counts["gpus_per_node_min"] = min(known)
        counts["gpus_per_node_max"] = max(known)
    mem = [fact(data, [f"node_pools[{i}].gpu.memory_gb", f"node_pools[{i}].gpu.count"], lambda m, c: m * c) for i in compute_idx]
    missing = tuple(n for m in mem if isinstance(m, Unknown) for n in m.needs)
    counts["gpu_memory_total_gb"] = Unknown(missing) if missing else sum(
        pools[i]["count"] * m for i, m in zip(compute_idx, mem)
    ) if compute_idx else Unknown(("node_pools[].gpu",))
    return counts


def _memory(data: dict, primary: int | None, policy: dict[str, float]) -> dict[str, Any]:
    """Per-GPU memory of the largest compute pool: model states (F1-F3) + activations (F4-F5)."""
    if primary is None:
        unknown = Unknown(("node_pools[].gpu",))
        return {k: unknown for k in ("model_states_gb", "activations_gb", "total_gb", "capacity_gb", "usable_gb", "bytes_per_param")}
    pool = f"node_pools[{primary}]"
    par = data["plan"].get("parallelism", {})
    t, p, v = par.get("tensor", 1), par.get("pipeline", 1), par.get("pipeline_chunks", 1)
    zero = par.get("zero_stage", 0)
    offload = par.get("offload", "none") != "none"

    def per_param(precision: str, optimizer: str) -> Any:
        found = physics.state_bytes(precision, optimizer)
        return found if found else Unknown((f"plan.optimizer (no memory model for {optimizer})",))

    bpp = fact(data, ["plan.precision", "plan.optimizer"], per_param)
    inputs = ["plan.model.parameters_billion"] + (["plan.parallelism.data"] if zero else [])

    def states(params_b: float, d: int = 1) -> Any:
        if isinstance(bpp, Unknown):
            return bpp
        return physics.model_state_bytes_per_gpu(params_b * 1e9, zero, d, t, p, bpp, offload) / GB

    model_states = fact(data, inputs, states)
    activations = fact(
        data,
        ["plan.model.sequence_length", "plan.micro_batch_size", "plan.model.hidden_size",
         "plan.model.attention_heads", "plan.model.layers"],
        lambda s, b, h, a, L: physics.activation_bytes_per_gpu(
            physics.activation_bytes_per_layer(
                s, b, h, a, t, par.get("sequence_parallel", False), par.get("activation_recompute", "none")),
            L, p, v,
        ) / GB,
    )
    capacity = fact(data, [f"{pool}.gpu.memory_gb"], lambda m: m)
    reserve = policy["gpu_memory_reserve_pct"]
    total = _sum(model_states, activations)
    usable = capacity if isinstance(capacity, Unknown) else _round(capacity * (1 - reserve / 100))
    return {
        "model_states_gb": _maybe_round(model_states),
        "activations_gb": _maybe_round(activations),
        "total_gb": _maybe_round(total),
        "capacity_gb": capacity,
        "usable_gb": usable,
        "bytes_per_param": sum(bpp) if isinstance(bpp, tuple) else bpp,
    }


def _difference(a: Any, b: Any) -> Any:
    missing = tuple(n for v in (a, b) if isinstance(v, Unknown) for n in v.needs)
    return Unknown(missing) if missing else a - b


def _sum(*values: Any) -> Any:
    missing = tuple(n for v in values if isinstance(v, Unknown) for n in v.needs)
    return Unknown(missing) if missing else sum(values)


def _maybe_round(value: Any) -> Any:
    return value if isinstance(value, Unknown) else _round(value)


def _link(data: dict, primary: int | None) -> dict[str, Any]:
    """The primary pool's GPU-to-GPU link: the node's own (`intra_node_link`, e.g. an NVSwitch
    baseboard) when given, else the GPU's (`gpu.link`)."""
    if primary is None:
        unknown = Unknown(("node_pools[].gpu",))
        return {"kind": unknown, "bandwidth_gb_s": unknown, "max_gpus": unknown}
    pool = f"node_pools[{primary}]"
    out = {}
    for key in ("kind", "bandwidth_gb_s", "max_gpus"):
        node_value, gpu_value = get(data, f"{pool}.intra_node_link.{key}"), get(data, f"{pool}.gpu.link.{key}")
        value = node_value if node_value is not _MISSING else gpu_value
        out[key] = value if value is not _MISSING else Unknown((f"{pool}.intra_node_link.{key}", f"{pool}.gpu.link.{key}"))
    return out


def _host_ram_ratio(data: dict, compute_idx: list[int]) -> Any:
    ratios = [
        fact(data, [f"node_pools[{i}].host_ram_gb", f"node_pools[{i}].gpu.memory_gb", f"node_pools[{i}].gpu.count"],
             lambda ram, mem, n: ram / (mem * n))
        for i in compute_idx
    ]
    missing = tuple(n for r in ratios if isinstance(r, Unknown) for n in r.needs)
    if missing or not ratios:
        return Unknown(missing or ("node_pools[].host_ram_gb",))
    return _round(min(ratios))


def _power(data: dict, pools: list[dict], policy: dict[str, float]) -> dict[str, Any]:
    """IT power at full load (nameplate maximum per node), per rack and for the facility."""
    node_kw = {p["name"]: fact(data, [f"node_pools[{i}].max_power_kw"], lambda kw: kw) for i, p in enumerate(pools)}
    it_kw = _sum(*(_scale(node_kw[p["name"]], p["count"]) for p in pools))
    racks_out = []
    racks = get(data, "facility.racks")
    for r, rack in enumerate(racks if racks is not _MISSING else []):
        at = f"facility.racks[{r}]"
        load = _sum(*(_scale(node_kw.get(c["pool"], Unknown((f"{at}.contents[{j}].pool (no such node pool)",))), c["nodes"])
                      for j, c in enumerate(rack.get("contents", []))), rack.get("other_kw", 0))
        circuit_limit = fact(
            data, [f"{at}.circuits"],
            lambda c: physics.continuous_limit_kw(
                c["count"], physics.circuit_kva(c["voltage_v"], c["breaker_a"], c.get("phases", 1)),
                c.get("ab_redundant", False), 100 if c.get("continuous_rated") else policy["circuit_continuous_pct"],
            ),
        )
        budget = fact(data, [f"{at}.power_budget_kw"], lambda kw: kw)
        racks_out.append({
            "name": rack["name"],
            "path": at,
            "count": rack["count"],
            "load_kw": _maybe_round(load),
            "budget_kw": budget,
            "budget_limit_kw": budget if isinstance(budget, Unknown) else _round(budget * (1 - policy["power_headroom_pct"] / 100)),
            "circuit_limit_kw": _maybe_round(circuit_limit),
            "circuit_rating_needed_kw": load if isinstance(load, Unknown) else _round(load * 100 / policy["circuit_continuous_pct"]),
            "cooling_capacity_kw": fact(data, [f"{at}.cooling_capacity_kw"], lambda kw: kw),
            "cooling": fact(data, [f"{at}.cooling"], lambda c: c),
        })
        row = racks_out[-1]
        for margin, limit in (("budget_margin_kw", "budget_limit_kw"), ("circuit_margin_kw", "circuit_limit_kw"),
                              ("cooling_margin_kw", "cooling_capacity_kw")):
            row[margin] = _maybe_round(_difference(row[limit], row["load_kw"]))
    racked = {}
    for rack in (racks if racks is not _MISSING else []):
        for c in rack.get("contents", []):
            racked[c["pool"]] = racked.get(c["pool"], 0) + c["nodes"] * rack["count"]
    capacity = fact(data, ["facility.it_capacity_kw"], lambda kw: kw)
    return {
        "node_kw": node_kw,
        "rack_groups": len(racks_out) if racks_out else Unknown(("facility.racks",)),
        "it_kw": _maybe_round(it_kw),
        "facility_capacity_kw": capacity,
        "facility_limit_kw": capacity if isinstance(capacity, Unknown) else _round(capacity * (1 - policy["power_headroom_pct"] / 100)),
        "racks": racks_out,
        "unracked_nodes": {p["name"]: p["count"] - racked.get(p["name"], 0) for p in pools if p["count"] > racked.get(p["name"], 0)},
        "ups_kw": fact(data, ["facility.ups.capacity_kva", "facility.ups.power_factor"], physics.ups_kw),
    }


def _scale(value: Any, times: float) -> Any:
    return value if isinstance(value, Unknown) else value * times


def _fabric(data: dict, pools: list[dict]) -> dict[str, Any]:
    """Ports the compute fabric needs for its topology [al-fares-2008] §2-3."""
    fabrics = get(data, "network.fabrics")
    fabrics = [] if fabrics is _MISSING else fabrics
    idx = next((i for i, f in enumerate(fabrics) if f.get("purpose", "compute") in ("compute", "converged")), None)
    endpoints = sum(
        pool["count"] * nic.get("count", 1)
        for pool in pools
        for nic in pool.get("nics", [])
        if nic.get("purpose", "compute") in ("compute", "converged")
        and (idx is None or nic.get("fabric", fabrics[idx]["name"]) == fabrics[idx]["name"])
    )
    out: dict[str, Any] = {"present": idx is not None, "compute_nics": endpoints}
    if idx is None:
        return out
    fabric = fabrics[idx]
    at = f"network.fabrics[{idx}]"
    out.update(path=at, name=fabric["name"], kind=fabric.get("kind", Unknown((f"{at}.kind",))))
    topology = fabric.get("topology")
    out["topology"] = topology or Unknown((f"{at}.topology",))

    def ports(role: str) -> Any:
        chosen = [(j, s) for j, s in enumerate(fabric.get("switches", [])) if s["role"] == role]
        needs = tuple(f"{at}.switches[{j}].ports" for j, s in chosen if "ports" not in s)
        return Unknown(needs) if needs else sum(s["count"] * s["ports"] for _, s in chosen)

    if topology == "single-switch":
        out.update(ports_needed=endpoints, ports_present=ports("single"), uplinks_needed=0)
    else:
        uplinks = physics.uplinks_needed(endpoints, fabric.get("oversubscription", 1.0))
        out.update(
            leaf_down_needed=endpoints,
            uplinks_needed=uplinks,
            ports_needed=endpoints + uplinks,
            ports_present=ports("leaf"),
            spine_ports_needed=uplinks,
            spine_ports_present=ports("spine"),
        )
    return out


def _training(data: dict, primary: int | None, gpus_total: Any, policy: dict[str, float]) -> dict[str, Any]:
    """Compute (F6) and time to train at the policy's MFU, against the target duration."""
    out: dict[str, Any] = {
        "flops": fact(data, ["plan.model.parameters_billion", "plan.training_tokens_billion"],
                      lambda p, d: physics.training_flops(p * 1e9, d * 1e9)),
        "tokens_per_parameter": fact(data, ["plan.model.parameters_billion", "plan.training_tokens_billion"],
                                     lambda p, d: _round(d / p, 1)),
        "target_days": fact(data, ["plan.target_duration_days"], lambda d: d),
    }
    if primary is None or isinstance(gpus_total, Unknown):
        out["days"] = gpus_total if isinstance(gpus_total, Unknown) else Unknown(("node_pools[].gpu",))
        return out
    pool = f"node_pools[{primary}]"

    def peak(precision: str) -> Any:
        table = get(data, f"{pool}.gpu.dense_tflops")
        value = table.get(precision) if table is not _MISSING else None
        return value if value else Unknown((f"{pool}.gpu.dense_tflops.{precision}",))

    def days(p: float, d: float, precision: str) -> Any:
        tflops = peak(precision)
        if isinstance(tflops, Unknown):
            return tflops
        seconds = physics.training_seconds_at_mfu(p * 1e9, d * 1e9, gpus_total, tflops * 1e12, policy["mfu"])
        return _round(seconds / 86400, 1)

    out["days"] = fact(data, ["plan.model.parameters_billion", "plan.training_tokens_billion", "plan.precision"], days)
    return out


# Top-level fact names rules may read (checked when a rule pack loads).
FACT_NAMES = (
    "policy", "compute_nodes", "nodes_total", "gpus_total", "gpus_per_node_min", "gpus_per_node_max",
    "gpu_memory_total_gb", "primary_pool", "memory", "host_ram_ratio", "power", "fabric",
    "checkpoint_tb", "training", "tier", "today", "catalog", "link",
)
