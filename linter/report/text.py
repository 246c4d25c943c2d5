"""Plain text: one line per finding, `path:line:col: ID severity message`, then a summary.
A file name is shown with its line breaks escaped, so it cannot start a line of its own."""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Callable

from linter.results import one_line
from linter.manifest.config import described
from linter.engine.review import Review
from linter.report.escape import path as escaped


def summary(review: Review) -> str:
    c = review.counts()
    failing = [r for r in review.results if r.status == "fail"]
    by_severity = ", ".join(
        f"{n} {s}" for s in ("error", "warning", "info") if (n := sum(r.severity == s for r in failing))
    )
    parts = [f"{c['fail']} failing" + (f" ({by_severity})" if by_severity else "")]
    parts += [f"{c[k]} {word}" for k, word in (("waived", "waived"), ("pending", "to confirm"), ("pass", "passed"), ("skipped", "not applicable")) if c[k]]
    tier = f"; tier {review.tier} ({review.tier_reason})" if review.tier else ""
    return f"{escaped(review.file)}: " + ", ".join(parts) + tier + deselected(review) + configured(review)


def configured(review: Review) -> str:
    """'; config .hwlint.yaml (sha256:0123456789ab)' or '; no config', for the summary line."""
    return "; " + described(review.config_files, short=True) if review.digest or review.config_files else ""


def deselection(review: Review) -> str:
    """How rules were deselected, in words: "--ignore PWR: PWR001, PWR002; not selected by
    --select GPU (44 rules)"; the ids are listed where there are a few."""
    by_how: dict[str, list[str]] = {}
    for d in review.deselected:
        by_how.setdefault(d["how"], []).append(d["rule_id"])
    return "; ".join(f"{how}: {', '.join(ids)}" if len(ids) <= 6 else f"{how} ({len(ids)} rules)"
                     for how, ids in by_how.items())


def deselected(review: Review) -> str:
    """'; 3 deselected (--ignore PWR: PWR001, PWR002, PWR003)' for the summary line."""
    return f"; {len(review.deselected)} deselected ({deselection(review)})" if review.deselected else ""


class Stream:
    """The text report written a manifest at a time (`add`, then `close`): each manifest's
    findings as it comes; what comes after all of them (the statistics, the summaries) is kept
    as counts and one line per file, so a run of thousands of files never holds their reviews.
    Findings in line and column order within a file; quiet: the failing findings only;
    statistics: a count per rule instead of the findings."""

    def __init__(self, write: Callable[[str], None], verbose: bool = False, quiet: bool = False, statistics: bool = False):
        self.write, self.verbose, self.quiet, self.statistics = write, verbose, quiet, statistics
        self.summaries: list[str] = []
        self.counts: dict[str, list] = {}  # rule id -> [failures, severity, title], in first-seen order

    def add(self, review: Review) -> None:
        verbose, quiet = self.verbose, self.quiet
        lines = []
        shown = [r for r in review.results if r.status == "fail" or (not quiet and (r.status == "waived" or (verbose and r.status == "pending")))]
        for r in sorted(shown, key=lambda r: (r.line, r.column, r.rule_id)):
            if self.statistics:
                continue
            if r.status == "fail":
                fix = f" Fix: {one_line(r.fix)}" if r.fix and verbose else ""
                lines.append(f"{escaped(r.file)}:{r.line}:{r.column}: {r.rule_id} {r.severity} {one_line(r.message)}{fix}")
            else:  # a waiver is always shown
                lines.append(f"{escaped(r.file)}:{r.line}:{r.column}: {r.rule_id} {r.status} {one_line(r.title)}: {one_line(r.reason)}")
        lines.extend(one_line(e) for e in review.rule_errors)
        if self.statistics:
            for r in review.results:
                if r.status == "fail":
                    self.counts.setdefault(r.rule_id, [0, r.severity, r.title])[0] += 1
        if not quiet:
            self.summaries.append(summary(review))
        if lines:
            self.write("\n".join(lines) + "\n")

    def close(self) -> None:
        lines = _statistics(self.counts) if self.statistics else []
        lines += self.summaries
        if lines:
            self.write("\n".join(lines) + "\n")


def render(reviews: list[Review], verbose: bool = False, quiet: bool = False, statistics: bool = False) -> str:
    """Findings in file order, then line and column order; then one summary per file.
    quiet: the failing findings only. statistics: a count per rule instead of the findings."""
    parts: list[str] = []
    report = Stream(parts.append, verbose, quiet, statistics)
    for review in reviews:
        report.add(review)
    report.close()
    return "".join(parts)


def _statistics(counts: dict[str, list]) -> list[str]:
    """`count<TAB>ID<TAB>severity<TAB>title` as ruff --statistics writes it: most frequent
    first (then by id), the counts right-aligned, fields apart by tabs for `cut` and `sort`."""
    ordered = sorted(counts.items(), key=lambda item: (-item[1][0], item[0]))
    width = max((len(str(n)) for _, (n, _, _) in ordered), default=1)
    return [f"{n:>{width}}\t{rule_id}\t{severity}\t{one_line(title)}" for rule_id, (n, severity, title) in ordered]


_FINDING = re.compile(r"^(?P<where>[^\n]*?:\d+:\d+:) (?P<id>[A-Z]{2,6}[0-9]{0,3}) (?P<word>error|warning|info|waived|pending) ", re.M)
_SUMMARY = re.compile(r"(?P<n>\b[1-9][0-9]* failing\b)")
_COLOURS = {"error": "red", "warning": "yellow", "info": "blue", "waived": "cyan", "pending": "magenta"}


def paint(text: str) -> str:
    """The text report with colour for a terminal: the place bold, the rule id, the severity
    coloured. Only ANSI styles are added; the words stay the same."""
    import click

    def finding(m: re.Match) -> str:
        return (f"{click.style(m['where'], bold=True)} {click.style(m['id'], bold=True)} "
                f"{click.style(m['word'], fg=_COLOURS[m['word']], bold=True if m['word'] == 'error' else None)} ")

    text = _FINDING.sub(finding, text)
    return _SUMMARY.sub(lambda m: click.style(m["n"], fg="red", bold=True), text)
