"""The budget table: the few numbers a reviewer checks first, needed against available."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linter.physics.values import Unknown
from linter.numbers import num
from linter.engine.review import Review
from linter.report.procurement import conversion


@dataclass
class BudgetRow:
    label: str
    needed: str
    available: str
    ok: bool | None  # None: not enough data
    info: bool = False  # a figure to read, not a check (money with nothing to compare it to)


def _known(*values: Any) -> bool:
    return all(v is not None and not isinstance(v, Unknown) for v in values)


def shown(value: Any) -> str:
    """A figure, or "? — needs PATH" naming what the manifest leaves out."""
    if isinstance(value, Unknown):
        return "? — needs " + ", ".join(value.needs[:3]) + (" ..." if len(value.needs) > 3 else "")
    return "?" if value is None else num(value)


def _decided(load: float, limit: Any, complete: bool) -> bool | None:
    """Fits (True), does not (False), or not decided (None): a lower bound over the limit already fails."""
    if not _known(limit):
        return None
    if load > limit:
        return False
    return True if complete else None


def rack_load(rack: dict[str, Any]) -> tuple[float, bool]:
    """A rack's load to show: the whole load when known, else the known part (a lower bound), and which."""
    complete = _known(rack["load_kw"])
    return (rack["load_kw"] if complete else rack["load_kw_known"]), complete


def rows(review: Review) -> list[BudgetRow]:
    f = review.facts
    if not f:
        return []
    out: list[BudgetRow] = []
    mem = f["memory"]
    reserve = f["policy"]["gpu_memory_reserve_pct"]
    if _known(mem["total_gb"], mem["usable_gb"]):
        out.append(BudgetRow(
            "GPU memory per GPU",
            f"{num(mem['total_gb'])} GB (model states {_states(mem)} + activations {num(mem['activations_gb'])})",
            f"{num(mem['usable_gb'])} GB usable of {num(mem['capacity_gb'])} GB ({num(reserve)}% reserve)",
            mem["total_gb"] <= mem["usable_gb"],
        ))
    elif _known(mem["model_states_gb"], mem["usable_gb"]):
        out.append(BudgetRow("GPU memory per GPU", f"{num(mem['model_states_gb'])} GB model states; activations unknown",
                             f"{num(mem['usable_gb'])} GB usable", None))
    power = f["power"]
    headroom = f["policy"]["power_headroom_pct"]
    limit = power["facility_limit_kw"]
    if _known(power["it_kw"]) and "provider-facility" in review.conditions:
        out.append(BudgetRow("Facility IT power at full load", f"{num(power['it_kw'])} kW",
                             "the provider's facility", None, info=True))
    elif power["it_kw_known"] or _known(power["it_kw"]):
        complete = _known(power["it_kw"])
        load = power["it_kw"] if complete else power["it_kw_known"]
        note = " (estimate)" if power["estimates"] else ""
        out.append(BudgetRow(
            "Facility IT power at full load",
            f"{'' if complete else 'at least '}{num(load)} kW{note}: {power['parts_text']}",
            f"{num(limit)} kW usable of {num(power['facility_capacity_kw'])} kW ({num(headroom)}% headroom)" if _known(limit) else "not given",
            _decided(load, limit, complete),
        ))
    for rack in power["racks"]:
        load, complete = rack_load(rack)
        if not load and not complete:  # nothing of its load known: what would decide it
            out.append(BudgetRow(f"Power per rack ({rack['name']}, x{rack['count']})", shown(rack["load_kw"]),
                                 "not judged", None))
            continue
        if not load:
            continue
        have, verdicts = [], []
        if _known(rack["budget_kw"]):
            have.append(f"budget {num(rack['budget_kw'])} kW")
            verdicts.append(_decided(load, rack["budget_kw"], complete))
        if _known(rack["circuit_limit_kw"]):
            basis = "per feed" if rack["per_feed"] is True else "all circuits"
            have.append(f"circuits {num(rack['circuit_limit_kw'])} kW continuous, {basis}")
            verdicts.append(_decided(load, rack["circuit_limit_kw"], complete))
        out.append(BudgetRow(
            f"Power per rack ({rack['name']}, x{rack['count']})",
            f"{'' if complete else 'at least '}{num(load)} kW{rack['estimate_note']}",
            "; ".join(have) or "not given",
            False if False in verdicts else (None if None in verdicts or not verdicts else True),
        ))
    # every fabric the port checks judge (NET002/NET003): the compute fabric and storage fabrics with NICs on them
    checked = f.get("fabrics", {}).get("leaf", {}).get("fabrics") if isinstance(f.get("fabrics"), dict) else None
    fabrics = checked if checked is not None else ([f["fabric"]] if f["fabric"].get("present") else [])
    for fabric in (fabrics if "provider-fabric" not in review.conditions else []):
        if not _known(fabric.get("ports_present"), fabric.get("ports_needed")):
            # not known: say what would decide it, never a count of zero
            label = "Leaf switch ports" if "leaf_down_needed" in fabric else "Switch ports"
            out.append(BudgetRow(f"{label} ({fabric['name']})", shown(fabric.get("ports_needed")),
                                 shown(fabric.get("ports_present")), None))
            continue
        if "leaf_down_needed" in fabric:
            out.append(BudgetRow(
                f"Leaf switch ports ({fabric['name']})",
                f"{num(fabric['ports_needed'])} ({num(fabric['leaf_down_needed'])} down + {num(fabric['uplinks_needed'])} up)",
                f"{num(fabric['ports_present'])}",
                fabric["ports_needed"] <= fabric["ports_present"],
            ))
            if _known(fabric.get("spine_ports_present"), fabric.get("spine_ports_needed")):
                out.append(BudgetRow(
                    f"Spine switch ports ({fabric['name']})", num(fabric["spine_ports_needed"]),
                    num(fabric["spine_ports_present"]), fabric["spine_ports_needed"] <= fabric["spine_ports_present"],
                ))
        else:
            out.append(BudgetRow(f"Switch ports ({fabric['name']})", num(fabric["ports_needed"]),
                                 num(fabric["ports_present"]), fabric["ports_needed"] <= fabric["ports_present"]))
    days = f["training"].get("days")
    return out + _time_row(review, days) + money_rows(review)


