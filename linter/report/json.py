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
from dataclasses import fields
from typing import Any, Callable, Iterable

from linter import __version__
from linter.engine.changes import Changes, budget_figures
from linter.physics.facts import Unknown
from linter.report.changes import as_json
from linter.engine.review import Review
from linter.results import Result
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


# Stands in the document for the list that is streamed; a path or manifest cannot hold NUL.
ITEMS = "\0hwlint-streamed-items\0"


def stream_dumps(document: Any, items: Iterable[Any], write: Callable[[str], None]) -> None:
    """Write `dumps(document)`, where the one list `[ITEMS]` in `document` stands for `items`,
    one item at a time: the same bytes as dumping the whole document with the list filled
    in, without ever holding more than one item's text."""
    text = dumps(document)
    at = text.index(json.dumps(ITEMS))
    start = text.rindex("\n", 0, at) + 1
    indent, tail = text[start:at], text[at + len(json.dumps(ITEMS)):]
    written = False
    for item in items:
        chunk = json.dumps(finite(item), indent=2, ensure_ascii=False, allow_nan=False, default=str)
        write((",\n" if written else text[:start]) + indent + chunk.replace("\n", "\n" + indent))
        written = True
    if written:
        write(tail)
    else:  # an empty list is written `[]`, on one line
        write(text[:text.rindex("[", 0, at)] + "[]" + tail[tail.index("]") + 1:])


def citation(key: str, references: dict[str, dict[str, Any]]) -> dict[str, Any]:
    ref = references.get(key, {})
    return {"key": key, **{k: ref[k] for k in ("title", "publisher", "year", "section", "url") if ref.get(k) is not None}}


_RESULT_FIELDS = tuple(f.name for f in fields(Result))


MONEY = ("currency", "mode", "capex", "opex_per_month", "owned_opex_per_month", "electricity_per_month",
         "colocation_per_month", "support_per_month", "staff_per_month", "opex_counted", "rent_per_month",
         "payback_months", "pays_back", "order_date", "ready_date")


def money(review: Review) -> dict[str, Any] | None:
    """Capex, opex per month, rent for the same capacity, payback and delivery of the chosen
    option (null where unknown), and the table of every option; null before any facts."""
    procurement = review.facts.get("procurement") if review.facts else None
    if not procurement:
        return None
    out = {key: None if isinstance(procurement.get(key), Unknown) else procurement.get(key) for key in MONEY}
    out["options"] = list(review.options)
    return out


def manifest(review: Review, pack: RulePack, changes: Changes | None) -> dict[str, Any]:
    results = []
    for r in review.results:
        item = {name: getattr(r, name) for name in _RESULT_FIELDS}  # finite() copies what it writes
        item["citations"] = [citation(k, pack.references) for k in r.citations]
        results.append(item)
    out = {
        "file": review.file,
        "name": review.name,
        "digest": f"sha256:{review.digest}" if review.digest else None,
        "tier": review.tier or None,
        "tier_reason": review.tier_reason or None,
        "tier_inferred": review.tier_inferred or None,
        "unreadable": review.unreadable,
        "rule_errors": list(review.rule_errors),
        "counts": review.counts(),
        "budget": budget_figures(review),
        "money": money(review),
        "catalog_overrides": list(review.catalog_overrides),
        "results": results,
        "deselected": list(review.deselected),
        "config": review.config or None,
    }
    if changes is not None:
        out["changes"] = as_json(changes)
    return out


def document(reviews: list[Review], pack: RulePack, changes: list[Changes] | None = None,
             manifests: list[Any] | None = None) -> dict[str, Any]:
    """The report; `manifests` stands in for the manifests' entries when given (streaming)."""
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
        "manifests": manifests if manifests is not None else [manifest(r, pack, by_file.get(r.file)) for r in reviews],
    })


def stream(reviews: list[Review], pack: RulePack, write: Callable[[str], None], changes: list[Changes] | None = None) -> None:
    """The report, written one manifest at a time: memory stays that of one manifest's entry."""
    by_file = {c.file: c for c in changes or []}
    entries = (manifest(r, pack, by_file.get(r.file)) for r in reviews)
    stream_dumps(document(reviews, pack, changes, manifests=[ITEMS]), entries, write)


def render(reviews: list[Review], pack: RulePack, changes: list[Changes] | None = None) -> str:
    parts: list[str] = []
    stream(reviews, pack, parts.append, changes)
    return "".join(parts)
