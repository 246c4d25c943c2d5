"""Procurement: the decision order, money in one currency (capex, opex, rent, payback), what
each quote names, and when the cluster is ready.

Facts `decision` and `procurement` (BUY001, BUY003, BUY005, BUY006, BUY007).
"""

from __future__ import annotations

import datetime as dt

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable

from linter.physics import formulas as physics
from linter.physics.values import MISSING, Unknown, apply, fact, get, rounded, unknowns


def decision(data: dict, gpus_total: Any, gpu_model: Any) -> dict[str, Any]:
    """The seed article's decision order, as the manifest answers it: goal, parallelism, buy
    or rent, card [seed-hardware-layers]."""
    par = get(data, "plan.parallelism")
    par = {} if par is MISSING else par
    value = lambda path: (lambda v: Unknown((path,)) if v is MISSING else v)(get(data, path))  # noqa: E731
    return {
        "goal": value("plan.goal"),
        "parameters_billion": value("plan.model.parameters_billion"),
        "training_tokens_billion": value("plan.training_tokens_billion"),
        "target_duration_days": value("plan.target_duration_days"),
        "tensor": par.get("tensor", 1), "pipeline": par.get("pipeline", 1),
        "data": par.get("data", Unknown(("plan.parallelism.data",))), "zero_stage": par.get("zero_stage", 0),
        "gpus": gpus_total,
        "gpu_model": gpu_model if gpu_model is not MISSING else Unknown(("node_pools[].gpu.model",)),
        "mode": value("procurement.mode"),
        "project_duration_months": value("procurement.project_duration_months"),
        "operations_team": value("procurement.operations_team"),
    }


def _quotes(data: dict) -> list[tuple[str, dict]]:
    """(path, quote): the quotes every option shares, then the chosen option's own."""
    shared = get(data, "procurement.quotes")
    out = [(f"procurement.quotes[{i}]", q) for i, q in enumerate([] if shared is MISSING else shared)]
    options = get(data, "procurement.options")
    chosen = get(data, "procurement.chosen")
    for o, option in enumerate([] if options is MISSING else options):
        if option["name"] == chosen:
            out += [(f"procurement.options[{o}].quotes[{i}]", q) for i, q in enumerate(option.get("quotes", []))]
    return out


def _report_currency(data: dict, quotes: list[tuple[str, dict]]) -> Any:
    given = get(data, "procurement.currency")
    if given is not MISSING:
        return given
    used = sorted({q["currency"] for _, q in quotes if "currency" in q})
    if len(used) == 1:
        return used[0]
    facility = get(data, "facility.currency")
    if not used and facility is not MISSING:
        return facility
    return Unknown(("procurement.currency",) if used else ("procurement.quotes[].currency",))


def _target(data: dict, quote: dict) -> dict[str, Any] | None:
    """What a quote names and how much of it the manifest has: nodes of a pool, switches of a
    fabric, TB of a storage tier."""
    for key, where, unit in (("pool", "node_pools", "nodes"), ("fabric", "network.fabrics", "switches"),
                             ("storage_tier", "storage.tiers", "TB")):
        if key in quote:
            items = get(data, where)
            found = next((x for x in ([] if items is MISSING else items) if x["name"] == quote[key]), None)
            if found is None:
                return None
            have = (found["count"] if key == "pool" else sum(s["count"] for s in found.get("switches", []))
                    if key == "fabric" else found.get("capacity_tb"))
            words = {"pool": "node pool", "fabric": "fabric", "storage_tier": "storage tier"}[key]
            return {"names": f"{words} {quote[key]}", "unit": unit, "manifest_quantity": have}
    return None


