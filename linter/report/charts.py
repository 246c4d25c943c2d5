"""Mermaid charts for the Markdown review (GitHub draws ```mermaid blocks in comments).

Two pictures, both drawn from the facts the budget table reads (no number is worked out here):

- `memory`: the per-GPU memory estimate's parts (weights, gradients, optimizer states, frozen
  base weights, the offload buffer, activations) and their total as bars, the usable GPU memory
  as a line across them.
- `rack_power`: each rack group's load next to its power budget and its circuits' continuous
  capacity. Rack groups that are alike (same load and limits) share one set of bars; beyond
  MAX_RACK_GROUPS the tightest ones are drawn and the note says how many are not.

A value that is not known is never drawn (no bar at 0): the chart leaves it out and its note
says what is missing. Text from the manifest (rack names) reaches Mermaid only through `label`,
which keeps letters, digits and a few inert marks: no quote, bracket, semicolon, `%%`, `#`,
HTML or line break can end a string or start a directive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from linter.numbers import num
from linter.physics.values import Unknown
from linter.engine.review import Review
from linter.report.budget import rack_load

MAX_RACK_GROUPS = 4  # at most 3 bars each: load, budget, circuits
LABEL_CHARS = 24
BAR_COLOUR, LINE_COLOUR = "#9ec5e8", "#d62728"  # light blue bars (their values stay legible), a red line
_SAFE_MARKS = set(" -_./+()")


@dataclass
class Chart:
    title: str  # a heading for the Markdown, written by hwlint
    mermaid: str  # the block's body, every manifest value passed through `label`
    caption: str  # how to read it (Markdown-escaped on output)
    notes: list[str] = field(default_factory=list)  # what is not drawn and why (Markdown-escaped on output)


def _known(value: Any) -> bool:
    return value is not None and not isinstance(value, Unknown)


def label(text: object, limit: int = LABEL_CHARS) -> str:
    """`text` as inert Mermaid label text: letters, digits, spaces and `-_./+()` only; anything
    else becomes `_`; at most `limit` characters (cut with `~`)."""
    kept = "".join(ch if ch.isalnum() or ch in _SAFE_MARKS else "_" for ch in str(text))
    kept = " ".join(kept.split())  # no runs of spaces, none at the ends
    return kept if len(kept) <= limit else kept[: limit - 1].rstrip() + "~"


def _value(x: float) -> str:
    """A number as the budget table prints it, without thousands separators (Mermaid reads plain digits)."""
    return num(x).replace(",", "")


def _axis_top(values: list[float]) -> float:
    """A round number a little above the largest value, so the bars start from 0 and fit."""
    top = max(values) * 1.1
    if top <= 0:
        return 1
    step = 10 ** math.floor(math.log10(top))
    return math.ceil(top / step) * step


def _xychart(title: str, unit: str, names: list[str], bars: list[float], line: float | None = None) -> str:
    values = bars + ([line] if line is not None else [])
    rows = [
        "---",
        "config:",
        "  xyChart:",
        f"    height: {min(500, 120 + 50 * len(bars))}",  # bars of one thickness, whatever their count
        "  themeVariables:",
        "    xyChart:",
        f'      plotColorPalette: "{BAR_COLOUR}, {LINE_COLOUR}"',
        "---",
        "xychart-beta horizontal",
        f'    title "{title}"',
        # the value in the label: Mermaid's own data labels shrink to fit the shortest bar
        "    x-axis [" + ", ".join(f'"{n} {_value(v)}"' for n, v in zip(names, bars)) + "]",
        f'    y-axis "{unit}" 0 --> {_value(_axis_top(values))}',
        "    bar [" + ", ".join(_value(v) for v in bars) + "]",
    ]
    if line is not None:
        rows.append("    line [" + ", ".join(_value(line) for _ in bars) + "]")
    return "\n".join(rows)


def _missing(value: Any) -> str:
    return ", ".join(value.needs) if isinstance(value, Unknown) and value.needs else "not given"


PARTS = (("weights", "weights"), ("gradients", "gradients"), ("optimizer", "optimizer states"),
         ("frozen", "frozen base weights"), ("buffer", "offload buffer"))


def memory(review: Review) -> Chart | None:
    """The per-GPU memory estimate's parts against the usable GPU memory; None when no part is known."""
    mem = review.facts["memory"]
    states = mem["states"]
    if not isinstance(states, dict):
        return None
    names, bars, notes = [], [], []
    for key, name in PARTS:
        if states.get(key):
            names.append(name)
            bars.append(states[key])
    if _known(mem["activations_gb"]):
        names.append("activations")
        bars.append(mem["activations_gb"])
    else:
        notes.append(f"Activations are not drawn: not known until the manifest gives {_missing(mem['activations_gb'])}.")
    if _known(mem["total_gb"]):
        names.append("total needed")
        bars.append(mem["total_gb"])
    if not bars:
        return None
    usable = mem["usable_gb"] if _known(mem["usable_gb"]) else None
    caption = "Bars: the parts of the per-GPU memory estimate" + (" and their total" if _known(mem["total_gb"]) else "")
    if usable is None:
        notes.append(f"The usable GPU memory is not drawn: the manifest does not give {_missing(mem['capacity_gb'])}.")
        title = "Memory per GPU, GB (estimate)"
    else:
        reserve = review.facts["policy"]["gpu_memory_reserve_pct"]
        title = f"Memory per GPU, GB (estimate); red line: {_value(usable)} usable"
        caption += (f"; red line: {num(usable)} GB usable of the GPU's {num(mem['capacity_gb'])} GB "
                    f"({num(reserve)}% reserve)")
    return Chart("GPU memory per GPU (estimate)", _xychart(title, "GB", names, bars, usable), caption + ".", notes)


