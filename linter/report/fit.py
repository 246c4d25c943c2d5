"""Fit the Markdown review into one GitHub comment (at most 65,536 characters).

Length is counted in UTF-16 code units, which is never less than characters (an emoji such
as 🟡 is one character but two units), and 256 are left for a bot's hidden marker.

When the full review is longer, it says so first (`shortened_note`: and where the whole
one is), and each manifest keeps its summary (verdict, counts, budget)
and as many of its findings as fit, errors first, then warnings, infos and waived ones;
what is left out (those findings, the to-confirm, not-applicable and confirmed lists, and
the assumption and catalog tables, the charts) is counted in a note under that manifest. The
number kept is the largest that fits, found by bisection. Only if the summaries alone are
too long is the text cut at a line, with a note saying how many manifests it covers. Every
length is measured on the finished text (citations numbered, the sources list added).
"""

from __future__ import annotations

from typing import Callable

from linter.record import replace
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
            f"({by_status}), nor the charts and the assumptions and catalog tables. Run `hwlint check --format markdown` "
            "on this manifest alone for the full review.\n")


def size(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class Fitting:
    """The reviews rendered within `limit`, taken a review at a time (`add`, then `close`
    gives the text); `finish` completes a candidate text (numbers its citations and adds the
    sources) and is what gets measured. Only what can still be part of the text is held, so a
    run of thousands of manifests keeps a few of them.

    `least(text)` is the fewest characters a rendered text can take once finished (its
    citations numbered); the sum of those over the reviews so far shows early that they cannot
    fit whole, nor their summaries, whatever comes after. Past that, only the summaries the
    final cut can reach (a limit's worth, and one more) are kept, and then nothing: each later
    review is only counted. Each review kept was rendered whole before its summary, and a
    summary cites nothing its whole review does not, so each citation's placeholder is the
    same as if every review had been rendered whole first.
    """

    def __init__(self, render: Render, limit: int, finish: Callable[[str], str] = lambda text: text,
                 least: Callable[[str], int] = size):
        self.render, self.limit, self.finish, self.least = render, limit, finish, least
        self.count = 0
        self.whole: list[str] | None = []  # the reviews rendered whole, while they may fit so
        self.whole_least = 0
        self.reviews: list[Review] | None = []  # while their summaries may fit (then `shorten` picks findings)
        self.briefs_least = 0
        self.briefs: list[str] = []  # the summaries the cut can reach
        self.briefs_size = 0
        self.briefs_done = False

    def add(self, review: Review) -> None:
        self.count += 1
        if self.whole is None and self.reviews is None and self.briefs_done:
            return
        gap = size(SEPARATOR) if self.count > 1 else 0
        whole = self.render(review, None)
        brief = _brief(review, self.render, [])
        if self.whole is not None:
            self.whole.append(whole)
            self.whole_least += gap + self.least(whole)
            if self.whole_least > self.limit:
                self.whole = None
        if self.reviews is not None:
            self.reviews.append(review)
            self.briefs_least += gap + self.least(brief)
            if self.briefs_least > self.limit:
                self.reviews = None
        if not self.briefs_done:
            self.briefs_done = self.briefs_size > self.limit  # past the limit already: this one is the last
            self.briefs.append(brief)
            self.briefs_size += gap + size(brief)

    def close(self) -> str:
        if self.whole is not None:
            full = self.finish(SEPARATOR.join(self.whole))
            if size(full) <= self.limit:
                return full
        lead = shortened_note(self.limit)  # a shortened text says so first, and where the whole one is

        def finish(text: str) -> str:
            return self.finish(lead + text)

        if self.reviews is not None:
            shortened = shorten(self.reviews, self.render, self.limit, finish)
            if shortened is not None:
                return shortened
        return _cut(SEPARATOR.join(self.briefs), self.count, self.limit, finish)


def shortened_note(limit: int) -> str:
    """What the top of a shortened review says: that it is, and where the whole one is."""
    from linter.report.escape import code
    from linter.report.location import artifact, workflow_run

    run, stored = workflow_run(), artifact()
    where = (f"the whole review is review.md in the artifact {code(stored)} of {run}" if stored else
             "`hwlint check --format markdown --max-chars 0` on the same manifests writes the whole review")
    return (f"> **This review is shortened** to fit {limit:,} characters: manifests below that say so show only "
            f"part of their findings; {where}.\n\n")


def _brief(review: Review, render: Render, shown: list[Result]) -> str:
    """The review with only `shown` of its results and no assumption or catalog tables, and a
    note counting what is left out."""
    ids = {id(r) for r in shown}
    omitted = [r for r in review.results if id(r) not in ids]
    brief = replace(review, policy={}, catalog=[], catalog_overrides=[])
    return render(brief, shown) + (_note(omitted, len(review.results)) if omitted else "")


def shorten(reviews: list[Review], render: Render, limit: int,
            finish: Callable[[str], str] = lambda text: text) -> str | None:
    """The reviews with every summary and as many failing and waived results as fit within
    `limit` once finished; None when the summaries alone do not fit."""
    # every failing or waived result, most important first, across all manifests
    ranked = sorted(
        ((RANK.get((r.status, r.severity), 3), i, n, r) for i, review in enumerate(reviews)
         for n, r in enumerate(review.results) if r.status in ("fail", "waived")),
        key=lambda item: item[:3],
    )

    def attempt(keep: int) -> str:
        kept = {id(item[3]) for item in ranked[:keep]}
        return SEPARATOR.join(_brief(review, render, [r for r in review.results if id(r) in kept]) for review in reviews)

    low, high = 0, len(ranked)  # attempt(low) is the best that fits, once it does
    best = finish(attempt(0))
    if size(best) > limit:
        return None
    while low < high:
        middle = (low + high + 1) // 2
        text = finish(attempt(middle))
        if size(text) <= limit:
            low, best = middle, text
        else:
            high = middle - 1
    return best


def _cut(text: str, manifests: int, limit: int, finish: Callable[[str], str] = lambda text: text) -> str:
    note = (f"\n\n> **Cut to fit a GitHub comment:** the summaries of all {manifests} manifests do not fit; "
            "review fewer manifests at a time to see their findings.\n")
    if size(note) > limit:
        return ""
    budget = limit
    while budget > 0:  # what `finish` adds (the sources of what is kept) shrinks the room left
        lines, used = [], size(note)
        for line in text.splitlines(keepends=True):
            used += size(line)
            if used > budget:
                break
            lines.append(line)
        done = finish("".join(lines) + note)
        if size(done) <= limit:
            return done
        budget -= size(done) - limit
    return note
