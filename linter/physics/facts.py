"""Derive the quantities rules reason about from a resolved manifest.

Each layer's facts live in a module of their own (memory, training, network, power, storage,
procurement; the plan's settings in plan, the not-yet-known values in values); the arithmetic
is in linter.physics.formulas. This module only assembles them, in the order they depend on
each other.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.physics.memory import gpu_memory, host_ram_ratio
from linter.physics.network import fabric_checks, fabric_facts, intra_node_link, node_nics
from linter.physics.plan import plan_settings
from linter.physics.power import power_facts
from linter.physics.procurement import decision, money_and_dates
from linter.physics.storage import checkpoint_tb, local_disk, storage_facts
from linter.physics.training import chosen_checkpoint_interval, time_to_train
from linter.physics.values import MISSING, NO_GPU_POOL, Unknown, fact, get, scaled, sum_of


def derive(data: dict, policy: dict[str, float], today: str | None = None) -> dict[str, Any]:
    """Every fact about `data`; `today` (ISO date) is when an order without a date is placed."""
    pools = data.get("node_pools", [])
    compute_idx = [i for i, p in enumerate(pools) if p.get("role", "compute") == "compute" and "gpu" in p]
    facts: dict[str, Any] = {"policy": policy}
    facts.update(_counts(data, pools, compute_idx))
    primary = max(compute_idx, key=lambda i: pools[i]["count"] * pools[i]["gpu"].get("count", 0), default=None)
    facts["primary_pool"] = f"node_pools[{primary}]" if primary is not None else NO_GPU_POOL
    cfg = plan_settings(data)
    facts["plan"] = {"assumed": cfg["assumed"], "attention": cfg["attention"], "method": cfg["method"]}
    facts["memory"] = gpu_memory(data, primary, policy, cfg)
    facts["host_ram_ratio"] = host_ram_ratio(data, compute_idx)
    facts["link"] = intra_node_link(data, primary)
    facts["power"] = power_facts(data, pools, policy)
    facts["fabric"] = fabric_facts(data, pools)
    facts["fabrics"] = fabric_checks(data, pools)
    facts["checkpoint_tb"] = checkpoint_tb(data, cfg)
    facts["nics"] = node_nics(data, primary)
    facts["training"] = time_to_train(data, primary, facts, policy, cfg)
    facts["local_disk"] = local_disk(data, primary, facts["checkpoint_tb"], facts["compute_nodes"],
                                     policy["local_checkpoint_copies"], facts["memory"]["nvme_offload_gb_per_node"])
    facts["storage"] = storage_facts(data, facts["checkpoint_tb"], facts["training"])
    gpu_model = get(data, f"{facts['primary_pool']}.gpu.model") if primary is not None else MISSING
    facts["decision"] = decision(data, facts["gpus_total"], gpu_model)
    facts["procurement"] = money_and_dates(
        data, facts["power"]["it_kw"], facts["gpus_total"],
        NO_GPU_POOL if primary is None else gpu_model if gpu_model is not MISSING
        else Unknown((f"{facts['primary_pool']}.gpu.model",)), policy, today)
    return facts


def _counts(data: dict, pools: list[dict], compute_idx: list[int]) -> dict[str, Any]:
    gpus_per_node = [get(data, f"node_pools[{i}].gpu.count") for i in compute_idx]
    known = [g for g in gpus_per_node if g is not MISSING]
    counts: dict[str, Any] = {
        "compute_nodes": sum(pools[i]["count"] for i in compute_idx),
        # servers, each running its own OS: a rack-scale system's node is a rack of compute trays
        "compute_servers": sum(pools[i]["count"] * (pools[i].get("rack_scale") or {}).get("compute_trays", 1)
                               for i in compute_idx),
        "nodes_total": sum(p["count"] for p in pools),
        "spare_nodes": sum(pools[i].get("spares") or 0 for i in compute_idx),
    }
    if len(known) < len(gpus_per_node) or not compute_idx:
        needs = tuple(f"node_pools[{i}].gpu.count" for i, g in zip(compute_idx, gpus_per_node) if g is MISSING)
        unknown = Unknown(needs) if needs else NO_GPU_POOL
        counts.update(gpus_total=unknown, gpus_training=unknown, gpus_per_node_min=unknown, gpus_per_node_max=unknown)
    else:
        counts["gpus_total"] = sum(pools[i]["count"] * g for i, g in zip(compute_idx, known))
        # hot spares are bought, powered and cabled, but the parallel layout runs without them
        counts["gpus_training"] = sum(max(pools[i]["count"] - (pools[i].get("spares") or 0), 0) * g
                                      for i, g in zip(compute_idx, known))
        counts["gpus_per_node_min"] = min(known)
        counts["gpus_per_node_max"] = max(known)
    mem = [fact(data, [f"node_pools[{i}].gpu.memory_gb", f"node_pools[{i}].gpu.count"], lambda m, c: m * c) for i in compute_idx]
    counts["gpu_memory_total_gb"] = sum_of(*(scaled(m, pools[i]["count"]) for i, m in zip(compute_idx, mem))) \
        if compute_idx else NO_GPU_POOL
    return counts


def layout_facts(data: dict, policy: dict[str, float], node: dict[str, Any] | None = None,
                 memory: dict[str, Any] | None = None, cfg: dict[str, Any] | None = None,
                 choose_interval: bool = False) -> dict[str, Any]:
    """Memory per GPU and time to train of a manifest whose first node pool is its only compute
    pool: the part of `derive` a layout search calls thousands of times (the same code, without
    power, fabric, storage and money). What the search already has for this same data is not
    derived again: the pool's `node_facts` (they do not change with the layout), its
    `layout_memory` and its `plan_settings` (they do not change with the node count).
    `choose_interval`: the goal gives no checkpoint interval, so this layout's
    (checkpoint_interval) is written into `data`, the search's own draft, for the time model to
    read as a manifest's."""
    pools = data["node_pools"]
    facts: dict[str, Any] = {"policy": policy}
    facts.update(_counts(data, pools, [0]))
    cfg = cfg or plan_settings(data)
    facts["memory"] = memory["memory"] if memory else gpu_memory(data, 0, policy, cfg)
    facts.update(node or node_facts(data))
    if choose_interval:
        facts["checkpoint_interval"] = chosen = chosen_checkpoint_interval(facts, policy, cfg, checkpoint_tb(data, cfg))
        checkpoint = data.setdefault("storage", {}).setdefault("checkpoint", {})
        if isinstance(chosen, dict):
            checkpoint["interval_minutes"] = chosen["minutes"]
        else:  # what it needs is missing: the time model names it
            checkpoint.pop("interval_minutes", None)
    facts["fabric"] = fabric_facts(data, pools)
    facts["training"] = time_to_train(data, 0, facts, policy, cfg)
    return facts


