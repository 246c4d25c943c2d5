"""Power and cooling: each node's and switch's maximum draw, every rack's load (its nodes, its
switches, its other gear) against its budget, circuits and cooling, that heat split into what
leaves in liquid and what leaves in air, and the facility's IT load against its capacity and UPS.

Fact `power` (PWR001-PWR012, and BUY001 for the electricity bill).
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.numbers import num
from linter.physics import formulas as physics
from linter.physics.values import MISSING, Unknown, apply, difference, fact, get, maybe_rounded, rounded, scaled, unknowns


def node_power(i: int, pool: dict, policy: dict[str, float]) -> dict[str, Any]:
    """One node's maximum draw: the manifest's (or catalog system's) max_power_kw, else an
    estimate from its GPUs (count x max_power_w) plus the policy's host allowance per GPU."""
    at = f"node_pools[{i}]"
    gpu = pool.get("gpu") or {}
    count, watts = gpu.get("count"), gpu.get("max_power_w")
    gpus_kw = rounded(count * watts / 1000, 3) if count and watts else None
    gpus_basis = f"{count} x {num(watts)} W" if gpus_kw is not None else ""
    out: dict[str, Any] = {"pool": pool["name"], "path": at, "gpus_kw": gpus_kw, "estimate": False, "basis": "",
                           "given": "max_power_kw" in pool, "gpus_basis": gpus_basis}
    if "max_power_kw" in pool:
        out["kw"] = pool["max_power_kw"]
    elif gpus_kw is not None:
        host = policy["host_power_w_per_gpu"]
        out.update(kw=rounded(count * (watts + host) / 1000, 3), estimate=True,
                   basis=f"{count} x {num(watts)} W GPUs + {count} x {num(host)} W host allowance")
    else:
        out["kw"] = Unknown((f"{at}.max_power_kw",) + ((f"{at}.gpu.max_power_w",) if gpu else ()))
    out.update(_heat_split(at, pool, out["kw"], gpus_kw, gpus_basis))
    return out


def _heat_split(at: str, pool: dict, kw: Any, gpus_kw: float | None, gpus_basis: str) -> dict[str, Any]:
    """How one node's heat leaves it: in liquid (cold plates) and in air. Every watt drawn
    becomes heat; a liquid-cooled system's documented share goes to liquid, or, where no
    document gives one, its GPUs' own power (they sit on the cold plates) as a marked estimate."""
    cooled = pool.get("cooled_by")
    if cooled != "liquid":
        return {"liquid_kw": 0, "air_kw": kw, "liquid_cooled": False,
                "split_basis": "air-cooled" if cooled == "air" else "all heat to air (cooled_by not given)"}
    pct = pool.get("liquid_heat_pct")
    if pct is not None:
        liquid = apply(lambda k: rounded(physics.liquid_heat_kw(k, pct), 3), kw)
        basis = f"{num(pct)}% of its heat to liquid (liquid_heat_pct)"
    elif gpus_kw is not None:
        liquid = apply(lambda k: min(gpus_kw, k), kw)
        basis = f"estimate: its GPUs' {gpus_basis} to liquid, the rest to air (no liquid_heat_pct documented)"
    else:
        liquid = Unknown((f"{at}.liquid_heat_pct", f"{at}.gpu.max_power_w"))
        basis = "not known (liquid_heat_pct not given)"
    return {"liquid_kw": liquid, "air_kw": apply(lambda k, q: rounded(k - q, 3), kw, liquid), "liquid_cooled": True,
            "split_basis": basis}


def _switch_rows(fabrics: list[dict]) -> list[dict[str, Any]]:
    """Every switch entry of every fabric: how many, and one switch's draw in kW."""
    rows = []
    for i, f in enumerate(fabrics):
        if "switches" not in f and f.get("managed_by", "owner") == "owner":
            # the switches are left out, not absent: their number and draw are unknown
            at = f"network.fabrics[{i}].switches"
            rows.append({"fabric": f["name"], "role": "", "model": None, "count": Unknown((at,)), "path": at,
                         "kw": Unknown((at,)), "label": f"{f['name']} switches"})
        for j, s in enumerate(f.get("switches", [])):
            at = f"network.fabrics[{i}].switches[{j}]"
            rows.append({"fabric": f["name"], "role": s["role"], "model": s.get("model"), "count": s["count"], "path": at,
                         "kw": s["max_power_w"] / 1000 if "max_power_w" in s else Unknown((f"{at}.max_power_w",)),
                         "label": f"{f['name']} {s['role']}" + (f" ({s['model']})" if s.get("model") else "")})
    return rows


def _placed_switches(rows: list[dict], at: str, placed: dict) -> tuple[int | None, str]:
    """The switch entry a rack's `switches` item names (index into rows), or None and why not."""
    fits = [k for k, r in enumerate(rows) if r["fabric"] == placed["fabric"] and r["role"] == placed["role"]
            and placed.get("model") in (None, r["model"])]
    if len(fits) == 1:
        return fits[0], ""
    if not fits:
        what = f"{placed['role']} switches" + (f" of model {placed['model']}" if placed.get("model") else "")
        return None, f"{at}.fabric (fabric {placed['fabric']} lists no {what})"
    return None, f"{at}.model (fabric {placed['fabric']} has several {placed['role']} switch models)"


def _worst(rows: list[dict], key: str) -> tuple[Any, dict | None]:
    """The least margin over `rows` and its row: a known negative one decides even while other
    racks' margins are unknown; otherwise any unknown margin leaves it Unknown."""
    known = [r for r in rows if not isinstance(r[key], Unknown)]
    unknown = [r[key] for r in rows if isinstance(r[key], Unknown)]
    worst = min(known, key=lambda r: r[key], default=None)
    if worst is not None and (worst[key] < 0 or not unknown):
        return worst[key], worst
    return (Unknown(unknowns(unknown)) if unknown else Unknown(("facility.racks",))), worst


def _total(values: list[Any]) -> tuple[Any, float]:
    """(the sum, or Unknown when any value is unknown; the sum of the known values)."""
    known = sum(v for v in values if not isinstance(v, Unknown))
    return apply(lambda *_: rounded(known, 3), *values), rounded(known, 3)


def _feeds(data: dict, at: str, circuits: dict) -> tuple[Any, str]:
    """Whether a rack's circuits are judged per feed (each half carries the rack alone), and why."""
    declared = circuits.get("ab_redundant")
    if declared is not None:
        return declared, (f"per feed ({at}.circuits.ab_redundant: true)" if declared
                          else f"all circuits together ({at}.circuits.ab_redundant: false)")
    if circuits["count"] < 2:
        return False, "as one circuit (a single circuit cannot be split over two feeds)"
    feeds = get(data, "facility.ab_feeds")
    if feeds is True:
        return True, "per feed (assumed from facility.ab_feeds: true; set circuits.ab_redundant: false if not)"
    if feeds is False:
        return False, "all circuits together (facility.ab_feeds: false)"
    return Unknown(("facility.ab_feeds", f"{at}.circuits.ab_redundant")), "not known (facility.ab_feeds not given)"


def power_facts(data: dict, pools: list[dict], policy: dict[str, float]) -> dict[str, Any]:
    """IT power at full load (maximum draw per node, per switch, and the racks' other gear),
    per rack and for the facility. Every limit is given with a lower-bound slack (the known
    load against the most generous reading of the limit), so a load that cannot fit fails
    even when parts of it are still unknown."""
    nodes = [node_power(i, p, policy) for i, p in enumerate(pools)]
    by_name = {n["pool"]: n for n in nodes}
    compute = [n["kw"] if isinstance(n["kw"], Unknown) else n["kw"] * p["count"]
               for n, p in zip(nodes, pools) if p.get("role", "compute") == "compute"]
    others = [n["kw"] if isinstance(n["kw"], Unknown) else n["kw"] * p["count"]
              for n, p in zip(nodes, pools) if p.get("role", "compute") != "compute"]
    fabrics = get(data, "network.fabrics")
    switch_rows = _switch_rows(fabrics if fabrics is not MISSING else [])
    switches = [r["kw"] if isinstance(r["kw"], Unknown) else r["count"] * r["kw"] for r in switch_rows]
    racks = get(data, "facility.racks")
    racks = racks if racks is not MISSING else []
    rack_other = [r.get("other_kw", 0) * r["count"] for r in racks]
    parts, parts_known = {}, {}
    for key, values in (("compute_kw", compute), ("other_nodes_kw", others), ("switches_kw", switches), ("rack_other_kw", rack_other)):
        parts[key], parts_known[key] = _total(values)
    it_kw, it_known = _total(list(parts.values()))
    labels = {"compute_kw": "compute nodes", "other_nodes_kw": "other nodes", "switches_kw": "switches", "rack_other_kw": "other rack gear"}
    parts_text = " + ".join(
        f"{labels[k]} {num(v)} kW" if not isinstance(v, Unknown) else f"{labels[k]} not known ({', '.join(v.needs[:3])}{' ...' if len(v.needs) > 3 else ''})"
        for k, v in parts.items() if isinstance(v, Unknown) or v)
    estimates = [f"{n['pool']} {num(n['kw'])} kW per node, estimated from {n['basis']}" for n in nodes if n["estimate"]]
    estimated_pools = {n["pool"] for n in nodes if n["estimate"]}
    racks_out = []
    switches_placed = [0] * len(switch_rows)
    held = _held_elsewhere(pools, racks)
    for r, rack in enumerate(racks):
        at = f"facility.racks[{r}]"
        contents = [
            scaled(by_name[c["pool"]]["kw"], c["nodes"]) if c["pool"] in by_name
            else Unknown((f"{at}.contents[{j}].pool (no such node pool)",))
            for j, c in enumerate(rack.get("contents", []))
        ]
        if "contents" not in rack and not held:
            contents = [Unknown((f"{at}.contents",))]
        rack_switches = []  # a rack that lists no switches holds none: a switch placed nowhere is named (PWR008)
        for j, placed in enumerate(rack.get("switches", [])):
            k, why = _placed_switches(switch_rows, f"{at}.switches[{j}]", placed)
            if k is None:
                rack_switches.append(Unknown((why,)))
                continue
            switches_placed[k] += placed["count"] * rack["count"]
            rack_switches.append(scaled(switch_rows[k]["kw"], placed["count"]))
        load, load_known = _total(contents + rack_switches + [rack.get("other_kw", 0)])
        circuits = rack.get("circuits")
        row: dict[str, Any] = {
            "name": rack["name"], "path": at, "count": rack["count"], "load_kw": load, "load_kw_known": load_known,
            "estimate": any(c["pool"] in estimated_pools for c in rack.get("contents", [])),
            "budget_kw": rack.get("power_budget_kw", Unknown((f"{at}.power_budget_kw",))),
            "cooling_capacity_kw": rack.get("cooling_capacity_kw", _sum_given(rack, at)),
            "cooling": rack.get("cooling", Unknown((f"{at}.cooling",))),
            "circuit_rating_needed_kw": rounded(load_known * 100 / policy["circuit_continuous_pct"]),
        }
        row.update(_rack_heat(rack, at, load, by_name, policy))
        if circuits is None:
            row.update(per_feed=Unknown((f"{at}.circuits",)), feed_basis="circuits not described",
                       circuit_limit_kw=Unknown((f"{at}.circuits",)), circuit_limit_max_kw=Unknown((f"{at}.circuits",)))
        else:
            pct = 100 if circuits.get("continuous_rated") else policy["circuit_continuous_pct"]
            kva = physics.circuit_kva(circuits["voltage_v"], circuits["breaker_a"], circuits.get("phases", 1))
            per_feed, row["feed_basis"] = _feeds(data, at, circuits)
            row["per_feed"] = per_feed
            row["circuit_limit_max_kw"] = rounded(physics.continuous_limit_kw(circuits["count"], kva, per_feed is True, pct))
            row["circuit_limit_kw"] = apply(
                lambda split: rounded(physics.continuous_limit_kw(circuits["count"], kva, split, pct)), per_feed)
            if per_feed is True:
                row["circuit_rating_needed_kw"] = rounded(load_known * 100 / pct)
        for name, limit, upper in (("budget", "budget_kw", "budget_kw"), ("circuit", "circuit_limit_kw", "circuit_limit_max_kw"),
                                   ("cooling", "cooling_capacity_kw", "cooling_capacity_kw")):
            row[f"{name}_margin_kw"] = maybe_rounded(difference(row[limit], load))
            if name == "circuit" and circuits is not None and isinstance(row["per_feed"], Unknown):
                # feeds not known: the stricter per-feed reading decides when the rack fits it anyway
                strict = maybe_rounded(difference(rounded(physics.continuous_limit_kw(circuits["count"], kva, True, pct)), load))
                if not isinstance(strict, Unknown) and strict >= 0:
                    row["circuit_margin_kw"] = strict
            row[f"{name}_slack_kw"] = maybe_rounded(difference(row[upper], load_known))
        row["estimate_note"] = " (estimate)" if row["estimate"] else ""
        row["load_complete"] = not isinstance(load, Unknown)
        row["per_feed_text"] = " on each feed" if row["per_feed"] is True else ""
        racks_out.append(row)
    racked = _racked(racks)
    unplaced_nodes = f"facility.racks[{next((r for r, rack in enumerate(racks) if 'contents' not in rack), 0)}].contents"
    unplaced_switches = [row["path"] for row in switch_rows if isinstance(row["count"], Unknown)]
    split = [row for row in racks_out if row["liquid_cooled"]]
    liquid_margin, liquid_worst = _worst(split, "liquid_margin_kw")
    air_margin, air_worst = _worst([row for row in racks_out if row["split"]], "air_margin_kw")
    capacity = fact(data, ["facility.it_capacity_kw"], lambda kw: kw)
    headroom = 1 - policy["power_headroom_pct"] / 100
    ups = fact(data, ["facility.ups.capacity_kva", "facility.ups.power_factor"], physics.ups_kw)
    return {
        "node_kw": {n["pool"]: n["kw"] for n in nodes},
        "nodes": nodes,
        "estimates": estimates,
        "estimate_note": f" (estimate: {'; '.join(estimates)})" if estimates else "",
        "parts": parts,
        "parts_known": parts_known,
        "parts_text": parts_text,
        "rack_groups": len(racks_out) if racks_out else Unknown(("facility.racks",)),
        "it_kw": it_kw,
        "it_kw_known": it_known,
        "it_complete": not isinstance(it_kw, Unknown),
        "facility_capacity_kw": capacity,
        "facility_limit_kw": apply(lambda kw: rounded(kw * headroom), capacity),
        "racks": racks_out,
        # a rack that leaves its contents out may hold what no other rack does: the unracked nodes are unknown then
        "unracked_nodes": {p["name"]: p["count"] - racked.get(p["name"], 0) for p in pools if p["count"] > racked.get(p["name"], 0)}
        if held or all("contents" in rack for rack in racks) else Unknown((unplaced_nodes,)),
        "unracked_switches": {row["label"]: row["count"] - placed for row, placed in zip(switch_rows, switches_placed)
                              if row["count"] > placed}
        if not unplaced_switches else Unknown(tuple(unplaced_switches)),
        "liquid_cooled_racks": len(split),
        "liquid_margin_kw": liquid_margin,
        "liquid_worst": liquid_worst or {},
        "split_racks": len([row for row in racks_out if row["split"]]),
        "air_margin_kw": air_margin,
        "air_worst": air_worst or {},
        "ups_kw": ups,
        "ups_limit_kw": apply(lambda kw: rounded(kw * headroom), ups),
        "capacity_needed_kw": rounded(it_known / headroom) if headroom > 0 else Unknown(
            ("policy.power_headroom_pct (below 100 leaves the facility some load)",)),
        "ups_kva_needed": fact(data, ["facility.ups.power_factor"], lambda pf: _kva_needed(it_known, headroom, pf)),
        "below_gpus": [n for n in nodes if n["given"] and n["gpus_kw"] is not None and n["kw"] < n["gpus_kw"]],
        "implausible": _implausible(pools, fabrics if fabrics is not MISSING else [], policy),
    }


def _racked(racks: list[dict]) -> dict[str, int]:
    """Nodes of each pool the racks' `contents` place."""
    racked: dict[str, int] = {}
    for rack in racks:
        for c in rack.get("contents", []):
            racked[c["pool"]] = racked.get(c["pool"], 0) + c["nodes"] * rack["count"]
    return racked


def _held_elsewhere(pools: list[dict], racks: list[dict]) -> bool:
    """Whether the racks that list their `contents` already place every node: then a rack
    that leaves the list out holds none (a network rack). Otherwise a left-out list is
    unknown, never empty."""
    racked = _racked(racks)
    return all(p["count"] <= racked.get(p["name"], 0) for p in pools)


def _sum_given(rack: dict, at: str) -> Any:
    """A rack's total cooling when it gives only its liquid and air parts."""
    if "liquid_cooling_kw" in rack and "air_cooling_kw" in rack:
        return rounded(rack["liquid_cooling_kw"] + rack["air_cooling_kw"], 3)
    return Unknown((f"{at}.cooling_capacity_kw",))


def _rack_heat(rack: dict, at: str, load: Any, by_name: dict, policy: dict[str, float]) -> dict[str, Any]:
    """One rack's heat in its two parts, each against its own cooling less the policy's margin.
    Switches and other gear are air-cooled; immersion takes all of the heat into liquid."""
    cooling = rack.get("cooling")
    nodes = [(by_name[c["pool"]], c["nodes"]) for c in rack.get("contents", []) if c["pool"] in by_name]
    liquid_cooled = cooling == "immersion" or any(n["liquid_cooled"] for n, _ in nodes)
    if cooling == "immersion":
        liquid = load
    else:
        liquid = _total([scaled(n["liquid_kw"], count) for n, count in nodes])[0]
    air = apply(lambda total, part: rounded(total - part, 3), load, liquid)
    keep = 1 - policy["cooling_margin_pct"] / 100
    if cooling in ("air", "rear-door"):
        liquid_capacity: Any = 0  # no loop reaches the cold plates
    elif cooling in ("direct-liquid", "immersion"):
        liquid_capacity = rack.get("liquid_cooling_kw", Unknown((f"{at}.liquid_cooling_kw",)))
    else:
        liquid_capacity = Unknown((f"{at}.cooling",))
    if "air_cooling_kw" in rack:
        air_capacity: Any = rack["air_cooling_kw"]
    elif cooling in ("air", "rear-door") and "cooling_capacity_kw" in rack:
        air_capacity = rack["cooling_capacity_kw"]  # air racks: all of their cooling is air
    else:
        air_capacity = Unknown((f"{at}.air_cooling_kw",))
    bases = sorted({f"{n['pool']}: {n['split_basis']}" for n, _ in nodes if n["liquid_cooled"]})
    return {
        "liquid_cooled": liquid_cooled,
        # the heat splits (and its air part is judged on its own) in a liquid-cooled rack or one that gives its air
        "split": liquid_cooled or cooling in ("direct-liquid", "immersion") or "air_cooling_kw" in rack,
        "liquid_kw": maybe_rounded(liquid), "air_kw": maybe_rounded(air),
        "split_basis": "; ".join(bases) or "all heat to air",
        "liquid_capacity_kw": liquid_capacity, "air_capacity_kw": air_capacity,
        "liquid_usable_kw": apply(lambda c: rounded(c * keep), liquid_capacity),
        "air_usable_kw": apply(lambda c: rounded(c * keep), air_capacity),
        "liquid_margin_kw": apply(lambda c, q: rounded(c * keep - q), liquid_capacity, liquid),
        "air_margin_kw": apply(lambda c, q: rounded(c * keep - q), air_capacity, air),
        "liquid_needed_kw": apply(lambda q: rounded(q / keep) if keep > 0 else q, liquid),
        "air_needed_kw": apply(lambda q: rounded(q / keep) if keep > 0 else q, air),
    }


def _kva_needed(kw: float, headroom: float, power_factor: float) -> Any:
    """UPS kVA that carries `kw` at the policy's loading; Unknown when the policy leaves no room."""
    if headroom <= 0:
        return Unknown(("policy.power_headroom_pct (below 100 leaves the UPS some load)",))
    kva = kw / headroom / power_factor
    return math.ceil(kva) if math.isfinite(kva) and kva < 1e15 else Unknown(
        (f"facility.ups.power_factor (a realistic one: {num(power_factor)} would need more than 10^15 kVA)",))


def _implausible(pools: list[dict], fabrics: list[dict], policy: dict[str, float]) -> list[dict[str, Any]]:
    """Power values too large for their unit: most likely watts written where kW is asked."""
    out = []
    for i, pool in enumerate(pools):
        kw = pool.get("max_power_kw")
        # a rack-scale system's node is a rack of servers: believable up to that many servers' worth
        servers = (pool.get("rack_scale") or {}).get("compute_trays", 1)
        limit = policy["node_power_plausible_kw"] * servers
        if kw is not None and kw > limit:
            what = f"one {pool['name']} node" if servers == 1 else f"one {pool['name']} rack of {servers} compute trays"
            out.append({"path": f"node_pools[{i}].max_power_kw", "value": kw, "unit": "kW", "limit": limit, "what": what,
                        "hint": f"did you write W as kW? ({num(kw)} W would be {num(kw / 1000)} kW)"})
        w = (pool.get("gpu") or {}).get("max_power_w")
        if w is not None and w > policy["gpu_power_plausible_w"]:
            out.append({"path": f"node_pools[{i}].gpu.max_power_w", "value": w, "unit": "W", "limit": policy["gpu_power_plausible_w"],
                        "what": f"one GPU of {pool['name']}",
                        "hint": "did you write the whole node's power, or kW as W?"})
    return out
