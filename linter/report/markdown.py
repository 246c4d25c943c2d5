"""The Markdown review, rendered from templates/review.md.j2.

Every value from a manifest is escaped on output (the environment's `finalize`), so a pool
named `<script>` or `[x](javascript:...)` prints as text. Template-authored fragments that
must stay Markdown are wrapped in `Trusted`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from linter import __version__
from linter.numbers import num
from linter.paths import data_dir
from linter.results import Result, layer_name, layer_rank
from linter.engine.review import Review
from linter.report import budget, fit, procurement
from linter.report.escape import markdown


class Trusted(str):
    """Markdown written by hwlint itself; not escaped."""


@lru_cache(maxsize=1)
def environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(str(data_dir("templates"))),
        undefined=StrictUndefined,
        finalize=lambda v: v if isinstance(v, (Trusted, int, float)) else markdown(v),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["num"] = num
    env.filters["trusted"] = Trusted
    env.filters["shown"] = shown
    return env


def shown(value: Any, limit: int = 80) -> str:
    """A manifest or catalog value in a table cell: numbers as `num` writes them, lists and
    mappings compact and cut at `limit` characters."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return num(value)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        text = f"{len(value)} {'entry' if len(value) == 1 else 'entries'}: " + "; ".join(shown(v, limit) for v in value)
    elif isinstance(value, list):
        text = "[" + ", ".join(shown(v, limit) for v in value) + "]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k}: {shown(v, limit)}" for k, v in value.items()) + "}"
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


ICONS = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


class Footnotes:
    """Numbers citations in order of first use."""

    def __init__(self, references: dict[str, dict[str, Any]]):
        self.references = references
        self.order: list[str] = []

    def marks(self, keys: list[str]) -> Trusted:
        out = []
        for key in keys:
            if key not in self.order:
                self.order.append(key)
            out.append(f"[^{self.order.index(key) + 1}]")
        return Trusted("".join(out))

    def entries(self) -> list[tuple[int, dict[str, Any]]]:
        return [(i + 1, self.references.get(k, {"title": k})) for i, k in enumerate(self.order)]


def verdict(review: Review) -> str:
    if review.unreadable or review.file_findings:
        return "❌ cannot be reviewed: fix the manifest file first"
    failing = [r for r in review.results if r.status == "fail"]
    if any(r.severity == "error" for r in failing):
        return "❌ changes needed"
    if failing:
        return "⚠️ acceptable with warnings"
    if any(r.status == "pending" for r in review.results):
        return "🟡 no failures; items still to confirm"
    if review.deselected:
        return "🟡 no failures among the rules that ran; some rules were deselected"
    return "✅ ready for sign-off"


def grouped(results: list[Result]) -> list[tuple[str, list[Result]]]:
    groups: dict[str, list[Result]] = {}
    for r in sorted(results, key=lambda r: (layer_rank(r.layer), ("error", "warning", "info").index(r.severity), r.rule_id)):
        groups.setdefault(r.layer, []).append(r)
    return [(layer_name(layer), items) for layer, items in groups.items()]


def render_one(review: Review, references: dict[str, dict[str, Any]], rule_count: int,
               shown: list[Result] | None = None) -> str:
    """The review of one manifest; `shown` (see fit.py) limits it to those results."""
    notes = Footnotes(references)
    kept = None if shown is None else {id(r) for r in shown}
    by_status = lambda s: [r for r in review.results if r.status == s and (kept is None or id(r) in kept)]  # noqa: E731
    return environment().get_template("review.md.j2").render(
        review=review,
        version=__version__,
        rule_count=rule_count,
        verdict=Trusted(verdict(review)),
        counts=review.counts(),
        budget=budget.rows(review),
        procurement=procurement.section(review, brief=shown is not None) if review.facts else None,
        order_source=procurement.ORDER_SOURCE,
        order_title=references.get(procurement.ORDER_SOURCE, {}).get("title", procurement.ORDER_SOURCE),
        findings=grouped(by_status("fail") + by_status("waived")),
        pending=by_status("pending"),
        skipped=by_status("skipped"),
        passed=by_status("pass"),
        icons=ICONS,
        notes=notes,
    )


def render(reviews: list[Review], references: dict[str, dict[str, Any]] | None = None, rule_count: int = 0,
           limit: int = fit.COMMENT_LIMIT) -> str:
    """All reviews, cut to at most `limit` characters (a GitHub comment) as fit.py explains."""
    return fit.fit(reviews, lambda review, shown: render_one(review, references or {}, rule_count, shown), limit)
