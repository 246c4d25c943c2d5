"""Link and network: the GPU-to-GPU link inside a node, the NICs of a node, and each fabric's
ports, tiers and rates.

Facts `link` (LNK001-LNK004), `nics` (NET004-NET007), `fabric` (NET001, NET004, NET008, NET009,
NET011, NET012 and the `rented-fabric` condition) and `fabrics` (NET002, NET003, NET010).
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable

from linter.physics import formulas as physics
from linter.physics.values import MISSING, NO_GPU_POOL, Unknown, apply, fact, get, least, rounded, unknowns


def intra_node_link(data: dict, primary: int | None) -> dict[str, Any]:
    """The primary pool's GPU-to-GPU link: the node's own (`intra_node_link`, e.g. an NVSwitch
    baseboard) when given, else the GPU's (`gpu.link`)."""
    if primary is None:
        return {k: NO_GPU_POOL for k in ("kind", "bandwidth_gb_s", "max_gpus", "pcie_gb_s")}
    pool = f"node_pools[{primary}]"
    out = {"pcie_gb_s": fact(data, [f"{pool}.gpu.pcie.generation", f"{pool}.gpu.pcie.lanes"], physics.pcie_gb_s)}
    for key in ("kind", "bandwidth_gb_s", "max_gpus"):
        node_value, gpu_value = get(data, f"{pool}.intra_node_link.{key}"), get(data, f"{pool}.gpu.link.{key}")
        value = node_value if node_value is not MISSING else gpu_value
        out[key] = value if value is not MISSING else Unknown((f"{pool}.intra_node_link.{key}", f"{pool}.gpu.link.{key}"))
    return out


def node_nics(data: dict, primary: int | None) -> dict[str, Any]:
    """Compute-fabric NICs of one node of the largest compute pool: count, bandwidth per node
    and per GPU (the figure the Llama 3 paper reports: 400 Gb/s per GPU [llama3] §3.3.1), and
    whether every one is GPUDirect RDMA capable [gpudirect-rdma]."""
    keys = ("per_node", "gbps_per_node", "gbps_per_gpu", "min_rate_gbps", "rdma")
    if primary is None:
        return {k: NO_GPU_POOL for k in keys} | {"path": "node_pools"}
    pool = f"node_pools[{primary}]"
    nics = get(data, f"{pool}.nics")
    if nics is MISSING:
        unknown = Unknown((f"{pool}.nics",))
        return {k: unknown for k in keys} | {"path": pool}
    compute = [(j, n) for j, n in enumerate(nics) if n.get("purpose", "compute") in ("compute", "converged")]
    counts = nic_count(compute, pool)
    out: dict[str, Any] = {"path": f"{pool}.nics", "per_node": counts}
    if not compute:  # `nics: []` or only other purposes: the manifest says this node has no compute NIC
        return out | {"gbps_per_node": 0, "gbps_per_gpu": 0, "min_rate_gbps": 0, "rdma": False}
    rates = [(f"{pool}.nics[{j}].rate_gbps", n.get("rate_gbps")) for j, n in compute]
    out["min_rate_gbps"] = least(rates, f"{pool}.nics")
    per_node = apply(lambda _, __: sum(n["count"] * n["rate_gbps"] for _, n in compute), out["min_rate_gbps"], counts)
    out["gbps_per_node"] = per_node
    out["gbps_per_gpu"] = fact(data, [f"{pool}.gpu.count"], lambda g: apply(lambda bw: rounded(bw / g, 1), per_node))
    flags = [(f"{pool}.nics[{j}].gpudirect_rdma", n.get("gpudirect_rdma")) for j, n in compute]
    if any(flag is False for _, flag in flags):
        out["rdma"] = False
    else:
        missing = tuple(path for path, flag in flags if flag is None)
        out["rdma"] = Unknown(missing) if missing else True
    return out


def nic_count(nics: list[tuple[int, dict]], pool: str) -> Any:
    """NICs per node of the (index, NIC) entries of node pool `pool`, or Unknown naming each
    entry that leaves its count out."""
    needs = tuple(f"{pool}.nics[{j}].count" for j, n in nics if "count" not in n)
    return Unknown(needs) if needs else sum(n["count"] for _, n in nics)