def money_rows(review: Review) -> list[BudgetRow]:
    """Capex, opex per month, payback against renting and the ready date of the chosen option."""
    p = review.facts.get("procurement")
    if not p or not _known(p["currency"]):
        return []
    cur = p["currency"]
    out: list[BudgetRow] = []
    purchases = sum(q["kind"] == "purchase" for q in (p["quotes"] if _known(p["quotes"]) else []))
    if _known(p["capex"]) and (purchases or p["mode"] != "rent"):
        converted = [conversion(c) for c in p["conversions"] if c["path"].startswith("procurement.")]
        out.append(BudgetRow("Capex (purchases)", f"{num(p['capex'])} {cur}",
                             f"{purchases} purchase quote{'s' if purchases != 1 else ''}"
                             + (f"; converted: {'; '.join(converted)}" if converted else ""), None, info=True))
    if _known(p["opex_per_month"]):
        rent = f"rent for the same capacity: {num(p['rent_per_month'])} {cur}" if _known(p["rent_per_month"]) \
            else "no rental quote for the same capacity"
        facility = [conversion(c) for c in p["conversions"] if c["path"].startswith("facility.")]
        out.append(BudgetRow(f"Opex per month ({'renting' if p['mode'] == 'rent' else 'owning'})",
                             f"{num(p['opex_per_month'])} {cur} ({opex_parts(p)})",
                             ("the provider's facility and staff are in the rent" if p["mode"] == "rent" else rent)
                             + (f"; converted: {'; '.join(facility)}" if facility else ""), None, info=True))
    if _known(p["total_cost"]):
        out.append(BudgetRow(f"Total cost over the {num(p['project_months'])}-month project", f"{num(p['total_cost'])} {cur}",
                             f"capex + {num(p['project_months'])} x opex per month", None, info=True))
    if p["mode"] == "buy" and p["pays_back"] is False:
        out.append(BudgetRow("Payback against renting", "never: owning costs more a month than the rent", "", False))
    elif p["mode"] == "buy" and _known(p["payback_months"]):
        months = p["project_months"]
        out.append(BudgetRow("Payback against renting", f"{num(p['payback_months'])} months",
                             f"{num(months)}-month project" if _known(months) else "project duration not given",
                             p["payback_months"] <= months if _known(months) else None))
    if _known(p["ready_date"]):
        d = p["latest_delivery"]
        start = p["start_date"]
        steps = f"last delivery {d['date']}" + (f" + {d['installation_days']} days installation" if d["installation_days"] else "") \
            + f" + {d['burn_in_days']} days burn-in"
        out.append(BudgetRow("Ready to train", f"{p['ready_date']} ({steps})",
                             f"start {start}" if _known(start) else "no start date given",
                             p["ready_date"] <= start if _known(start) else None))
    return out


def opex_parts(p: dict[str, Any]) -> str:
    """The month's running cost by part, with amounts: rent and support when renting; the
    electricity at the PUE, colocation, support and staff when owning (the parts given)."""
    parts = (("rent", "rent_per_month"), ("support", "support_per_month")) if p["mode"] == "rent" else (
        ("electricity at the PUE", "electricity_per_month"), ("colocation", "colocation_per_month"),
        ("support", "support_per_month"), ("staff", "staff_per_month"))
    named = set(p["opex_counted"].split(", "))
    return " + ".join(f"{label} {num(p[key])}" for label, key in parts if label in named) or "nothing counted"


def _states(mem: dict) -> str:
    """Model states and their bytes per trainable parameter; LoRA/QLoRA's frozen base weights apart."""
    states, per_param = mem.get("states"), f"{num(mem['bytes_per_param'])} bytes per trainable parameter"
    if _known(states) and isinstance(states, dict) and states.get("frozen"):
        trained = mem["model_states_gb"] - states["frozen"]
        return f"{num(mem['model_states_gb'])}: frozen base weights {num(states['frozen'])} + trained {num(trained)} at {per_param}"
    return f"{num(mem['model_states_gb'])} at {per_param}"


def _time_row(review: Review, days: Any) -> list[BudgetRow]:
    if not _known(days):
        return []
    training = review.facts["training"]
    target = training["target_days"]
    parts = training.get("breakdown", {})
    names = (("compute", "compute"), ("recompute", "recompute"), ("bubble", "pipeline bubble"),
             ("tensor_parallel", "tensor-parallel traffic"), ("context_parallel", "context-parallel traffic"),
             ("data_parallel", "gradient all-reduce"),
             ("moe_all_to_all", "MoE all-to-all"), ("restarts", "restarts"))
    shown = [f"{label} {num(parts[key])}" for key, label in names if _known(parts.get(key)) and parts[key] >= 0.05]
    return [BudgetRow(
        "Time to train (estimate)",
        f"{num(days)} days ({' + '.join(shown)}; {num(training['mfu'] * 100)}% MFU)" if shown else f"{num(days)} days",
        f"{num(target)} days planned" if _known(target) else "no target given",
        days <= target if _known(target) else None,
    )]
