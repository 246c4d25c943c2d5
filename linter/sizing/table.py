"""The sizer's answer as text: a ranked table per GPU model, why the others were dropped, and
what the sizer chose for the goal."""

from __future__ import annotations

from typing import Any

from linter.numbers import num as fmt
from linter.sizing.search import Row
from linter.sizing.sizer import Sizing

COLUMNS = ("#", "GPUs", "nodes", "t/p/d", "ZeRO", "recompute", "mb", "days", "GB/GPU", "NIC/GPU", "leaf/spine/core",
           "storage TB", "read/write GB/s", "ckpt TB", "ckpt min", "IT kW", "racks", "money")


def _n(value: Any, digits: int = 1) -> str:
    if value is None:
        return "?"
    return fmt(value, digits)


def _money(row: Row) -> str:
    money = row.design.get("facts", {}).get("sizing_money", {})
    parts = []
    if money.get("capex") is not None:
        parts.append(f"{fmt(money['capex'], 0)} {money.get('currency') or ''} to buy".strip())
    if money.get("rent") is not None:
        parts.append(f"{fmt(money['rent'], 0)} {money.get('currency') or ''}/month to rent".strip())
    return "; ".join(parts) or "no price"


def days(row: Row) -> str:  # noqa: D401
    """The time fact's days; under a day, hours (the fact rounds days to one decimal)."""
    if row_hours(row):
        return f"{fmt(row.seconds / 3600, 1)} h"
    return _n(row.days)


def row_hours(row: Row) -> bool:
    return row.seconds < 86400


def cells(row: Row) -> list[str]:
    lay, d = row.layout, row.design
    sw = d.get("switches") or {}
    if not sw:
        fabric = "-" if row.nodes == 1 else "?"
    elif sw.get("single"):
        fabric = "1 switch"
    else:
        fabric = "/".join(str(sw.get(k, 0)) for k in ("leaf", "spine", "core"))
    st = d.get("storage") or {}
    racks = d.get("racks")
    return [
        str(row.rank), fmt(row.gpus, 0), fmt(row.nodes, 0), lay.degrees, str(lay.zero), lay.recompute,
        str(lay.mb), days(row), f"{_n(row.memory_gb)}/{_n(row.usable_gb)}",
        _n(d.get("nics_per_gpu")) if row.nodes > 1 else "-", fabric,
        _n(st.get("capacity_tb"), 0), f"{_n(st.get('read_gb_s'))}/{_n(st.get('write_gb_s'))}",
        _n(d.get("checkpoint_tb"), 2), _n(d.get("checkpoint_minutes")), _n(d.get("it_kw")),
        (f"{racks} ({d['per_rack']}/rack)" if racks else "?"), _money(row),
    ]


def render(result: Sizing) -> str:
    goal = result.goal
    out = [f"Goal: {goal.goal} {fmt(goal.params_b, 1)}B parameters on {fmt(goal.tokens_b, 2)}B tokens in "
           f"{fmt(goal.days, 2)} days, {goal.precision} with {goal.optimizer}"
           + (f", at most {fmt(goal.max_gpus, 0)} GPUs" if goal.max_gpus else "")
           + (f", racks of {fmt(goal.rack_kw, 1)} kW" if goal.rack_kw else "")
           + (f", facility {fmt(goal.facility_kw, 1)} kW" if goal.facility_kw else "") + "."]
    pol = result.policy
    out.append(f"Time to train: the review's layout-aware model (compute at {fmt(pol['compute_efficiency'] * 100, 1)}% of "
               "peak, recompute, pipeline bubble, tensor- and data-parallel traffic, restarts); memory with "
               f"{fmt(pol['gpu_memory_reserve_pct'], 0)}% reserved (policy gpu_memory_reserve_pct): the facts `hwlint check` uses.")
    if goal.chosen:
        out.append("Chosen where the goal did not say: " + "; ".join(goal.chosen) + ".")
    for cand in result.results:
        if not cand.rows:
            continue
        system = cand.system or f"assumed {cand.per_node}-GPU server"
        out.append("")
        out.append(f"{cand.gpu} ({system}): {len(cand.rows)} layout{'s' if len(cand.rows) != 1 else ''}, "
                   "first reviewed by the rule pack" + (f": {_review(cand.rows[0])}" if cand.rows[0].confirmed else ""))
        rows = [list(COLUMNS)] + [cells(r) for r in cand.rows]
        widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
        for r in rows:
            out.append("  " + "  ".join(c.rjust(w) if i not in (5, 17) else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        for r in cand.rows:
            parts = [f"{k.replace('_', ' ')} {_n(v, 2)}" for k, v in r.breakdown.items() if v]
            out.append(f"  #{r.rank} days: " + (", ".join(parts) or "-"))
        for note in cand.notes:
            out.append(f"  note: {note}")
    dropped = [(c.gpu, c.dropped) for c in result.results if not c.rows]
    if dropped or result.not_candidates:
        out.append("")
        out.append("Dropped:")
        for name, why in dropped:
            out.append(f"  {name}: {why}")
        for name, why in result.not_candidates:
            out.append(f"  {name}: {why}")
    out.append("")
    if result.best is None:
        out.append("No configuration meets it.")
        near = sorted((c for c in result.results if c.closest), key=lambda c: (c.needed or 0, c.gpu))
        if near:
            out.append(f"Closest: {near[0].closest}; what limits it: {near[0].dropped}.")
        out.append("Give more days, fewer tokens, a smaller model, or allow more GPUs (--max-gpus) or power.")
    else:
        best = result.best
        out.append(f"Best: {best.ident} ({fmt(best.gpus, 0)} x {best.gpu}, {days(best) if row_hours(best) else days(best) + ' days'}); "
                   "write it with --write cluster.hw.yaml (another row: --choose MODEL#N).")
    return "\n".join(out) + "\n"


def _review(row: Row) -> str:
    counts = row.design.get("review") or {}
    return f"no error, {counts.get('fail', 0)} warning/info, {counts.get('pending', 0)} to confirm"