def nic_ports(pools: list[dict], on: list[tuple[int, dict, int, dict]]) -> Any:
    """NIC ports on a fabric: nodes x NICs of every entry in `on` (nics_on), or Unknown naming
    what is left out: a compute pool that lists no `nics` at all (a missing list is not "no
    NICs": `nics: []` is), a pool's node count, or an entry's count."""
    needs = tuple(f"node_pools[{i}].nics" for i, pool in enumerate(pools)
                  if pool.get("role", "compute") == "compute" and "nics" not in pool)
    needs += tuple(f"node_pools[{i}].count" for i, pool in enumerate(pools) if "count" not in pool)
    needs += tuple(f"node_pools[{i}].nics[{j}].count" for i, _, j, nic in on if "count" not in nic)
    if needs:
        return Unknown(tuple(dict.fromkeys(needs)))
    return sum(pool["count"] * nic["count"] for _, pool, _, nic in on)


def fabric_facts(data: dict, pools: list[dict]) -> dict[str, Any]:
    """Ports the compute fabric needs for its topology [al-fares-2008] §2-3."""
    fabrics = get(data, "network.fabrics")
    fabrics = [] if fabrics is MISSING else fabrics
    idx = compute_fabric_index(fabrics)
    endpoints = nic_ports(pools, nics_on(pools, fabrics, idx))
    out: dict[str, Any] = {"present": idx is not None, "compute_nics": endpoints}
    if idx is None:
        return out
    out.update(fabric_record(pools, fabrics, idx))
    return out


def compute_fabric_index(fabrics: list[dict]) -> int | None:
    return next((i for i, f in enumerate(fabrics) if f.get("purpose", "compute") in ("compute", "converged")), None)


def nics_on(pools: list[dict], fabrics: list[dict], idx: int | None) -> list[tuple[int, dict, int, dict]]:
    """(pool index, pool, NIC index, NIC) of every NIC on fabric `idx`. The compute fabric takes
    the compute (and converged) NICs that name it or no fabric at all (with `idx` None: every
    compute NIC); another fabric takes the NICs that name it, and those of its purpose that name
    no fabric when it is the first fabric of that purpose."""
    compute = compute_fabric_index(fabrics)
    if idx is None or idx == compute:
        name = fabrics[idx]["name"] if idx is not None else None
        return [(i, pool, j, nic) for i, pool in enumerate(pools) for j, nic in enumerate(pool.get("nics", []))
                if nic.get("purpose", "compute") in ("compute", "converged")
                and (name is None or nic.get("fabric", name) == name)]
    fabric = fabrics[idx]
    purpose = fabric.get("purpose", "compute")
    first = next(i for i, f in enumerate(fabrics) if f.get("purpose", "compute") == purpose)
    return [(i, pool, j, nic) for i, pool in enumerate(pools) for j, nic in enumerate(pool.get("nics", []))
            if nic.get("fabric") == fabric["name"]
            or ("fabric" not in nic and idx == first and nic.get("purpose", "compute") == purpose)]