def money_and_dates(data: dict, it_kw: Any, gpus_total: Any, gpu_model: Any, policy: dict[str, float],
                 today: str | None) -> dict[str, Any]:
    """Money and dates from the quotes of the chosen option, in one currency:

    capex (purchases), the owner's opex per month (electricity at the PUE [green-grid-pue],
    colocation per kW-month, support contracts and staff, where given), the rent per month for
    the same capacity (a rental quote whose GPUs and model match the manifest's), the payback
    period [seed-hardware-layers], what each quote names and whether its quantity matches,
    and the date the last part arrives and the cluster is ready (order date, lead time,
    installation and burn-in)."""
    quotes = _quotes(data)
    currency = _report_currency(data, quotes)
    rates = get(data, "procurement.exchange_rates")
    rates = {} if rates is MISSING else rates
    mode = get(data, "procurement.mode")
    out: dict[str, Any] = {"currency": currency, "mode": mode if mode is not MISSING else Unknown(("procurement.mode",))}

    def price(path: str, q: dict) -> Any:
        if "price" not in q:
            return Unknown((f"{path}.price",))
        if "currency" not in q:
            return Unknown((f"{path}.currency",))
        if isinstance(currency, Unknown) or q["currency"] == currency:
            return q["price"]
        rate = rates.get(q["currency"])
        return rounded(physics.converted(q["price"], rate), 2) if rate else Unknown(
            (f"procurement.exchange_rates.{q['currency']}",))

    listed = []
    for path, q in quotes:
        row = {"path": path, "item": q["item"], "kind": q.get("kind", "purchase"), "price": price(path, q)}
        target = _target(data, q)
        if target is not None:
            row.update(target, quantity=q.get("quantity", Unknown((f"{path}.quantity",))))
        listed.append(row)
    out["quotes"] = listed

    def total(kind: str, none: Any) -> Any:
        chosen = [row["price"] for row in listed if row["kind"] == kind]
        return apply(lambda *known: rounded(sum(known), 2), *chosen) if chosen else none

    mode_known = mode if mode is not MISSING else None
    out["capex"] = total("purchase", 0 if mode_known == "rent" else Unknown(("procurement.quotes[] (a purchase quote)",)))
    out["support_per_month"] = total("support", 0)
    staff = get(data, "procurement.staff_per_month")
    out["staff_per_month"] = 0 if staff is MISSING else staff

    def facility_money(value: float) -> Any:  # electricity and colocation prices are in facility.currency
        own = get(data, "facility.currency")
        if own is MISSING:
            return Unknown(("facility.currency",))
        if own == currency or isinstance(currency, Unknown):
            return value
        return physics.converted(value, rates[own]) if own in rates else Unknown((f"procurement.exchange_rates.{own}",))

    out["electricity_per_month"] = fact(
        data, ["facility.electricity_price_per_kwh", "facility.pue"],
        lambda price_kwh, pue: apply(lambda kw, p: rounded(physics.electricity_per_month(kw, pue, p), 0),
                                      it_kw, facility_money(price_kwh)),
    )
    colo = get(data, "facility.colocation_per_kw_month")
    out["colocation_per_month"] = 0 if colo is MISSING else apply(
        lambda kw, p: rounded(physics.colocation_per_month(kw, p), 0), it_kw, facility_money(colo))
    out["opex_counted"] = ", ".join(
        ["electricity at the PUE"]
        + (["colocation"] if colo is not MISSING else [])
        + (["support"] if any(row["kind"] == "support" for row in listed) else [])
        + (["staff"] if staff is not MISSING else []))
    out["owned_opex_per_month"] = apply(lambda *parts: rounded(physics.owned_opex_per_month(*parts), 0),
                                         out["electricity_per_month"], out["colocation_per_month"],
                                         out["support_per_month"], out["staff_per_month"])
    out["rental"] = _rental(quotes, listed, gpus_total, gpu_model)
    rent = out["rental"]
    out["rent_per_month"] = rent if isinstance(rent, Unknown) else (
        rent["price"] if rent["matches"] else Unknown((f"{rent['path']}.capacity (it rents {rent['gpus']} "
                                                       f"{rent['gpu_model']}; the manifest has {gpus_total} {gpu_model})",)))
    if mode_known == "rent":
        out["opex_per_month"] = apply(lambda *parts: rounded(sum(parts), 0), out["rent_per_month"],
                                       out["support_per_month"], out["staff_per_month"])
    else:
        out["opex_per_month"] = out["owned_opex_per_month"]
    payback = apply(lambda buy, rent_pm, running: physics.payback_months(buy, rent_pm, running),
                     out["capex"], out["rent_per_month"], out["owned_opex_per_month"])
    if isinstance(payback, Unknown):
        out["pays_back"] = out["payback_months"] = payback
    else:
        out["pays_back"] = payback is not None
        out["payback_months"] = rounded(payback, 1) if payback is not None else Unknown(
            ("procurement.quotes[] (buying never pays back against this rental quote)",))
    quantities = unknowns(row["quantity"] for row in listed if "names" in row)
    out["quote_binding"] = Unknown(quantities) if quantities else {
        "unbound": [{"path": row["path"], "item": row["item"]} for row in listed
                    if row["kind"] == "purchase" and "names" not in row],
        "mismatched": [row for row in listed if "names" in row and row["manifest_quantity"] is not None
                       and row["quantity"] != row["manifest_quantity"]],
    }
    out["project_months"] = fact(data, ["procurement.project_duration_months"], lambda m: m)
    out["start_date"] = fact(data, ["plan.start_date"], lambda d: d)
    out.update(_delivery(data, quotes, policy, today))
    out["oldest_quote"] = _pick(
        quotes, lambda path, q: str(q["quote_date"]) if "quote_date" in q else Unknown((f"{path}.quote_date",)), min)
    return out


