"""Plain text: one line per finding, `path:line:col: ID severity message`, then a summary."""

from __future__ import annotations

from linter.results import one_line
from linter.engine.review import Review


def summary(review: Review) -> str:
    c = review.counts()
    failing = [r for r in review.results if r.status == "fail"]
    by_severity = ", ".join(
        f"{n} {s}" for s in ("error", "warning", "info") if (n := sum(r.severity == s for r in failing))
    )
    parts = [f"{c['fail']} failing" + (f" ({by_severity})" if by_severity else "")]
    parts += [f"{c[k]} {word}" for k, word in (("waived", "waived"), ("pending", "to confirm"), ("pass", "passed"), ("skipped", "not applicable")) if c[k]]
    tier = f"; tier {review.tier} ({review.tier_reason})" if review.tier else ""
    return f"{review.file}: " + ", ".join(parts) + tier


def render(reviews: list[Review], verbose: bool = False) -> str:
    lines = []
    for review in reviews:
        for r in review.results:
            if r.status == "fail":
                fix = f" Fix: {one_line(r.fix)}" if r.fix and verbose else ""
                lines.append(f"{r.file}:{r.line}:{r.column}: {r.rule_id} {r.severity} {one_line(r.message)}{fix}")
            elif r.status == "waived" or (verbose and r.status == "pending"):  # a waiver is always shown
                lines.append(f"{r.file}:{r.line}:{r.column}: {r.rule_id} {r.status} {one_line(r.title)}: {one_line(r.reason)}")
        lines.extend(one_line(e) for e in review.rule_errors)
    lines.extend(summary(review) for review in reviews)
    return "\n".join(lines) + "\n"