def fabric_record(pools: list[dict], fabrics: list[dict], idx: int) -> dict[str, Any]:
    """One fabric's endpoints, ports needed and present per tier, and link rates [al-fares-2008] §2-3."""
    fabric = fabrics[idx]
    at = f"network.fabrics[{idx}]"
    on = nics_on(pools, fabrics, idx)
    endpoints = nic_ports(pools, on)
    out: dict[str, Any] = {"endpoints": endpoints}
    out.update(path=at, name=fabric["name"], purpose=fabric.get("purpose", "compute"),
               kind=fabric.get("kind", Unknown((f"{at}.kind",))), managed_by=fabric.get("managed_by", "owner"))
    topology = fabric.get("topology")
    out["topology"] = topology or Unknown((f"{at}.topology",))
    given = fabric.get("oversubscription")
    # Not given: unknown, unless one switch decides it (no uplinks at all).
    oversub = given if given is not None else (1.0 if topology == "single-switch" else Unknown((f"{at}.oversubscription",)))
    out["oversubscription"] = oversub
    nic_rates = [(f"node_pools[{i}].nics[{j}].rate_gbps", nic.get("rate_gbps")) for i, _, j, nic in on]
    switch_rates = [(f"{at}.switches[{j}].port_rate_gbps", s.get("port_rate_gbps")) for j, s in enumerate(fabric.get("switches", []))]
    out["nic_rate_gbps"] = least(nic_rates, f"node_pools[].nics[] on fabric {fabric['name']}")
    out["switch_rate_gbps"] = least(switch_rates, f"{at}.switches")
    switches = fabric.get("switches", [])
    listed = "switches" in fabric  # a fabric that leaves its switches out has unknown ports, not none

    def ports(role: str) -> Any:
        chosen = [(j, s) for j, s in enumerate(switches) if s["role"] == role]
        needs = tuple(f"{at}.switches[{j}].ports" for j, s in chosen if "ports" not in s)
        if not listed:
            needs = (f"{at}.switches",)
        return Unknown(needs) if needs else sum(s["count"] * s["ports"] for _, s in chosen)

    def count(role: str) -> Any:
        return sum(s["count"] for s in switches if s["role"] == role) if listed else Unknown((f"{at}.switches",))

    if topology == "single-switch":
        out.update(ports_needed=endpoints, ports_present=ports("single"), uplinks_needed=0)
        return out
    uplinks = apply(lambda e, o: physics.uplinks_needed(e, o), endpoints, oversub)
    core = count("core")
    out.update(
        leaf_down_needed=endpoints,
        uplinks_needed=uplinks,
        ports_needed=apply(lambda e, u: e + u, endpoints, uplinks),
        ports_present=ports("leaf"),
        # with a core tier each spine splits its ports evenly, down to the leaves and up to the core [al-fares-2008] §3
        spine_ports_needed=apply(lambda u, c: 2 * u if c else u, uplinks, core),
        spine_ports_present=ports("spine"),
        leaves=count("leaf"), spines=count("spine"), cores=core, core_present=apply(lambda c: c > 0, core),
        core_ports_needed=apply(lambda u, c: u if c else 0, uplinks, core),
        core_ports_present=ports("core") if not listed or core else 0,
    )
    out["uplinks_per_leaf"] = apply(lambda u, n: math.ceil(u / n) if n else 0, uplinks, out["leaves"])
    out["links_per_spine_per_leaf"] = apply(
        lambda per_leaf, n: per_leaf / n if n else 0, out["uplinks_per_leaf"], out["spines"])
    sizes = [s["ports"] for s in switches if s["role"] in ("leaf", "spine", "core") and "ports" in s]
    radix = min(sizes) if sizes and len(sizes) == sum(1 for s in switches if s["role"] in ("leaf", "spine", "core")) \
        else Unknown(tuple(f"{at}.switches[{j}].ports" for j, s in enumerate(switches) if "ports" not in s) or (f"{at}.switches",))
    out["radix"] = radix
    out["two_tier_max_endpoints"] = apply(lambda k, o: physics.two_tier_max_endpoints(k, o), radix, oversub)
    out["three_tier_max_endpoints"] = apply(lambda k, o: physics.three_tier_max_endpoints(k, o), radix, oversub)
    return out


def fabric_checks(data: dict, pools: list[dict]) -> dict[str, Any]:
    """The port and rate checks of every fabric the owner builds, compute and storage alike
    (NET002, NET003, NET010): the fabrics that fail where their numbers are known, and whether
    the rest are decided (True, or Unknown naming what would decide them). A fabric other than
    the compute one is checked when NICs are on it."""
    fabrics = get(data, "network.fabrics")
    fabrics = [] if fabrics is MISSING else fabrics
    compute = compute_fabric_index(fabrics)
    records = [fabric_record(pools, fabrics, i) for i in range(len(fabrics))
               if i == compute or nics_on(pools, fabrics, i)]
    records = [r for r in records if r["managed_by"] == "owner"]

    def check(applies: Callable[[dict], bool], needed: str, present: str) -> dict[str, Any]:
        """The fabrics `applies` picks, those whose `needed` exceeds `present`, and whether all are decided."""
        chosen = [r for r in records if applies(r)]
        failing, needs = [], []
        for r in chosen:
            a, b = r.get(needed), r.get(present)
            if isinstance(a, Unknown) or isinstance(b, Unknown):
                needs += unknowns([a, b])
            elif a > b:
                failing.append(r)
        return {"fabrics": chosen, "failing": failing, "decided": Unknown(tuple(needs)) if needs else True}

    single_or_leaf = check(lambda r: True, "ports_needed", "ports_present")
    spine = check(lambda r: r["topology"] != "single-switch" and not isinstance(r["topology"], Unknown),
                  "spine_ports_needed", "spine_ports_present")
    rate = check(lambda r: True, "nic_rate_gbps", "switch_rate_gbps")  # a switch slower than its NICs
    return {"count": len(records), "leaf": single_or_leaf, "spine": spine, "rate": rate}