def _rental(quotes: list[tuple[str, dict]], listed: list[dict], gpus_total: Any, gpu_model: Any) -> Any:
    """The rental quotes together: monthly price, the GPUs they rent, their term, and whether
    that is the manifest's own capacity (same GPU count and model)."""
    rentals = [(path, q, row) for (path, q), row in zip(quotes, listed) if row["kind"] == "rental"]
    if not rentals:
        return Unknown(("procurement.quotes[] (a rental quote for the same capacity)",))
    missing = tuple(f"{path}.capacity" for path, q, _ in rentals if "capacity" not in q)
    if missing:
        return Unknown(missing)
    price = apply(lambda *known: rounded(sum(known), 2), *(row["price"] for _, _, row in rentals))
    models = sorted({q["capacity"]["gpu_model"] for _, q, _ in rentals})
    gpus = sum(q["capacity"]["gpus"] for _, q, _ in rentals)
    terms = [q.get("term_months") for _, q, _ in rentals]
    out = {"path": rentals[0][0], "item": rentals[0][1]["item"], "price": price, "gpus": gpus,
           "gpu_model": " and ".join(models),
           "term_months": min(terms) if all(terms) else Unknown(tuple(f"{p}.term_months" for p, q, _ in rentals
                                                                      if "term_months" not in q))}
    out["matches"] = apply(lambda n, model: n == gpus and models == [model], gpus_total, gpu_model)
    return out


def _delivery(data: dict, quotes: list[tuple[str, dict]], policy: dict[str, float], today: str | None) -> dict[str, Any]:
    """When the last part arrives and when the cluster is ready to train: from the planned order
    date (today when not given) plus each quote's lead time, or its committed delivery date;
    then installation (purchases) and burn-in (purchases and rentals)."""
    given = get(data, "procurement.order_date")
    order = given if given is not MISSING else today
    out: dict[str, Any] = {
        "order_date": order if order is not None else Unknown(("procurement.order_date",)),
        "order_date_from": "procurement.order_date" if given is not MISSING else "today (no procurement.order_date)",
        "installation_days": policy["installation_days"],
        "burn_in_days": policy["burn_in_days"],
    }

    def ready(path: str, q: dict) -> Any:
        kind = q.get("kind", "purchase")
        if kind == "support":
            return None
        if "delivery_date" not in q and "lead_time_weeks" not in q:
            return Unknown((f"{path}.lead_time_weeks",))
        if order is None:
            return Unknown(("procurement.order_date",))
        install = policy["installation_days"] if kind == "purchase" else 0
        arrives, done = physics.ready_date(
            dt.date.fromisoformat(str(order)), q.get("lead_time_weeks"),
            dt.date.fromisoformat(str(q["delivery_date"])) if "delivery_date" in q else None,
            int(install), int(policy["burn_in_days"]))
        return {"date": arrives.isoformat(), "ready": done.isoformat(), "installation_days": install,
                "burn_in_days": policy["burn_in_days"], "lead_time_weeks": q.get("lead_time_weeks"),
                "committed": "delivery_date" in q}

    dated = [(ready(path, q), path, q) for path, q in quotes]
    dated = [d for d in dated if d[0] is not None]
    missing = unknowns(d for d, _, _ in dated)
    if not dated:
        out["latest_delivery"] = out["ready_date"] = Unknown(("procurement.quotes",))
    elif missing:
        out["latest_delivery"] = out["ready_date"] = Unknown(missing)
    else:
        when, path, q = max(dated, key=lambda d: d[0]["ready"])
        out["latest_delivery"] = {**when, "item": q["item"], "path": path}
        out["ready_date"] = when["ready"]
    return out


def _pick(quotes: list[tuple[str, dict]], date_of: Callable[[str, dict], Any], choose: Callable) -> Any:
    """The quote whose date `choose` (min or max) picks: {date, item, path}."""
    if not quotes:
        return Unknown(("procurement.quotes",))
    dates = [(date_of(path, q), i) for i, (path, q) in enumerate(quotes)]
    missing = unknowns(d for d, _ in dates)
    if missing:
        return Unknown(missing)
    date, i = choose(dates)
    return {"date": date, "item": quotes[i][1]["item"], "path": quotes[i][0]}
