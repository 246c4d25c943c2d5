"""Procurement: the decision order, money in one currency (capex, opex by part, rent, payback,
total over the project), what each quote names, when the cluster is ready, and which option
to take.

Facts `decision` and `procurement` (BUY001, BUY003, BUY005, BUY006, BUY007, BUY009), and
`options` (BUY009): the recommendation among the procurement options (`recommend`), which the
review sets once every option has been judged.
"""

from __future__ import annotations

import datetime as dt

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable

from linter.physics import formulas as physics
from linter.physics.values import MISSING, Unknown, apply, fact, get, known_or_none, maybe_rounded, rounded, unknowns


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


def _unpriced_pools(data: dict, quotes: list[tuple[str, dict]]) -> list[str]:
    """Compute pools no purchase quote prices, when every purchase quote names what it prices
    (a quote that names no pool, fabric or tier may price anything: then none is known unpriced)."""
    purchases = [q for _, q in quotes if q.get("kind", "purchase") == "purchase"]
    if not purchases or any(not any(key in q for key in ("pool", "fabric", "storage_tier")) for q in purchases):
        return []
    pools = get(data, "node_pools")
    named = {q["pool"] for q in purchases if "pool" in q}
    return [p["name"] for p in ([] if pools is MISSING else pools)
            if p.get("role", "compute") == "compute" and p["name"] not in named]


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
            found = next(((i, x) for i, x in enumerate([] if items is MISSING else items) if x["name"] == quote[key]), None)
            if found is None:
                return None
            i, found = found
            # a fabric that leaves its switches out has an unknown number of them, not none
            switches = (sum(s["count"] for s in found["switches"]) if "switches" in found
                        else Unknown((f"{where}[{i}].switches",)))
            have = found["count"] if key == "pool" else switches if key == "fabric" else found.get("capacity_tb")
            words = {"pool": "node pool", "fabric": "fabric", "storage_tier": "storage tier"}[key]
            return {"names": f"{words} {quote[key]}", "unit": unit, "manifest_quantity": have}
    return None


