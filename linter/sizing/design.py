"""From one searched row to a whole manifest: nodes, NICs and switches, storage, racks and
power, quotes. Each derived number is read off the facts the review computes (derive on the
manifest being built) and the policy the pack loaded, so `hwlint check` agrees with it.

The manifest is kept as plain data plus `notes`: dotted path -> comment, which the writer
prints next to the value ("derived: ...", "chosen: ...").
"""

from __future__ import annotations

import math
from typing import Any

from linter.manifest.catalog import load_catalog, resolve
from linter.manifest.loader import Document
from linter.physics import formulas as physics
from linter.physics.facts import derive
from linter.physics.plan import plan_settings
from linter.physics.training import chosen_checkpoint_interval
from linter.physics.values import Unknown
from linter.sizing.goal import Goal
from linter.sizing.search import Row, chosen_nics, has_compute_nics, node_shape, plan_data

PROBE = 1000.0  # a round capacity used to read a policy margin off the facts (limit = capacity less headroom)


class Infeasible(Exception):
    """The row cannot be built within the goal's constraints; the message says which one."""


def _known(value: Any) -> bool:
    return value is not None and not isinstance(value, Unknown)


def _up(x: float, digits: int = 1) -> float:
    scale = 10 ** digits
    return math.ceil(x * scale - 1e-9) / scale


