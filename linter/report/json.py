"""One JSON document per run, for scripts and dashboards: schemas/report.schema.json.

It names what judged the manifests (tool and rule-pack version, the rule-pack digest) and
what was judged (each manifest's sha256), the tier and why, and every result with every
status, not only failures, with the facts each rule read. Base-diff changes ride along
when `--base` was given. Strings are JSON-escaped by the encoder; non-finite numbers,
which JSON cannot carry, become strings.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Any

from linter import __version__
from linter.engine.changes import Changes, budget_figures
from linter.report.changes import as_json
from linter.engine.review import Review
from linter.engine.rules import RulePack, pack_digest

FORMAT_VERSION = 1


def finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def folders(pack: RulePack) -> list[str]:
    from linter.paths import data_dir

    builtin = data_dir("rules").resolve()
    return ["(built-in)" if f.resolve() == builtin else str(f) for f in pack.folders]


def dumps(document: Any) -> str:
    """A report document as indented UTF-8 JSON; what JSON cannot carry becomes text."""
    return json.dumps(finite(document), indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"


def citation(key: str, references: dict[str, dict[str, Any]]) -> dict[str, Any]:
    ref = references.get(key, {})
    return {"key": key, **{k: ref[k] for k in ("title", "publisher", "year", "section", "url") if ref.get(k) is not None}}


def manifest(review: Review, pack: RulePack, changes: Changes | None) -> dict[str, Any]:
    results = []
    for r in review.results:
        item = asdict(r)
        item["citations"] = [citation(k, pack.references) for k in r.citations]
        results.append(item)
    out = {
        "file": review.file,
        "name": review.name,
        "digest": f"sha256:{review.digest}" if review.digest else None,
        "tier": review.tier or None,
        "tier_reason": review.tier_reason or None,
        "unreadable": review.unreadable,
        "rule_errors": list(review.rule_errors),
        "counts": review.counts(),
        "budget": budget_figures(review),
        "results": results,
    }
    if changes is not None:
        out["changes"] = as_json(changes)
    return out


def document(reviews: list[Review], pack: RulePack, changes: list[Changes] | None = None) -> dict[str, Any]:
    by_file = {c.file: c for c in changes or []}
    totals = {status: sum(r.counts()[status] for r in reviews) for status in ("fail", "waived", "pending", "pass", "skipped")}
    return finite({
        "format": "hwlint-report",
        "format_version": FORMAT_VERSION,
        "tool": {"name": "hwlint", "version": __version__},
        "rule_pack": {
            "version": __version__,
            "digest": pack_digest(pack),
            "rules": len(pack.rules),
            "folders": folders(pack),
        },
        "summary": {"manifests": len(reviews), **totals},
        "manifests": [manifest(r, pack, by_file.get(r.file)) for r in reviews],
    })


def render(reviews: list[Review], pack: RulePack, changes: list[Changes] | None = None) -> str:
    return dumps(document(reviews, pack, changes))
