"""Fit the Markdown review into one GitHub comment (at most 65,536 characters).

Length is counted in UTF-16 code units, which is never less than characters (an emoji such
as 🟡 is one character but two units), and 256 are left for a bot's hidden marker.

When the full review is longer, each manifest keeps its summary (verdict, counts, budget)
and as many of its findings as fit, errors first, then warnings, infos and waived ones;
what is left out (those findings, the to-confirm, not-applicable and confirmed lists, and
the assumption and catalog tables) is counted in a note under that manifest. The number kept is the largest that fits, found
by bisection. Only if the summaries alone are too long is the text cut at a line, with a
note saying how many manifests it covers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from linter.results import Result
from linter.engine.review import Review

GITHUB_LIMIT = 65_536  # GitHub's limit on the body of one comment, in characters
MARKER_RESERVE = 256  # room for the hidden marker a bot puts before the review to find its comment again
COMMENT_LIMIT = GITHUB_LIMIT - MARKER_RESERVE
SEPARATOR = "\n---\n\n"
WORDS = (("fail", "failing"), ("waived", "waived"), ("pending", "to confirm"), ("skipped", "not applicable"), ("pass", "confirmed"))
RANK = {("fail", "error"): 0, ("fail", "warning"): 1, ("fail", "info"): 2}

Render = Callable[[Review, "list[Result] | None"], str]


def _note(omitted: list[Result], total: int) -> str:
    by_status = ", ".join(f"{n} {word}" for status, word in WORDS if (n := sum(r.status == status for r in omitted)))
    return (f"\n> **Shortened to fit a GitHub comment:** {len(omitted)} of {total} results are not shown "
            f"({by_status}), nor the assumptions and catalog tables. Run `hwlint check --format markdown` "
            "on this manifest alone for the full review.\n")


def size(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def fit(reviews: list[Review], render: Render, limit: int = COMMENT_LIMIT) -> str:
    full = SEPARATOR.join(render(r, None) for r in reviews)
    if size(full) <= limit:
        return full
    # every failing or waived result, most important first, across all manifests
    ranked = sorted(
        ((RANK.get((r.status, r.severity), 3), i, n, r) for i, review in enumerate(reviews)
         for n, r in enumerate(review.results) if r.status in ("fail", "waived")),
        key=lambda item: item[:3],
    )

    def attempt(keep: int) -> str:
        kept = {id(item[3]) for item in ranked[:keep]}
        parts = []
        for review in reviews:
            shown = [r for r in review.results if id(r) in kept]
            omitted = [r for r in review.results if id(r) not in kept]
            brief = replace(review, policy={}, catalog=[], catalog_overrides=[])  # the assumption and catalog tables go too
            parts.append(render(brief, shown) + (_note(omitted, len(review.results)) if omitted else ""))
        return SEPARATOR.join(parts)

    low, high = 0, len(ranked)  # attempt(low) is the best that fits, once it does
    best = attempt(0)
    if size(best) > limit:
        return _cut(best, len(reviews), limit)
    while low < high:
        middle = (low + high + 1) // 2
        text = attempt(middle)
        if size(text) <= limit:
            low, best = middle, text
        else:
            high = middle - 1
    return best


def _cut(text: str, manifests: int, limit: int) -> str:
    note = (f"\n\n> **Cut to fit a GitHub comment:** the summaries of all {manifests} manifests do not fit; "
            "review fewer manifests at a time to see their findings.\n")
    lines, used = [], size(note)
    for line in text.splitlines(keepends=True):
        used += size(line)
        if used > limit:
            break
        lines.append(line)
    return "".join(lines) + note if size(note) <= limit else ""