def money_and_dates(data: dict, it_kw: Any, gpus_total: Any, gpu_model: Any, policy: dict[str, float],
                 today: str | None) -> dict[str, Any]:
    """Money and dates from the quotes of the chosen option, in one currency:

    capex (purchases); opex per month by part: for owned capacity electricity at the PUE
    [green-grid-pue], colocation per kW-month and staff, for any capacity support contracts
    and, when renting, the rent; the rent per month for the same capacity (the manifest's own
    rental quote, else the cheapest option that rents it); the payback period and the total
    cost over the project [seed-hardware-layers]; every amount converted into the report
    currency with its source currency and rate; what each quote names and whether its
    quantity matches; and the date the last part arrives and the cluster is ready (order
    date, lead time, installation and burn-in)."""
    quotes = _quotes(data)
    currency = _report_currency(data, quotes)
    rates = get(data, "procurement.exchange_rates")
    rates = {} if rates is MISSING else rates
    mode = get(data, "procurement.mode")
    owned = mode != "rent"  # staff and the facility's electricity and colocation are the owner's costs only
    out: dict[str, Any] = {"currency": currency, "mode": mode if mode is not MISSING else Unknown(("procurement.mode",))}
    conversions: list[dict[str, Any]] = []

    def into_currency(amount: float, source: str, what: str, path: str) -> Any:
        """`amount` in the report currency, each conversion recorded with its source and rate."""
        if isinstance(currency, Unknown) or source == currency:
            return amount
        rate = rates.get(source)
        if not rate:
            return Unknown((f"procurement.exchange_rates.{source}",))
        value = physics.converted(amount, rate)
        conversions.append({"what": what, "path": path, "amount": amount, "currency": source, "rate": rate,
                            "into": currency, "value": value})
        return value

    def row_of(path: str, q: dict) -> dict[str, Any]:
        row = {"path": path, "item": q["item"], "kind": q.get("kind", "purchase")}
        if "price" not in q:
            row["price"] = Unknown((f"{path}.price",))
        elif "currency" not in q:
            row["price"] = Unknown((f"{path}.currency",))
        else:
            before = len(conversions)
            row["price"] = maybe_rounded(into_currency(q["price"], q["currency"], q["item"], f"{path}.price"))
            if len(conversions) > before:  # converted: as quoted, and at which rate
                row["quoted"] = {key: conversions[-1][key] for key in ("amount", "currency", "rate")}
        target = _target(data, q)
        if target is not None:
            row.update(target, quantity=q.get("quantity", Unknown((f"{path}.quantity",))))
        return row

    listed = [row_of(path, q) for path, q in quotes]
    # no quotes listed anywhere and the list left out: not known (`quotes: []` says there are none)
    out["quotes"] = listed if listed or get(data, "procurement.quotes") is not MISSING else Unknown(("procurement.quotes",))

    def total(kind: str, none: Any) -> Any:
        chosen = [row["price"] for row in listed if row["kind"] == kind]
        return apply(lambda *known: rounded(sum(known), 2), *chosen) if chosen else none

    mode_known = mode if mode is not MISSING else None
    out["capex"] = total("purchase", 0 if mode_known == "rent" else Unknown(("procurement.quotes[] (a purchase quote)",)))
    unpriced = _unpriced_pools(data, quotes) if mode_known == "buy" else []
    if unpriced and not isinstance(out["capex"], Unknown):
        # the purchase quotes each price something named, and none prices these compute pools: capex is not their sum
        out["capex"] = Unknown(tuple(f"procurement.quotes[] (a purchase quote for node pool {name})" for name in unpriced))
    out["support_per_month"] = total("support", 0)
    staff = get(data, "procurement.staff_per_month")
    out["staff_per_month"] = 0 if staff is MISSING or not owned else staff

    def facility_money(value: float, what: str, path: str) -> Any:  # electricity and colocation are priced in facility.currency
        own = get(data, "facility.currency")
        if own is MISSING:
            return Unknown(("facility.currency",))
        return into_currency(value, own, what, path)

    colo = get(data, "facility.colocation_per_kw_month")
    if owned:
        out["electricity_per_month"] = fact(
            data, ["facility.electricity_price_per_kwh", "facility.pue"],
            lambda price_kwh, pue: apply(lambda kw, p: rounded(physics.electricity_per_month(kw, pue, p), 0), it_kw,
                                          facility_money(price_kwh, "electricity price per kWh",
                                                         "facility.electricity_price_per_kwh")))
        out["colocation_per_month"] = 0 if colo is MISSING else apply(
            lambda kw, p: rounded(physics.colocation_per_month(kw, p), 0), it_kw,
            facility_money(colo, "colocation price per kW-month", "facility.colocation_per_kw_month"))
    else:  # the provider's facility: its power and space are in the rent
        out["electricity_per_month"] = out["colocation_per_month"] = 0
    out["opex_counted"] = ", ".join(
        (["electricity at the PUE"] if owned else ["rent"])
        + (["colocation"] if owned and colo is not MISSING else [])
        + (["support"] if any(row["kind"] == "support" for row in listed) else [])
        + (["staff"] if owned and staff is not MISSING else []))
    out["owned_opex_per_month"] = apply(lambda *parts: rounded(physics.owned_opex_per_month(*parts), 0),
                                         out["electricity_per_month"], out["colocation_per_month"],
                                         out["support_per_month"], out["staff_per_month"])
    own_rentals = [(path, q, row) for (path, q), row in zip(quotes, listed) if row["kind"] == "rental"]
    if own_rentals or mode_known == "rent":
        out["rental"] = _rental(own_rentals, gpus_total, gpu_model)
    else:  # a purchase is compared with the options that rent
        out["rental"] = _cheapest_rental(
            [(name, [(path, q, row_of(path, q)) for path, q in option_quotes if q.get("kind") == "rental"])
             for name, option_quotes in _renting_options(data)], gpus_total, gpu_model)
    rent = out["rental"]
    out["rent_per_month"] = rent if isinstance(rent, Unknown) else (
        rent["price"] if rent["matches"] else Unknown((f"{rent['path']}.capacity (it rents {rent['gpus']} "
                                                       f"{rent['gpu_model']}; the manifest has {gpus_total} {gpu_model})",)))
    out["project_months"] = fact(data, ["procurement.project_duration_months"], lambda m: m)
    if mode_known == "rent":
        out["opex_per_month"] = apply(lambda *parts: rounded(sum(parts), 0), out["rent_per_month"],
                                       out["support_per_month"])
        out["pays_back"] = out["payback_months"] = Unknown(("procurement.mode (rented: nothing to pay back)",))
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
    out["total_cost"] = apply(lambda capex, monthly, months: rounded(physics.project_cost(capex, monthly, months), 0),
                              out["capex"], out["opex_per_month"], out["project_months"])
    out["conversions"] = conversions
    quantities = unknowns([row[key] for row in listed if "names" in row for key in ("quantity", "manifest_quantity")])
    out["quote_binding"] = Unknown(quantities) if quantities else {
        "unbound": [{"path": row["path"], "item": row["item"]} for row in listed
                    if row["kind"] == "purchase" and "names" not in row],
        "mismatched": [row for row in listed if "names" in row and row["manifest_quantity"] is not None
                       and row["quantity"] != row["manifest_quantity"]],
    }
    out["start_date"] = fact(data, ["plan.start_date"], lambda d: d)
    out.update(_delivery(data, quotes, policy, today))
    out["oldest_quote"] = _pick(
        quotes, lambda path, q: str(q["quote_date"]) if "quote_date" in q else Unknown((f"{path}.quote_date",)), min)
    return out


