"""The procurement section of a review: the buy-or-rent verdict first, with its numbers, then
the decisions in the seed article's order (goal -> parallelism -> buy or rent -> card,
[seed-hardware-layers]), then every procurement option side by side.

It reads only the review's facts and option summaries (engine.review.option_summary).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from linter.engine.review import Review
from linter.numbers import num
from linter.physics.values import Unknown

ORDER_SOURCE = "seed-hardware-layers"  # the article that fixes the decision order
CARD_SOURCE = "seed-gear-check"


@dataclass
class Section:
    verdict: str  # "Buy", "Rent", "Rent instead", "Buy instead", or "Not decided yet"
    because: str  # the numbers behind it, one sentence
    recommendation: tuple[str, str] = ("", "")  # with options: (the one to take, why and the margin to the runner-up)
    steps: list[tuple[str, str]] = field(default_factory=list)  # (decision, what the manifest says)
    options: list[str] = field(default_factory=list)  # the options table's column heads
    figures: list[tuple[str, list[str]]] = field(default_factory=list)  # (figure, one cell per option)
    quotes: list[dict[str, str]] = field(default_factory=list)  # every quote, with its conversion


def _known(value: Any) -> bool:
    return value is not None and not isinstance(value, Unknown)


def _money(value: Any, currency: str) -> str:
    return f"{num(value)} {currency}" if _known(value) else "unknown"


def conversion(c: dict[str, Any]) -> str:
    """One converted amount, traceable: "11,800,000 EUR at 1.08 USD per EUR = 12,744,000 USD"."""
    return (f"{num(c['amount'], 4)} {c['currency']} at {num(c['rate'], 6)} {c['into']} per {c['currency']} = "
            f"{num(c['value'], 4)} {c['into']}")


def _recommendation(review: Review) -> tuple[str, str]:
    """(the option to take, why), or what each option lacks; ("", "") without options."""
    options = review.facts.get("options")
    found = options.get("recommendation") if isinstance(options, dict) and len(options["names"]) > 1 else None
    if found is None:
        return "", ""
    if isinstance(found, Unknown):
        return "not decided yet", f"Comparing the options needs {', '.join(found.needs)}."
    cur = review.facts["procurement"]["currency"]
    lacking = "; ".join(f"{o['name']}: {o['lacks']}" for o in found["lacking"])
    if found["name"] is None:
        return "none", (f"No option passes with no error and is ready to train by the start on "
                        f"{found['start_date']}: {lacking}.")
    text = (f"It costs least over the {num(found['months'])}-month "
            f"project, {_money(found['total_cost'], cur)}, among the options that pass with no error and are ready by "
            f"{found['start_date']}")
    second = found["runner_up"]
    text += (f"; the runner-up, {second['name']} ({second['mode']}), costs {_money(second['total_cost'], cur)}, "
             f"{_money(found['margin'], cur)} ({num(found['margin_pct'])}%) more." if second else "; it is the only one.")
    best = next(o for o in review.options if o["name"] == found["name"])
    if best["failing"]:  # warnings and infos do not rule an option out, but finance should read them
        text += " It fails " + ", ".join(f"{rule} ({best['failing_severity'][rule]})" for rule in best["failing"]) \
            + ", which does not rule it out."
    if lacking:
        text += f" Not compared: {lacking}."
    mine = found["chosen"]
    if mine["name"] != found["name"]:
        text += f" The manifest chooses {mine['name']} (BUY009)."
    return f"{found['name']} ({found['mode']})", text


def verdict(review: Review) -> tuple[str, str] | None:
    """(verdict, because) for the chosen option; None when the manifest says nothing of money."""
    p = review.facts.get("procurement")
    if not p or not p.get("quotes") or not _known(p["quotes"]):  # no quotes, or left out
        return None
    cur = p["currency"] if _known(p["currency"]) else "(currency unknown)"
    months = p["project_months"]
    rental = p["rental"]
    same = (f"renting the same capacity ({num(rental['gpus'])} {rental['gpu_model']}"
            + (f", option {rental['option']}" if rental.get("option") else "")
            + f") for {_money(p['rent_per_month'], cur)} a month") if _known(rental) else "renting"
    if p["mode"] == "buy":
        if p["pays_back"] is False:
            return "Rent instead", (f"owning costs {_money(p['owned_opex_per_month'], cur)} a month ({p['opex_counted']}), "
                                    f"more than {same}: buying for {_money(p['capex'], cur)} never pays back.")
        if _known(p["payback_months"]) and _known(months):
            within = p["payback_months"] <= months
            return ("Buy" if within else "Rent instead"), (
                f"buying for {_money(p['capex'], cur)} pays back after {num(p['payback_months'])} months against {same} "
                f"(owning costs {_money(p['owned_opex_per_month'], cur)} a month: {p['opex_counted']}), "
                + (f"within the {num(months)}-month project." if within else f"later than the end of the {num(months)}-month project."))
        needs = p["payback_months"].needs if isinstance(p["payback_months"], Unknown) else ("procurement.project_duration_months",)
        return "Not decided yet", f"buying is chosen, but the payback cannot be computed without {', '.join(needs)}."
    if p["mode"] == "rent":
        total = f" ({_money(p['total_cost'], cur)} over the {num(months)}-month project)" if _known(p["total_cost"]) else ""
        found = (review.facts.get("options") or {}).get("recommendation")
        bought = [o for o in review.options if o["mode"] == "buy"]
        if _known(found) and found["name"] is not None and found["mode"] == "buy":
            return "Buy instead", (f"option {found['name']} costs {_money(found['total_cost'], cur)} over the "
                                   f"{num(months)}-month project; renting costs {_money(p['total_cost'], cur)}.")
        if bought:
            return "Rent", f"renting costs {_money(p['opex_per_month'], cur)} a month{total}; see the options compared below."
        return "Rent", f"renting costs {_money(p['opex_per_month'], cur)} a month{total}; no purchase is quoted to compare."
    return "Not decided yet", "procurement.mode does not say whether the cluster is bought or rented."


def section(review: Review, brief: bool = False) -> Section | None:
    """The section; `brief` (a review cut to fit a comment) keeps the verdict, the
    recommendation and their numbers only."""
    found = verdict(review)
    if found is None:
        return None
    out = Section(*found, recommendation=_recommendation(review))
    if brief:
        return out
    d = review.facts["decision"]
    show = lambda v, unit="": f"{num(v)}{unit}" if _known(v) else "not given"  # noqa: E731
    goal = f"{d['goal']}, {show(d['parameters_billion'], 'B')} parameters on {show(d['training_tokens_billion'], 'B')} tokens"
    if _known(d["target_duration_days"]):
        goal += f", {num(d['target_duration_days'])} days planned"
    layout = f"tensor {d['tensor']} x pipeline {d['pipeline']} x data {show(d['data'])}"
    layout += f" for {show(d['gpus'])} GPUs" + (f", ZeRO stage {d['zero_stage']}" if d["zero_stage"] else "")
    team = {True: "an operations team runs it", False: "no operations team"}.get(d["operations_team"], "operations team not stated")
    chosen = {"buy": "the manifest buys", "rent": "the manifest rents"}.get(d["mode"], "buy or rent not stated")
    months = f"{num(d['project_duration_months'])}-month project" if _known(d["project_duration_months"]) \
        else "project duration not given"
    mode = f"{chosen}; {months}; {team}"
    card = f"{show(d['gpus'])} x {d['gpu_model'] if _known(d['gpu_model']) else 'GPU model not given'}"
    out.steps = [("Goal", goal), ("Parallelism", layout), ("Buy or rent", f"{mode}. Verdict: {out.verdict.lower()}"),
                 ("Card", card + ": check it against the vendor's current spec and price pages (the catalog entries "
                  "used and their dates are listed below)")]
    if review.options:
        out.options, out.figures = _options_table(review)
    out.quotes = _quotes(review)
    return out


def _options_table(review: Review) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """One column per option, one row per figure: money by part, the total over the project,
    payback, delivery, the rules, and where the option stands in the recommendation."""
    options = review.options
    months = review.facts["procurement"]["project_months"]
    found = review.facts["options"]["recommendation"]
    cur = next((o["currency"] for o in options if o["currency"]), "")

    def row(label: str, cell: Any) -> tuple[str, list[str]]:
        return label, [cell(o) for o in options]

    def owned(key: str) -> Any:
        return lambda o: "— (owned capacity only)" if o["mode"] == "rent" else _money(o[key], cur)

    def payback(o: dict) -> str:
        if o["mode"] == "rent":
            return "—"
        against = f" against {o['rent_compared']}" if o["rent_compared"] else ""
        return (f"{num(o['payback_months'])} months{against}" if o["payback_months"] is not None
                else "never" if o["pays_back"] is False else "unknown")

    def rules(o: dict) -> str:
        c = o["counts"]
        failing = ", ".join(f"{rule} ({o['failing_severity'][rule]})" for rule in o["failing"])
        return f"{c['pass']} pass, {c['fail']} fail" + (f": {failing}" if failing else "") \
            + (f", {c['waived']} waived" if c["waived"] else "") + (f", {c['pending']} to confirm" if c["pending"] else "") \
            + f", {c['skipped']} not applicable"

    def standing(o: dict) -> str:
        if not _known(found):
            return "not compared"
        if o["name"] == found["name"]:
            return "recommended"
        if found["runner_up"] and o["name"] == found["runner_up"]["name"]:
            return "runner-up"
        lacks = next((x["lacks"] for x in found["lacking"] if x["name"] == o["name"]), "")
        return lacks or "passes, costs more"

    heads = [o["name"] + (" (chosen)" if o["chosen"] else "") for o in options]
    figures = [
        row("Mode", lambda o: o["mode"] or "?"),
        row("Capex", lambda o: _money(o["capex"], cur)),
        row("Electricity at the PUE, a month", owned("electricity_per_month")),
        row("Colocation, a month", owned("colocation_per_month")),
        row("Staff, a month", owned("staff_per_month")),
        row("Support, a month", lambda o: _money(o["support_per_month"], cur)),
        row("Rent, a month", lambda o: _money(o["rent_per_month"], cur) if o["mode"] == "rent" else "—"),
        row("Opex, a month", lambda o: _money(o["opex_per_month"], cur)),
        row(f"Total over {num(months)} months" if _known(months) else "Total over the project",
            lambda o: _money(o["total_cost"], cur)),
        row("Payback against renting", payback),
        row("Ready to train", lambda o: o["ready_date"] or "unknown"),
        row("Rules (the whole pack)", rules),
        row("Recommendation", standing),
    ]
    return heads, figures


def _quotes(review: Review) -> list[dict[str, str]]:
    """Every quote of every option (a shared one once), as quoted and, when it was converted,
    with the rate and the amount in the report currency; then the facility's prices that
    were converted. Shown when there are options or conversions."""
    p = review.facts["procurement"]
    if not review.options and not p["conversions"]:
        return []
    cur = p["currency"] if _known(p["currency"]) else ""
    rate = lambda c: f"{num(c['rate'], 6)} {cur} per {c['currency']}"  # noqa: E731
    shared = "all options" if review.options else "—"
    out, seen = [], set()
    for name, quotes in [(o["name"], o["quotes"]) for o in review.options] or [("", p["quotes"] if _known(p["quotes"]) else [])]:
        for q in quotes:
            if q["path"] in seen:
                continue
            seen.add(q["path"])
            quoted = q.get("quoted")
            out.append({"option": name if q["path"].startswith("procurement.options") else shared, "item": q["item"],
                        "kind": q["kind"], "quoted": f"{num(quoted['amount'])} {quoted['currency']}" if quoted
                        else _money(q["price"], cur), "rate": rate(quoted) if quoted else "—",
                        "price": _money(q["price"], cur)})
    out += [{"option": "owned capacity", "item": c["what"], "kind": "facility", "quoted": f"{num(c['amount'], 4)} {c['currency']}",
             "rate": rate(c), "price": f"{num(c['value'], 4)} {cur}"} for c in p["conversions"] if c["path"].startswith("facility.")]
    return out
