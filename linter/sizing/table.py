"""The sizer's answer as text: a ranked table per GPU model, why the others were dropped, and
what the sizer chose for the goal."""

from __future__ import annotations

from typing import Any

import textwrap

from linter.numbers import num as fmt
from linter.sizing.search import Row
from linter.sizing.sizer import RANKING, Sizing, overall_key

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


WIDTH = 100  # the default output fits a terminal of this many columns
COMPACT = ("#", "GPU", "GPUs", "t/p/d", "ZeRO", "recompute", "days", "GB/GPU", "IT kW", "money")


def _wrap(text: str, indent: str = "", first: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first or indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


def _short_money(row: Row) -> str:
    money = row.design.get("facts", {}).get("sizing_money", {})
    cur = money.get("currency") or ""
    parts = [f"{_compact(money[k])} {cur}{suffix}".strip() for k, suffix in (("capex", ""), ("rent", "/mo"))
             if money.get(k) is not None]
    return ", ".join(parts) or "-"


def _compact(value: float) -> str:
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{fmt(value / size, 1)}{unit}"
    return fmt(value, 0)


def _table(rows: list[list[str]], left: tuple[int, ...]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for gap in ("  ", " "):
        lines = [gap.join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                 for r in rows]
        if max(len(line) for line in lines) <= WIDTH:
            break
    return lines


def _ranks(result: Sizing) -> list[tuple[str, Row]]:
    """The best row of each GPU model, best first, with its rank; equal keys share a rank (=)."""
    seen, firsts = set(), []
    for row in result.ranked:
        if row.gpu not in seen:
            seen.add(row.gpu)
            firsts.append(row)
    out, previous, rank = [], None, 0
    keys = [overall_key(r, result.goal) for r in firsts]
    for i, (row, key) in enumerate(zip(firsts, keys)):
        tied = key == previous or (i + 1 < len(keys) and keys[i + 1] == key)
        if key != previous:
            rank = i + 1
        out.append((f"{'=' if tied else ''}{rank}", row))
        previous = key
    return out


def render(result: Sizing, every: bool = False) -> str:
    goal = result.goal
    out = _wrap(f"Goal: {goal.goal} {fmt(goal.params_b, 1)}B parameters on {fmt(goal.tokens_b, 2)}B tokens in "
                f"{fmt(goal.days, 2)} days, {goal.precision} with {goal.optimizer}"
                + (f", at most {fmt(goal.max_gpus, 0)} GPUs" if goal.max_gpus else "")
                + (f", racks of {fmt(goal.rack_kw, 1)} kW" if goal.rack_kw else "")
                + (f", facility {fmt(goal.facility_kw, 1)} kW" if goal.facility_kw else "") + ".")
    pol = result.policy
    out += _wrap(f"Time to train: the review's layout-aware model (compute at the policy's efficiency for the GPU's "
                 f"generation: compute_efficiency {fmt(pol['compute_efficiency'] * 100, 1)}%, Hopper "
                 f"{fmt(pol['compute_efficiency_hopper'] * 100, 1)}%; recompute, pipeline bubble, tensor-, context- and "
                 "data-parallel traffic after its overlap with the backward pass, restarts), sized to finish "
                 f"{fmt(pol['schedule_margin_pct'], 0)}% before the deadline (schedule_margin_pct); memory with "
                 f"{fmt(pol['gpu_memory_reserve_pct'], 0)}% reserved: the facts `hwlint check` uses.")
    out += _wrap(f"Ranked by: {RANKING}.")
    if goal.chosen:
        out.append("Chosen where the goal did not say:")
        for item in goal.chosen:
            out += _wrap(item, "    ", "  - ")
    if every:
        out += _every_table(result)
    elif result.ranked:
        ranks = _ranks(result)
        priced = any(_short_money(r) != "-" for _, r in ranks)
        head = [c for c in COMPACT if c != "money" or priced]
        rows = [head] + [[rank, r.gpu, fmt(r.gpus, 0), r.layout.degrees + (f" mb{r.layout.mb}" if r.layout.mb > 1 else ""),
                          str(r.layout.zero), r.layout.recompute, days(r), f"{_n(r.memory_gb)}/{_n(r.usable_gb)}",
                          _n(r.design.get("it_kw"))] + ([_short_money(r)] if priced else []) for rank, r in ranks]
        out.append("")
        out.append("The best layout of each GPU model (--all: every layout, with its network, storage and racks):")
        out += _table(rows, (1, 5))
        best = result.best
        parts = [f"{k.replace('_', ' ')} {_n(v, 2)}" for k, v in best.breakdown.items() if v]
        out += _wrap(f"#1 {best.ident} days: " + (", ".join(parts) or "-"), "  ", "  ")
        c = cells(best)
        fabric = "" if c[10] == "-" else f"network {c[10]}" + ("" if "switch" in c[10] else " leaf/spine/core") + ", "
        racks = f"racks {c[16]}" if best.design.get("racks") else "racks: give --rack-kw"
        every = best.design.get("interval_minutes")
        every = f" (a checkpoint every {_n(every)} minutes, chosen as above)" if every else ""
        out += _wrap(f"#1 {fabric}storage {c[11]} TB at {c[12]} GB/s read/write{every}, {racks}; "
                     + ("review: " + _review(best) if best.confirmed else "not reviewed"), "  ", "  ")
        nvme = best.design.get("local_nvme")
        if nvme:
            out += _wrap(f"#1 local NVMe per node: {_n(nvme['usable_tb'], 2)} TB usable for {_n(nvme['offload_tb'], 3)} TB of "
                         f"states offloaded to it (ZeRO-Infinity, Rajbhandari et al. 2021) + {_n(nvme['staging_tb'], 3)} TB "
                         "of checkpoint staging (MEM005)", "  ", "  ")
    dropped = [(c.gpu, c.dropped) for c in result.results if not c.rows]
    if dropped or result.not_candidates:
        out.append("")
        out.append("Dropped:")
        for name, why in dropped + list(result.not_candidates):
            out += _wrap(f"{name}: {why}", "    ", "  ")
    out.append("")
    if result.best is None:
        out.append("No configuration meets it.")
        near = sorted((c for c in result.results if c.closest), key=lambda c: (c.needed or 0, c.gpu))
        if near:
            out += _wrap(f"Closest: {near[0].closest}; what limits it: {near[0].dropped}.")
        out += _wrap("Give more days, fewer tokens, a smaller model, or allow more GPUs (--max-gpus) or power.")
    else:
        best = result.best
        ties = [r.ident for rank, r in _ranks(result) if rank.startswith("=") and r is not best
                and overall_key(r, goal) == overall_key(best, goal)]
        out += _wrap(f"Best: {best.ident} ({fmt(best.gpus, 0)} x {best.gpu}, {days(best) if row_hours(best) else days(best) + ' days'})"
                     + (f", tied with {', '.join(ties)}" if ties else "")
                     + "; write it with --write cluster.hw.yaml (another row: --choose MODEL#N).")
    return "\n".join(out) + "\n"


def _every_table(result: Sizing) -> list[str]:
    """Every GPU model's layouts with their network, storage, racks and money (wider than WIDTH)."""
    out = []
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
    return out


def _review(row: Row) -> str:
    counts = row.design.get("review") or {}
    return f"no error, {counts.get('fail', 0)} warning/info, {counts.get('pending', 0)} to confirm"