def _renting_options(data: dict) -> list[tuple[str, list[tuple[str, dict]]]]:
    """(name, [(path, quote)]) of each option that rents, other than the chosen one: what a
    purchase is compared with when its own quotes hold no rental."""
    options = get(data, "procurement.options")
    chosen = get(data, "procurement.chosen")
    return [(o["name"], [(f"procurement.options[{i}].quotes[{j}]", q) for j, q in enumerate(o.get("quotes", []))])
            for i, o in enumerate([] if options is MISSING else options)
            if o.get("mode", get(data, "procurement.mode")) == "rent" and o["name"] != chosen]


def _cheapest_rental(options: list[tuple[str, list[tuple[str, dict, dict]]]], gpus_total: Any, gpu_model: Any) -> Any:
    """The rental of the renting option a purchase is compared with: the cheapest that rents the
    same capacity (the shortest payback, so the purchase is not flattered), else the first."""
    found = [(name, _rental(rentals, gpus_total, gpu_model)) for name, rentals in options if rentals]
    if not found:
        return Unknown(("procurement.quotes[] (a rental quote for the same capacity)",))
    known = [(name, r) for name, r in found if not isinstance(r, Unknown)]
    same = [(name, r) for name, r in known if r["matches"] is True and not isinstance(r["price"], Unknown)]
    name, rental = min(same, key=lambda x: x[1]["price"]) if same else (known or found)[0]
    return rental if isinstance(rental, Unknown) else {**rental, "option": name}


def _rental(rentals: list[tuple[str, dict, dict]], gpus_total: Any, gpu_model: Any) -> Any:
    """(path, quote, row) of the rental quotes together: monthly price, the GPUs they rent, their
    term, and whether that is the manifest's own capacity (same GPU count and model)."""
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
           "gpu_model": " and ".join(models), "option": None,
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
        out["latest_delivery"] = out["ready_date"] = out["deliveries"] = Unknown(("procurement.quotes",))
    elif missing:
        out["latest_delivery"] = out["ready_date"] = out["deliveries"] = Unknown(missing)
    else:
        when, path, q = max(dated, key=lambda d: d[0]["ready"])
        out["latest_delivery"] = {**when, "item": q["item"], "path": path}
        out["ready_date"] = when["ready"]
        # every quote's, latest first: BUY005 names each that is ready only after the start
        out["deliveries"] = sorted(({**w, "item": d["item"], "path": p} for w, p, d in dated), key=lambda d: d["ready"],
                                   reverse=True)
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


def recommend(options: list[dict[str, Any]], start_date: Any, months: Any, chosen: str) -> Any:
    """The option to take: among those with no failing error, ready to train by the planned
    start and with a known total cost over the project, the one that costs least over it
    [seed-hardware-layers]; the runner-up and the margin to it; and what each other option
    lacks; and the `chosen` one's total and shortfalls. `options`: {name, mode, total_cost,
    ready_date, errors} per option (errors: the ids of its failing error-severity rules; an
    Unknown total or date names what it needs)."""
    if isinstance(months, Unknown) or isinstance(start_date, Unknown):
        return Unknown(unknowns([months, start_date]))
    start = str(start_date)
    rows = []
    for o in options:
        lacks = []
        if o["errors"]:
            lacks.append(f"fails {', '.join(o['errors'])} (error)")
        ready = o["ready_date"]
        if isinstance(ready, Unknown):
            lacks.append(f"no ready date (needs {', '.join(ready.needs)})")
        elif str(ready) > start:
            late = (dt.date.fromisoformat(str(ready)) - dt.date.fromisoformat(start)).days
            lacks.append(f"ready on {ready}, {late} days after the start on {start}")
        if isinstance(o["total_cost"], Unknown):
            lacks.append(f"no total cost (needs {', '.join(o['total_cost'].needs)})")
        rows.append({"name": o["name"], "mode": o["mode"], "total_cost": o["total_cost"], "ready_date": ready,
                     "lacks": "; ".join(lacks)})
    eligible = sorted((r for r in rows if not r["lacks"]), key=lambda r: (r["total_cost"], str(r["ready_date"])))
    out: dict[str, Any] = {"start_date": start, "months": months, "eligible": [r["name"] for r in eligible],
                           "lacking": [{"name": r["name"], "lacks": r["lacks"]} for r in rows if r["lacks"]],
                           "name": None, "mode": None, "total_cost": None, "runner_up": None, "margin": None,
                           "margin_pct": None}
    mine = next(r for r in rows if r["name"] == chosen)
    out["chosen"] = {"name": chosen, "total_cost": known_or_none(mine["total_cost"]), "lacks": mine["lacks"]}
    if eligible:
        best = eligible[0]
        out.update(name=best["name"], mode=best["mode"], total_cost=best["total_cost"], ready_date=best["ready_date"])
        if len(eligible) > 1:
            second = eligible[1]
            out["runner_up"] = {"name": second["name"], "mode": second["mode"], "total_cost": second["total_cost"]}
            out["margin"] = rounded(second["total_cost"] - best["total_cost"], 0)
            out["margin_pct"] = rounded(100 * out["margin"] / second["total_cost"], 1) if second["total_cost"] else 0
    return out
