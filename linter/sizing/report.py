"""The sizer's outputs: the ranked table (text) or the same rows as JSON, and the manifest
of one row."""

from __future__ import annotations

import json
from typing import Any

from linter.sizing.emit import manifest_text
from linter.sizing.search import Row
from linter.sizing.sizer import RANKING, Sizing
from linter.sizing.table import render as render_text


def _row(row: Row) -> dict[str, Any]:
    d = row.design
    return {
        "id": row.ident, "gpu": row.gpu, "system": row.system, "gpus": row.gpus, "nodes": row.nodes,
        "tensor": row.layout.t, "pipeline": row.layout.p, "data": row.layout.d, "zero_stage": row.layout.zero,
        "activation_recompute": row.layout.recompute, "micro_batch_size": row.layout.mb,
        "pipeline_chunks": row.layout.v, "context": row.layout.c, "expert": row.layout.e,
        "days": row.days, "days_breakdown": row.breakdown, "memory_gb_per_gpu": row.memory_gb, "usable_gb_per_gpu": row.usable_gb,
        "nics_per_gpu": d.get("nics_per_gpu"), "switches": d.get("switches"), "switch_model": d.get("switch_model"),
        "storage": d.get("storage"), "checkpoint_tb": d.get("checkpoint_tb"), "checkpoint_write_minutes": d.get("checkpoint_minutes"),
        "checkpoint_interval_minutes": d.get("interval_minutes"), "local_nvme": d.get("local_nvme"),
        "it_kw": d.get("it_kw"), "racks": d.get("racks"), "nodes_per_rack": d.get("per_rack"),
        "money": d.get("facts", {}).get("sizing_money"), "reviewed": row.confirmed, "review": d.get("review"),
    }


def render(fmt: str, result: Sizing, every: bool = False) -> str:
    if fmt == "text":
        return render_text(result, every)
    out = {
        "goal": {k: v for k, v in vars(result.goal).items() if k not in ("draft", "prices")},
        "models": [{"gpu": c.gpu, "system": c.system, "rows": [_row(r) for r in c.rows], "dropped": c.dropped or None,
                    "closest": c.closest or None, "notes": c.notes} for c in result.results],
        "not_candidates": [{"gpu": n, "why": w} for n, w in result.not_candidates],
        "best": result.best.ident if result.best else None,
        "ranking": RANKING,
        "ranked": [r.ident for r in result.ranked],
    }
    return json.dumps(out, indent=2, sort_keys=False) + "\n"


def manifest(row: Row) -> str:
    return manifest_text(row)
