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
    steps: list[tuple[str, str]] = field(default_factory=list)  # (decision, what the manifest says)
    options: list[dict[str, Any]] = field(default_factory=list)  # rows, figures formatted


def _known(value: Any) -> bool:
    return value is not None and not isinstance(value, Unknown)


def _money(value: Any, currency: str) -> str:
    return f"{num(value)} {currency}" if _known(value) else "unknown"


def verdict(review: Review) -> tuple[str, str] | None:
    """(verdict, because) for the chosen option; None when the manifest says nothing of money."""
    p = review.facts.get("procurement")
    if not p or not p.get("quotes"):
        return None
    cur = p["currency"] if _known(p["currency"]) else "(currency unknown)"
    months = p["project_months"]
    rental = p["rental"]
    same = (f"renting the same capacity ({num(rental['gpus'])} {rental['gpu_model']}) for "
            f"{_money(p['rent_per_month'], cur)} a month") if _known(rental) else "renting"
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
        bought = [o for o in review.options if o["mode"] == "buy" and o["payback_months"] is not None]
        total = f" ({_money(p['opex_per_month'] * months, cur)} over the {num(months)}-month project)" \
            if _known(p["opex_per_month"]) and _known(months) else ""
        if bought and _known(months):
            clean = [o for o in bought if not o["failing"]] or bought  # an option that passes every rule first
            best = min(clean, key=lambda o: o["payback_months"])
            if best["payback_months"] <= months:
                return "Buy instead", (f"option {best['name']} pays back after {num(best['payback_months'])} months, within the "
                                       f"{num(months)}-month project; renting costs {_money(p['opex_per_month'], cur)} a month.")
            return "Rent", (f"renting costs {_money(p['opex_per_month'], cur)} a month{total}; the quickest purchase "
                            f"(option {best['name']}) pays back only after {num(best['payback_months'])} months.")
        return "Rent", f"renting costs {_money(p['opex_per_month'], cur)} a month{total}; no purchase is quoted to compare."
    return "Not decided yet", "procurement.mode does not say whether the cluster is bought or rented."


def section(review: Review, brief: bool = False) -> Section | None:
    """The section; `brief` (a review cut to fit a comment) keeps the verdict and its numbers only."""
    found = verdict(review)
    if found is None:
        return None
    out = Section(*found)
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
    mode = f"{chosen}; {show(d['project_duration_months'])}-month project; {team}"
    card = f"{show(d['gpus'])} x {d['gpu_model'] if _known(d['gpu_model']) else 'GPU model not given'}"
    out.steps = [("Goal", goal), ("Parallelism", layout), ("Buy or rent", f"{mode}. Verdict: {out.verdict.lower()}"),
                 ("Card", card + ": check it against the vendor's current spec and price pages (the catalog entries "
                  "used and their dates are listed below)")]
    for o in review.options:
        cur = o["currency"] or ""
        out.options.append({
            "name": o["name"] + (" (chosen)" if o["chosen"] else ""),
            "mode": o["mode"] or "?",
            "capex": _money(o["capex"], cur),
            "opex": _money(o["opex_per_month"], cur),
            "rent": _money(o["rent_per_month"], cur),
            "payback": "—" if o["mode"] == "rent" else (f"{num(o['payback_months'])} months" if o["payback_months"] is not None
                                                        else "never" if o["pays_back"] is False else "unknown"),
            "ready": o["ready_date"] or "unknown",
            "failing": ", ".join(o["failing"]) or "none",
        })
    return out