def node_facts(data: dict) -> dict[str, Any]:
    """The first pool's GPU-to-GPU link and NICs: what a layout search keeps while it changes
    the layout and the node count."""
    return {"link": intra_node_link(data, 0), "nics": node_nics(data, 0)}


def layout_memory(data: dict, policy: dict[str, float], cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    """Memory per GPU alone (layout_facts' `memory`): whether a layout fits is asked far more
    often than how long it takes."""
    return {"memory": gpu_memory(data, 0, policy, cfg or plan_settings(data))}


# Top-level fact names rules may read (checked when a rule pack loads); tier, tier_inferred,
# tier_inferred_reason, tier_rank (name -> 0 for the smallest tier) and options (the procurement
# options compared: names, recommendation) are set by the review, not here;
# so are catalog, catalog_dates and catalog_bounds (from the catalog step).
FACT_NAMES = (
    "policy", "compute_nodes", "compute_servers", "nodes_total", "spare_nodes", "gpus_total", "gpus_training", "gpus_per_node_min", "gpus_per_node_max",
    "gpu_memory_total_gb", "primary_pool", "memory", "host_ram_ratio", "power", "fabric", "fabrics",
    "checkpoint_tb", "training", "tier", "tier_inferred", "tier_inferred_reason", "tier_rank", "today", "catalog", "catalog_dates",
    "catalog_bounds", "link", "nics", "local_disk", "storage", "procurement", "plan", "decision", "options",
)