def _plain(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest as the review reads it (catalog resolved, model defaults applied)."""
    from linter.engine.review import plain_manifest
    from linter.manifest.dump import shape

    doc = Document(path="<size>", data=manifest)
    resolved = resolve(doc)
    data = plain_manifest(resolved.data, doc, shape())
    if isinstance(data, list):  # a schema problem in what the sizer built: a bug, say it plainly
        raise Infeasible("the built manifest does not validate: " + "; ".join(r.message for r in data))
    return data


def facts_of(manifest: dict[str, Any], policy: dict[str, float]) -> dict[str, Any]:
    """The facts the review derives for this manifest."""
    return derive(_plain(manifest), policy)


def build(goal: Goal, row: Row, policy: dict[str, float], today: str) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """(manifest, notes, facts) for `row`, or Infeasible."""
    catalog = load_catalog()
    notes: dict[str, str] = {}
    draft = goal.draft
    lay = row.layout
    manifest: dict[str, Any] = {"manifest_version": 1}
    manifest["name"] = draft.get("name") or f"{goal.params_b:g}B {goal.goal} on {row.gpus} {row.gpu}"
    if draft.get("owner"):
        manifest["owner"] = draft["owner"]
    manifest["date"] = str(draft.get("date") or today)

    plan = plan_data(goal)
    plan["micro_batch_size"] = lay.mb
    plan["parallelism"] = {**(plan.get("parallelism") or {}), **lay.parallelism()}  # the draft's offload kept
    notes["plan.micro_batch_size"] = "derived: layout search"
    if goal.global_batch:
        steps = physics.micro_batches(goal.global_batch, lay.mb, lay.d)
        if steps == int(steps):  # the search proposes only such layouts (the plan rules, GPU011)
            plan["gradient_accumulation_steps"] = int(steps)
            notes["plan.gradient_accumulation_steps"] = (
                f"derived: global batch {goal.global_batch:,} = micro-batch {lay.mb} x data {lay.d} x {int(steps)}")
    notes["plan.parallelism.tensor"] = "derived: layout search, tensor parallelism inside one NVLink domain"
    notes["plan.parallelism.pipeline"] = "derived: layout search"
    notes["plan.parallelism.data"] = f"derived: {lay.t} x {lay.p} x {lay.c} x {lay.d} = {row.gpus} GPUs" if lay.c > 1 \
        else f"derived: {lay.t} x {lay.p} x {lay.d} = {row.gpus} GPUs"
    notes["plan.parallelism.zero_stage"] = "derived: layout search"
    notes["plan.parallelism.sequence_parallel"] = "derived: with tensor parallelism"
    notes["plan.parallelism.activation_recompute"] = (
        f"derived: {row.memory_gb:g} of {row.usable_gb:g} GB usable per GPU")
    for name in ("precision", "optimizer", "goal"):
        if any(c.startswith(name + " ") for c in goal.chosen):
            notes[f"plan.{name}"] = "chosen: the goal did not say"
    manifest["plan"] = plan

    procurement: dict[str, Any] = {}
    if goal.mode:
        procurement["mode"] = goal.mode
    for key in ("project_duration_months", "operations_team"):
        if (draft.get("procurement") or {}).get(key) is not None:
            procurement[key] = draft["procurement"][key]
    quotes = _quotes(goal, row)
    if quotes:
        procurement["quotes"] = quotes
        notes["procurement.quotes"] = "derived: price per node from the price file x nodes"
    if procurement:
        manifest["procurement"] = procurement

    pool: dict[str, Any] = {"name": "gpu", "role": "compute", "count": row.nodes}
    notes["node_pools[0].count"] = (f"derived: fewest whole nodes for the deadline ({row.seconds / 86400:.3g} of {goal.days:g} days) "
                                   "whose layout the plan rules accept")
    system = catalog.systems.get(row.system) if row.system else None
    if system:
        pool["system"] = system["name"]
        if system.get("local_nvme") and not system["local_nvme"].get("raid"):
            pool["local_nvme"] = {"raid": "raid0"}
            notes["node_pools[0].local_nvme"] = "chosen: the data drives as one striped cache volume; confirm"
    else:
        pool["gpu"] = {"model": row.gpu, "count": row.per_node}
        notes["node_pools[0].gpu"] = "chosen: no catalog server for this GPU; give the server's power, RAM, disks"
    if row.nodes > 1 and not has_compute_nics(node_shape(row.gpu)[1]):
        pool["nics"] = [{**nic, "fabric": "compute"} for nic in chosen_nics(row.per_node, policy)]
        nic = pool["nics"][0]
        notes["node_pools[0].nics"] = (f"chosen: {nic['count'] // row.per_node} x {nic['rate_gbps']:g} Gb/s per GPU "
                                       f"(policy pretrain_gbps_per_gpu {policy['pretrain_gbps_per_gpu']:g})")
    manifest["node_pools"] = [pool]

    probe = facts_of(manifest, policy)
    if plan["parallelism"].get("offload") == "nvme":
        probe = _local_nvme(row, manifest, notes, probe, policy, system)
    multi = row.nodes > 1
    if multi:
        _network(goal, row, manifest, notes, probe, policy, system)
    _facility(goal, row, manifest, notes, policy, system)
    _storage(goal, row, manifest, notes, policy, multi)
    for key in ("operations", "waivers"):
        if draft.get(key):
            manifest[key] = draft[key]
    if goal.policy:
        manifest["policy"] = dict(goal.policy)
    facts = facts_of(manifest, policy)
    _money(facts)
    return manifest, notes, facts


def _quotes(goal: Goal, row: Row) -> list[dict[str, Any]]:
    price = goal.prices.get(row.system or "") or goal.prices.get(row.gpu)
    if price is None:
        return []
    out = []
    for kind, per_node in (("purchase", price.purchase), ("rental", price.rental_per_month)):
        if per_node is None or (goal.mode == "buy" and kind == "rental" and price.purchase is None):
            continue
        quote: dict[str, Any] = {"item": f"{row.nodes}x {price.item}", "kind": kind,
                                 "price": round(per_node * row.nodes, 2), "currency": price.currency,
                                 "pool": "gpu", "quantity": row.nodes}  # what the quote prices (BUY006)
        if kind == "rental":  # the capacity the rent buys, so buying is compared like with like (BUY007)
            quote["capacity"] = {"gpus": row.gpus, "gpu_model": row.gpu}
        if price.vendor:
            quote["vendor"] = price.vendor
        if price.quote_date:
            quote["quote_date"] = price.quote_date
        if price.lead_time_weeks is not None:
            quote["lead_time_weeks"] = price.lead_time_weeks
        out.append(quote)
    return out


def _network(goal: Goal, row: Row, manifest: dict, notes: dict, probe: dict, policy: dict[str, float],
             system: dict | None) -> None:
    """Compute NICs (the system's, or one 400 Gb/s port per GPU) and a non-blocking InfiniBand
    fabric of the fewest catalog switches that carry them [al-fares-2008]."""
    catalog = load_catalog()
    nics = probe["nics"]
    if not (_known(nics.get("per_node")) and nics["per_node"] and _known(nics.get("min_rate_gbps"))):
        raise Infeasible("no compute NICs known for this server")
    per_node, rate = nics["per_node"], nics["min_rate_gbps"]
    switches = sorted((s for s in catalog.switches.values() if s.get("kind") == "infiniband" and s["port_rate_gbps"] >= rate),
                      key=lambda s: (s["port_rate_gbps"], -s["ports"], s["name"]))
    if not switches:
        raise Infeasible(f"no catalog InfiniBand switch runs {rate:g} Gb/s ports")
    switch = switches[0]
    endpoints = row.nodes * per_node
    counts = physics.nonblocking_fabric_switches(endpoints, switch["ports"])
    if counts["single"]:
        topology = "single-switch"
    elif counts["core"]:
        topology = "fat-tree"
    else:
        topology = "rail-optimized" if per_node >= row.per_node else "leaf-spine"
    fabric = {"name": "compute", "purpose": "compute", "kind": "infiniband", "topology": topology, "oversubscription": 1,
              "switches": [{"model": switch["name"], "role": role, "count": n} for role, n in counts.items() if n]}
    manifest["network"] = {"fabrics": [fabric]}
    notes["network.fabrics[0].topology"] = f"derived: {endpoints:,} NIC ports, non-blocking (policy oversubscription_max)"
    for j, s in enumerate(fabric["switches"]):
        notes[f"network.fabrics[0].switches[{j}]"] = f"derived: {s['count'] * switch['ports']:,} ports"
    row.design["nics_per_gpu"] = per_node / row.per_node
    row.design["nic_gbps"] = rate
    row.design["switches"] = {k: v for k, v in counts.items() if v}
    row.design["switch_model"] = switch["name"]


def _facility(goal: Goal, row: Row, manifest: dict, notes: dict, policy: dict[str, float], system: dict | None) -> None:
    """IT capacity and racks from the facts' own headroom: the rack budget less headroom, the
    node's power, the circuits' rating; cooling the system supports; the fabric's switches in
    racks of their own."""
    budget = goal.rack_kw
    facility: dict[str, Any] = dict((goal.draft.get("facility") or {}))
    facility.pop("racks", None)
    probe_manifest = {**manifest, "facility": {"it_capacity_kw": PROBE,
                                               "racks": [{"name": "probe", "count": 1, "power_budget_kw": budget or PROBE,
                                                          "contents": [{"pool": "gpu", "nodes": 1}]}]}}
    f = facts_of(probe_manifest, policy)
    power = f["power"]
    node_kw = power["node_kw"]["gpu"]
    it_kw = power["it_kw"]
    complete = _known(it_kw)
    if not complete and _known(power.get("it_kw_known")) and power["it_kw_known"]:
        it_kw = power["it_kw_known"]  # the known part (e.g. switches without a power figure): a lower bound
    row.design["node_kw"] = node_kw if _known(node_kw) else None
    if not _known(it_kw):
        row.design["it_kw"] = None
        if goal.facility_kw:
            facility["it_capacity_kw"] = goal.facility_kw
        if facility:
            manifest["facility"] = facility
        return
    row.design["it_kw"] = it_kw
    row.design["it_complete"] = complete
    at_least = "" if complete else "at least "
    keep = power["facility_limit_kw"] / PROBE  # the share of a capacity the policy lets the load use
    if goal.facility_kw:
        facility["it_capacity_kw"] = goal.facility_kw
        if it_kw > goal.facility_kw * keep:
            raise Infeasible(f"power: {at_least}{it_kw:,.1f} kW at full load, but {goal.facility_kw:g} kW less "
                             f"{policy['power_headroom_pct']:g}% headroom is {goal.facility_kw * keep:,.1f} kW")
    else:
        needed = power.get("capacity_needed_kw")
        facility["it_capacity_kw"] = _up(needed if _known(needed) else it_kw / keep, 0)
        notes["facility.it_capacity_kw"] = (f"derived: {at_least}{it_kw:,.1f} kW at full load plus "
                                            f"{policy['power_headroom_pct']:g}% headroom; the least that passes PWR001")
    if budget and _known(node_kw):
        limit = power["racks"][0]["budget_kw"]  # the maximum draw is compared with the budget itself (PWR002)
        per_rack = int(limit // node_kw)
        if per_rack < 1:
            raise Infeasible(f"rack power: one node draws {node_kw:g} kW, more than a {budget:g} kW rack allows")
        full, rest = divmod(row.nodes, per_rack)
        groups = [("gpu-rack", full, per_rack)] + ([("gpu-rack-last", 1, rest)] if rest else [])
        racks = []
        cooled_by = (system or {}).get("cooled_by")
        for name, count, nodes in groups:
            if not count:
                continue
            load = round(nodes * node_kw, 2)
            racks.append({"name": name, "count": count, "contents": [{"pool": "gpu", "nodes": nodes}],
                          "power_budget_kw": budget})
            _cool(racks, f"{nodes} x {node_kw:g} kW = {load:g} kW, within {limit:g} kW", load, cooled_by, notes, policy)
        gpu_racks = sum(r["count"] for r in racks)
        _switch_racks(manifest, racks, budget, notes, policy)
        facility["racks"] = racks
        manifest["facility"] = facility
        _size_split_cooling(manifest, notes, policy)
        row.design["racks"] = gpu_racks
        row.design["network_racks"] = sum(r["count"] for r in racks) - gpu_racks
        row.design["per_rack"] = per_rack
    manifest["facility"] = facility


def _cool(racks: list[dict], contents: str, load: float, cooled_by: str | None, notes: dict,
          policy: dict[str, float]) -> None:
    """The last rack group's cooling: a liquid-cooled system needs direct liquid cooling (its
    parts are sized from the split facts afterwards, PWR011/PWR012); an air-cooled one gets air
    up to the policy's air-cooling limit and rear-door heat exchangers above it (PWR005)."""
    rack, i = racks[-1], len(racks) - 1
    limit = policy["air_cooling_limit_kw"]
    if cooled_by == "liquid":
        rack["cooling"] = "direct-liquid"
        why = "the system is liquid-cooled (cooled_by: liquid): its cold plates need a liquid loop"
    else:
        rack["cooling"] = "air" if load <= limit else "rear-door"
        why = ("air-cooled" if cooled_by == "air" else "not known to be liquid-cooled (cooled_by not given)") + (
            ", within" if load <= limit else ", above") + f" the {limit:g} kW air-cooling limit"
        if load > 0:  # switches with no power figure: their cooling stays to confirm (PWR004)
            rack["cooling_capacity_kw"] = _up(load / (1 - policy["power_headroom_pct"] / 100), 1)
            notes[f"facility.racks[{i}].cooling_capacity_kw"] = (
                f"derived: the rack's full load with the policy's {policy['power_headroom_pct']:g}% headroom (power_headroom_pct)")
    notes[f"facility.racks[{i}].contents" if "contents" in rack else f"facility.racks[{i}].switches"] = f"derived: {contents}"
    notes[f"facility.racks[{i}].cooling"] = f"derived: {why}"


def _switch_racks(manifest: dict, racks: list[dict], budget: float, notes: dict, policy: dict[str, float]) -> None:
    """Each fabric switch entry in network racks of its own, as many to a rack as its budget
    allows (PWR002), so every switch is placed (PWR008) and its power counts in a rack."""
    catalog = load_catalog()
    for fabric in (manifest.get("network") or {}).get("fabrics", []):
        for s in fabric.get("switches", []):
            watts = s.get("max_power_w") or (catalog.switches.get(s.get("model", "")) or {}).get("max_power_w")
            per_rack = max(1, int(budget * 1000 // watts)) if watts else s["count"]
            full, rest = divmod(s["count"], per_rack)
            last = f"{s['role']}-rack-last" if full else f"{s['role']}-rack"
            for name, count, n in ((f"{s['role']}-rack", full, per_rack), (last, 1 if rest else 0, rest)):
                if not count:
                    continue
                racks.append({"name": name, "count": count, "power_budget_kw": budget,
                              "switches": [{"fabric": fabric["name"], "role": s["role"], "count": n}]})
                load = round(n * watts / 1000, 2) if watts else 0.0
                text = (f"{n} x {watts / 1000:g} kW = {load:g} kW, within {budget:g} kW" if watts
                        else f"all {n} {s['role']} switches (no power figure: give max_power_w)")
                _cool(racks, text, load, "air", notes, policy)


def _size_split_cooling(manifest: dict, notes: dict, policy: dict[str, float]) -> None:
    """Liquid and air cooling of each direct-liquid rack: the least that passes PWR011 and
    PWR012, read off the split facts of the racks as built."""
    racks = manifest["facility"]["racks"]
    if not any(r.get("cooling") == "direct-liquid" for r in racks):
        return
    rows = facts_of(manifest, policy)["power"]["racks"]
    for i, (rack, row) in enumerate(zip(racks, rows)):
        if rack.get("cooling") != "direct-liquid":
            continue
        for part in ("liquid", "air"):
            needed = row[f"{part}_needed_kw"]
            if _known(needed):
                rack[f"{part}_cooling_kw"] = _up(needed, 1)
                notes[f"facility.racks[{i}].{part}_cooling_kw"] = (
                    f"derived: {row[f'{part}_kw']:g} kW to {part} ({row['split_basis']}) plus the "
                    f"policy's {policy['cooling_margin_pct']:g}% margin; the least that passes "
                    + ("PWR011" if part == "liquid" else "PWR012"))


def _local_nvme(row: Row, manifest: dict, notes: dict, probe: dict, policy: dict[str, float], system: dict | None) -> dict:
    """Local NVMe for a layout that offloads to it (MEM005): room for the offloaded states and
    the checkpoint staging MEM004 asks, both read off the facts, plus the policy's
    storage_growth_pct; the server's own drives when they hold that, else as many drives of
    the size that does. Returns the facts of the manifest as it now stands."""
    disk = probe["local_disk"]
    need = disk["need_tb"]
    if not _known(need):
        return probe
    grow = 1 + policy["storage_growth_pct"] / 100
    target = need * grow
    pool = manifest["node_pools"][0]
    parts = (f"{disk['offload_tb']:g} TB of offloaded states ({row.per_node} x {probe['memory']['offloaded_gb_per_gpu']:g} GB, "
             f"ZeRO-Infinity) + {disk['staging_tb']:g} TB of checkpoint staging, plus the policy's "
             f"{policy['storage_growth_pct']:g}% (storage_growth_pct)")
    usable = disk["usable_tb"]
    if _known(usable) and usable >= target:
        notes["node_pools[0].local_nvme"] = f"derived: the server's {usable:g} TB usable hold {parts}"
    else:
        drives = ((system or {}).get("local_nvme") or {}).get("drives") or 1
        pool["local_nvme"] = {"drives": drives, "drive_capacity_tb": _up(target / drives, 2), "kind": "nvme", "raid": "raid0"}
        notes["node_pools[0].local_nvme"] = (f"derived: {drives} drive{'s' if drives != 1 else ''} (striped) for {parts}; "
                                            "order the next drive size up")
        probe = facts_of(manifest, policy)
    row.design["local_nvme"] = {"need_tb": need, "offload_tb": disk["offload_tb"], "staging_tb": disk["staging_tb"],
                                "usable_tb": probe["local_disk"]["usable_tb"]}
    return probe


def _storage(goal: Goal, row: Row, manifest: dict, notes: dict, policy: dict[str, float], multi: bool) -> None:
    """The tier that holds the data and the checkpoints, sized by the storage facts: capacity
    for the dataset and the kept checkpoints, read rate with the policy's margin, write rate
    for the policy's checkpoint minutes."""
    kind = "parallel-fs" if multi else "local-nvme"
    probe_tier = {"name": "scratch", "kind": kind, "capacity_tb": PROBE, "read_gb_s": PROBE, "write_gb_s": 1.0}
    interval = goal.checkpoint_minutes
    if interval is None:  # the search's own choice for this layout, from the same facts
        data = _plain(manifest)
        f = derive(data, policy)
        chosen = chosen_checkpoint_interval(f, policy, plan_settings(data), f["checkpoint_tb"])
        if not isinstance(chosen, dict):
            raise Infeasible(f"no checkpoint interval can be chosen: {chosen}")
        interval = chosen["minutes"]
        notes["storage.checkpoint.interval_minutes"] = "chosen: " + _interval_said(chosen, row.gpus)
        row.design["interval_minutes"] = interval
    checkpoint = {"interval_minutes": interval, "retained": goal.keep_checkpoints, "tier": "scratch"}
    manifest["storage"] = {"tiers": [probe_tier], "checkpoint": dict(checkpoint)}
    f = facts_of(manifest, policy)
    st = f["storage"]
    ckpt_tb = f["checkpoint_tb"]
    minutes_at_one = st["checkpoint_write_minutes"]  # at 1 GB/s
    write = _up(minutes_at_one / policy["checkpoint_write_minutes"], 1)
    tier: dict[str, Any] = {"name": "scratch", "kind": kind}
    need = st["capacity"][0]["need_tb"] if isinstance(st["capacity"], list) else Unknown(("plan.dataset.size_tb",))
    local = f["local_disk"]["usable_tb"]
    if not multi and _known(local) and (not _known(need) or need <= local):
        tier["capacity_tb"] = local
        notes["storage.tiers[0]"] = "derived: the node's own data drives; read and write are the least that pass STO001/STO002"
    else:
        if not multi:
            tier["kind"] = "nfs"
        grow = 1 + policy["storage_growth_pct"] / 100  # room to grow: the tier is not full on day one
        tier["capacity_tb"] = _up((need if _known(need) else st["checkpoints_tb"]) * grow, 0)
        notes["storage.tiers[0]"] = (f"derived: what STO001-STO003 need plus the policy's {policy['storage_growth_pct']:g}% "
                                     "growth (storage_growth_pct)"
                                     + ("" if _known(need) else " (checkpoints only: the dataset size is not given)"))
    if _known(st["read_needed_gb_s"]):
        tier["read_gb_s"] = _up(st["read_needed_gb_s"] * policy["data_read_margin"], 1)
    tier["write_gb_s"] = write
    tiers = [tier]
    if goal.dataset_tb and goal.dataset_tb > policy["cold_tier_dataset_tb"]:
        tiers.append({"name": "archive", "kind": "object", "capacity_tb": _up(goal.dataset_tb, 0)})
        notes["storage.tiers[1]"] = f"derived: dataset above {policy['cold_tier_dataset_tb']:g} TB (STO005)"
    manifest["storage"] = {"tiers": tiers, "checkpoint": checkpoint}
    draft_storage = goal.draft.get("storage") or {}
    for key in ("backup",):
        if key in draft_storage:
            manifest["storage"][key] = draft_storage[key]
    for key in ("restore_rehearsed",):
        if key in (draft_storage.get("checkpoint") or {}):
            manifest["storage"]["checkpoint"][key] = draft_storage["checkpoint"][key]
    row.design["storage"] = tier
    row.design["checkpoint_tb"] = ckpt_tb
    row.design["checkpoint_minutes"] = _up(minutes_at_one / write, 1) if write else None


def _interval_said(chosen: dict[str, Any], gpus: int) -> str:
    """How the checkpoint interval was chosen, in its own numbers."""
    pause = (f"a {chosen['pause_s']:g} s pause while each GPU copies its {chosen['share_gb']:g} GB share to host memory "
             "over PCIe" if chosen["over_pcie"] else f"the {chosen['write_minutes']:g}-minute write as the pause (no PCIe figure)")
    if chosen["mtbf_minutes"] is None:
        return (f"every {chosen['minutes']:g} minutes, the checkpoint_write_minutes the tier is built for "
                "(no interruptions in the policy: nothing to optimise)")
    young = (f"Young's optimum sqrt(2 x pause x MTBF) (Young 1974) for {pause} and a {chosen['mtbf_minutes']:,.0f}-minute "
             f"MTBF at {gpus:,} GPUs (interruptions_per_1000_gpu_days)")
    if chosen["young"]:
        return f"every {chosen['minutes']:g} minutes: {young}"
    return (f"every {chosen['minutes']:g} minutes, the checkpoint_write_minutes the tier is built to write one in: "
            f"{young} is {chosen['young_minutes']:g}, shorter, and the next checkpoint waits for the last")


def _money(facts: dict[str, Any]) -> None:
    proc = facts["procurement"]
    goal_row = {"capex": proc["capex"], "rent": proc["rent_per_month"], "currency": proc["currency"]}
    facts["sizing_money"] = {k: (v if _known(v) else None) for k, v in goal_row.items()}
