"""Procurement options and what quotes name: checked against the manifest, and applied.

`check` finds what the schema cannot: an option or quote that names a pool, fabric or storage
tier the manifest does not have, a `chosen` option that does not exist, and money in a
currency with no exchange rate. Each is a file finding at the key, like a schema error.

`with_option` returns the manifest as one option would make it: the option's changes merged
over the pools, fabrics and tiers of the same name (keys given replace the manifest's own),
its mode and provider in `procurement`, and `procurement.chosen` set to it. It works on the
raw data, before the catalog fills in values, so an option may name another catalog system.
"""

from __future__ import annotations

import copy

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.manifest.loader import Document
from linter.manifest.validate import suggest
from linter.results import Result, dotted, file_finding

# option key -> (manifest list it changes, words)
CHANGES = (
    ("node_pools", ("node_pools",), "node pool"),
    ("fabrics", ("network", "fabrics"), "network fabric"),
    ("storage_tiers", ("storage", "tiers"), "storage tier"),
)
# quote key -> (manifest list it names, words)
TARGETS = (
    ("pool", ("node_pools",), "node pool"),
    ("fabric", ("network", "fabrics"), "network fabric"),
    ("storage_tier", ("storage", "tiers"), "storage tier"),
)


def _names(data: dict, where: tuple[str, ...]) -> list[str]:
    node: Any = data
    for step in where:
        node = node.get(step) if isinstance(node, dict) else None
    return [item["name"] for item in node or [] if isinstance(item, dict) and "name" in item]


def _quotes(procurement: dict) -> list[tuple[tuple, dict]]:
    """(path, quote) for the shared quotes and every option's."""
    out = [(("procurement", "quotes", i), q) for i, q in enumerate(procurement.get("quotes") or [])]
    for o, option in enumerate(procurement.get("options") or []):
        out += [(("procurement", "options", o, "quotes", i), q) for i, q in enumerate(option.get("quotes") or [])]
    return out


def report_currency(data: dict) -> str | None:
    """The currency money is reported in: procurement.currency, else the one the quotes use,
    else the facility's. None when nothing names one (or the quotes use several)."""
    procurement = data.get("procurement") or {}
    if procurement.get("currency"):
        return procurement["currency"]
    used = sorted({q["currency"] for _, q in _quotes(procurement) if q.get("currency")})
    if len(used) == 1:
        return used[0]
    if not used:
        return (data.get("facility") or {}).get("currency")
    return None


def check(doc: Document) -> list[Result]:
    data = doc.data
    procurement = data.get("procurement") or {}
    findings: list[Result] = []

    def problem(path: tuple, message: str, fix: str) -> None:
        line, column = doc.position(path)
        findings.append(file_finding("PROCUREMENT", message, doc.path, line, column, dotted(path), fix=fix))

    options = procurement.get("options") or []
    names = [o["name"] for o in options]
    for o, name in enumerate(names):
        if name in names[:o]:
            problem(("procurement", "options", o, "name"), f'procurement.options[{o}] is named "{name}" like an earlier option',
                    "give every option its own name")
    chosen = procurement.get("chosen")
    if chosen is not None and chosen not in names:
        listed = ", ".join(names) if names else "none are listed"
        problem(("procurement", "chosen"), f'procurement.chosen is "{chosen}", but no option has that name (options: {listed})'
                + suggest(chosen, names), "name one of procurement.options, or add the option")
    elif options and chosen is None:
        problem(("procurement", "options"), f"procurement lists {len(options)} options ({', '.join(names)}) but not which "
                "one this manifest buys", "add procurement.chosen: the name of the option the purchase is for")

    for o, option in enumerate(options):
        for key, where, words in CHANGES:
            existing = _names(data, where)
            for j, change in enumerate(option.get(key) or []):
                if change["name"] not in existing:
                    problem(("procurement", "options", o, key, j, "name"),
                            f'option "{option["name"]}" changes the {words} "{change["name"]}", which the manifest does not '
                            f"have ({dotted(where)}: {', '.join(existing) or 'none'})" + suggest(change["name"], existing),
                            f"name an existing {words}; an option changes what the manifest lists, it does not add to it")

    currency = report_currency(data)
    rates = procurement.get("exchange_rates") or {}
    for path, quote in _quotes(procurement):
        given = [(key, where, words) for key, where, words in TARGETS if key in quote]
        if len(given) > 1:
            problem(path, f"{dotted(path)} names a {' and a '.join(w for _, _, w in given)}; a quote prices one of them",
                    "split the quote into one quote per pool, fabric or storage tier")
        for key, where, words in given:
            existing = _names(data, where)
            if quote[key] not in existing:
                problem(path + (key,), f'{dotted(path + (key,))} is "{quote[key]}", but the manifest has no {words} of that name '
                        f"({dotted(where)}: {', '.join(existing) or 'none'})" + suggest(quote[key], existing),
                        f"name the {words} this quote prices, as the manifest spells it")
        money = quote.get("currency")
        if money and currency and money != currency and money not in rates:
            problem(path + ("currency",), f"{dotted(path + ('currency',))} is {money}, but the review reports money in "
                    f"{currency} and procurement.exchange_rates gives no rate for {money}",
                    f"add procurement.exchange_rates: {{{money}: <{currency} per {money}>}}, or ask for the quote in {currency}")
    if currency is None:
        used = sorted({q["currency"] for _, q in _quotes(procurement) if q.get("currency")})
        if len(used) > 1:
            problem(("procurement", "quotes"), f"the quotes are in {' and '.join(used)} and procurement.currency does not "
                    "say which one the review reports money in", f"add procurement.currency (one of {', '.join(used)}) and "
                    "procurement.exchange_rates for the others")
    facility_currency = (data.get("facility") or {}).get("currency")
    if facility_currency and currency and facility_currency != currency and facility_currency not in rates:
        problem(("facility", "currency"), f"facility.currency is {facility_currency} (the electricity and colocation "
                f"prices), but the review reports money in {currency} and procurement.exchange_rates gives no rate "
                f"for {facility_currency}", f"add procurement.exchange_rates: {{{facility_currency}: <{currency} per "
                f"{facility_currency}>}}")
    return findings


def option_names(data: dict) -> list[str]:
    return [o["name"] for o in (data.get("procurement") or {}).get("options") or []]


def with_option(data: dict, name: str) -> dict:
    """The manifest as option `name` makes it (see the module docstring)."""
    out = copy.deepcopy(data)
    procurement = out["procurement"]
    option = next(o for o in procurement["options"] if o["name"] == name)
    procurement["chosen"] = name
    for key in ("mode", "provider"):
        if key in option:
            procurement[key] = option[key]
    for key, where, _ in CHANGES:
        if not option.get(key):
            continue  # nothing changed here (the manifest may leave this section out)
        node: Any = out
        for step in where:
            node = node[step]
        for change in option.get(key) or []:
            target = next(item for item in node if item["name"] == change["name"])
            target.update(copy.deepcopy(change))
    return out