MISSING = {  # what a rack's bars leave out, and the note that names those racks and the fields they need
    "load": "Not drawn, their load not known yet",
    "part": "Drawn with the known part of their load only (at least), still to give",
    "budget": "No power budget drawn, not given",
    "circuits": "No circuit capacity drawn, not known without",
}
SOME = 6  # names listed in one note, the rest counted


def _some(items: list[str]) -> str:
    return "; ".join(items[:SOME]) + (f"; and {len(items) - SOME} more" if len(items) > SOME else "")


@dataclass
class _Group:
    names: list[str]
    count: int
    load: float
    complete: bool
    estimate: bool
    limits: list[tuple[str, float]]  # (what, kW)

    def key(self) -> tuple:
        return (self.load, self.complete, self.estimate, tuple(self.limits))

    def tightest(self) -> float:
        """The load over its smallest limit (above 1: over it); racks with no limit come last."""
        return max((self.load / kw if kw > 0 else math.inf) for _, kw in self.limits) if self.limits else -1


def rack_power(review: Review) -> Chart | None:
    """Each rack group's load against its budget and circuit capacity; None when nothing can be drawn."""
    power = review.facts["power"]
    if not power["racks"] or "provider-facility" in review.conditions:
        return None
    missing: dict[str, list[str]] = {kind: [] for kind in MISSING}
    groups: dict[tuple, _Group] = {}
    for rack in power["racks"]:
        load, complete = rack_load(rack)
        if not load:
            missing["load"].append(f"{rack['name']} ({_missing(rack['load_kw'])})")
            continue
        if not complete:
            missing["part"].append(f"{rack['name']} ({_missing(rack['load_kw'])})")
        limits = []
        if _known(rack["budget_kw"]):
            limits.append(("budget", rack["budget_kw"]))
        else:
            missing["budget"].append(f"{rack['name']} ({_missing(rack['budget_kw'])})")
        if _known(rack["circuit_limit_kw"]):
            limits.append(("circuits per feed" if rack["per_feed"] is True else "circuits", rack["circuit_limit_kw"]))
        else:
            missing["circuits"].append(f"{rack['name']} ({_missing(rack['circuit_limit_kw'])})")
        group = _Group([rack["name"]], rack["count"], load, complete, rack["estimate"], limits)
        if group.key() in groups:
            alike = groups[group.key()]
            alike.names.append(rack["name"])
            alike.count += rack["count"]
        else:
            groups[group.key()] = group
    notes = [f"{MISSING[kind]}: {_some(items)}." for kind, items in missing.items() if items]
    if not groups:
        return None
    shown = list(groups.values())
    if any(len(g.names) > 1 for g in shown):
        notes.append("Rack groups with the same load and limits share one set of bars: "
                     + "; ".join(f"{', '.join(g.names)} ({g.count} racks)" for g in shown if len(g.names) > 1) + ".")
    if len(shown) > MAX_RACK_GROUPS:
        kept = {id(g) for g in sorted(shown, key=lambda g: -g.tightest())[:MAX_RACK_GROUPS]}
        left = [g for g in shown if id(g) not in kept]
        notes.append(f"{len(left)} of {len(shown)} rack groups, those with the most headroom, are not drawn "
                     f"({_some([n for g in left for n in g.names])}); the budget table lists every rack.")
        shown = [g for g in shown if id(g) in kept]
    names, bars = [], []
    for g in shown:
        who = label(g.names[0]) + (f" +{len(g.names) - 1}" if len(g.names) > 1 else "")
        what = "load" + ("" if g.complete else ", at least") + (" (estimate)" if g.estimate else "")
        names.append(f"{who} x{g.count} {what}")
        bars.append(g.load)
        for limit_name, kw in g.limits:
            names.append(f"{who} {limit_name}")
            bars.append(kw)
    estimate = " (estimate)" if any(g.estimate for g in shown) else ""
    drawn = [what for what in ("budget", "circuits") if any(n.startswith(what) for g in shown for n, _ in g.limits)]
    title = f"Power per rack in kW{estimate}: " + ", ".join(["load", *drawn])
    caption = ("Bars for each rack group (xN: N racks like it): one rack's load at full power, its power budget "
               "and its circuits' continuous capacity, as in the budget table.")
    return Chart(f"Power per rack{estimate}", _xychart(title, "kW", names, bars), caption, notes)


def charts(review: Review) -> list[Chart]:
    """The review's charts, in the order of the budget table's rows."""
    if not review.facts:
        return []
    return [c for c in (memory(review), rack_power(review)) if c is not None]

