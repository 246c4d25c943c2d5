"""The Markdown review, rendered from templates/review.md.j2.

Every value from a manifest is escaped on output (the environment's `finalize`), so a pool
named `<script>` or `[x](javascript:...)` prints as text. Template-authored fragments that
must stay Markdown are wrapped in `Trusted`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable

from linter import __version__
from linter.numbers import num
from linter.paths import data_dir
from linter.results import Result, layer_name, layer_rank
from linter.manifest.config import described
from linter.engine.review import Review
from linter.report import budget, charts, fit, procurement
from linter.report import changes as diff
from linter.report.escape import human, markdown


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
    """The citations of one whole report, numbered once however many manifests it holds.

    While the report is built, a citation is a placeholder `[^#i]` (i: the key's index here),
    so that text rendered and then left out to fit a comment uses no number. `number` turns
    the finished text's placeholders into 1, 2, ... in the order they first appear and adds
    one Sources list with exactly one definition per number used. Nothing from a manifest can
    forge a placeholder: the escaping writes every `[` from a manifest as `\\[`.
    """

    PLACEHOLDER = re.compile(r"(?<!\\)\[\^#(\d+)\]")

    def __init__(self, references: dict[str, dict[str, Any]]):
        self.references = references
        self.keys: list[str] = []
        self.index: dict[str, int] = {}  # key -> its place in keys
        self.order: dict[int, int] = {}  # placeholder -> number, for a report numbered piece by piece

    def marks(self, keys: list[str]) -> Trusted:
        out = []
        for key in keys:
            if key not in self.index:
                self.index[key] = len(self.keys)
                self.keys.append(key)
            out.append(f"[^#{self.index[key]}]")
        return Trusted("".join(out))

    def number(self, text: str) -> str:
        """`text` with its citations numbered, and the Sources list after it."""
        order: dict[int, int] = {}
        text = self._numbered(text, order)
        return text + self._sources(order) if order else text

    def numbered(self, piece: str) -> str:
        """The next piece of a report written as it comes, its citations numbered on from the
        pieces before; `sources()` ends the report."""
        return self._numbered(piece, self.order)

    def sources(self) -> str:
        """The Sources list of the pieces `numbered` so far (nothing if they cite nothing)."""
        return self._sources(self.order) if self.order else ""

    def least(self, text: str) -> int:
        """The fewest characters `text` can take once numbered: a placeholder becomes at
        least `[^1]`, and the rest only grows (escaping, the Sources list)."""
        return fit.size(text) - sum(len(m.group(0)) - 4 for m in self.PLACEHOLDER.finditer(text))

    def _numbered(self, text: str, order: dict[int, int]) -> str:
        def one(match: re.Match) -> str:
            index = int(match.group(1))
            return f"[^{order.setdefault(index, len(order) + 1)}]"

        return self.PLACEHOLDER.sub(one, text)

    def _sources(self, order: dict[int, int]) -> str:
        entries = [(n, self.references.get(self.keys[i], {"title": self.keys[i]})) for i, n in order.items()]
        return environment().get_template("sources.md.j2").render(entries=entries)


def rank(review: Review) -> int:
    """How a review stands, worst first: 0 cannot be reviewed or fails an error rule, 1
    warnings or infos only, 2 nothing failing but something to confirm (or deselected), 3 ready."""
    if review.unreadable or review.file_findings or any(r.status == "fail" and r.severity == "error" for r in review.results):
        return 0
    if any(r.status == "fail" for r in review.results):
        return 1
    if review.deselected or any(r.status == "pending" for r in review.results):
        return 2
    return 3


def verdict(review: Review) -> str:
    standing = rank(review)
    if standing == 0:
        if review.unreadable or review.file_findings:
            return "❌ cannot be reviewed: fix the manifest file first"
        return "❌ changes needed"
    if standing == 1:
        return "⚠️ acceptable with warnings"
    if standing == 2:
        if any(r.status == "pending" for r in review.results):
            return "🟡 no failures; items still to confirm"
        return "🟡 no failures among the rules that ran; some rules were deselected"
    return "✅ ready for sign-off"


def grouped(results: list[Result]) -> list[tuple[str, list[Result]]]:
    groups: dict[str, list[Result]] = {}
    for r in sorted(results, key=lambda r: (layer_rank(r.layer), ("error", "warning", "info").index(r.severity), r.rule_id)):
        groups.setdefault(r.layer, []).append(r)
    return [(layer_name(layer), items) for layer, items in groups.items()]


def render_one(review: Review, references: dict[str, dict[str, Any]], rule_count: int,
               shown: list[Result] | None = None, notes: Footnotes | None = None) -> str:
    """The review of one manifest; `shown` (see fit.py) limits it to those results. Its
    citations are `notes` placeholders: `Footnotes.number` finishes the whole report."""
    notes = notes if notes is not None else Footnotes(references)
    kept = None if shown is None else {id(r) for r in shown}
    by_status = lambda s: [r for r in review.results if r.status == s and (kept is None or id(r) in kept)]  # noqa: E731
    return environment().get_template("review.md.j2").render(
        review=review,
        version=__version__,
        rule_count=rule_count,
        verdict=Trusted(verdict(review)),
        config=described(review.config_files, short=True) if review.digest or review.config_files else "",
        counts=review.counts(),
        budget=budget.rows(review),
        charts=[] if shown is not None else [(c.title, Trusted(c.mermaid), c.caption, c.notes) for c in charts.charts(review)],
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


class Stream:
    """The Markdown review written a manifest at a time (`add`, then `close`). Without a limit
    (`max_chars` 0) each review goes out as it comes, numbered on from those before, and the
    Sources list at the end; within one (the default, a GitHub comment) `fit.Fitting` keeps
    what can still be shown, and `close` writes it. Either way the text is what `render`
    gives, and a run of thousands of manifests holds a few of them at most."""

    def __init__(self, write: Callable[[str], None], references: dict[str, dict[str, Any]] | None = None,
                 rule_count: int = 0, changes: list[Any] | None = None, max_chars: int | None = None):
        self.write, self.references, self.rule_count = write, references or {}, rule_count
        self.notes = Footnotes(self.references)
        self.by_file = {c.file: c for c in changes or []}
        limit = fit.COMMENT_LIMIT if max_chars is None else max_chars
        self.fitting = fit.Fitting(self.one, limit, self.finish, self.notes.least) if limit else None
        self.count = 0

    def one(self, review: Review, shown: list[Result] | None) -> str:
        """One review, led by what its change does when --base is given."""
        change = self.by_file.get(review.file)
        lead = diff.render_markdown([change]) if change is not None else ""
        return lead + render_one(review, self.references, self.rule_count, shown, self.notes)

    def finish(self, text: str) -> str:
        return human(self.notes.number(text))

    def add(self, review: Review) -> None:
        self.count += 1
        if self.fitting is not None:
            self.fitting.add(review)
            return
        piece = (fit.SEPARATOR if self.count > 1 else "") + self.one(review, None)
        self.write(human(self.notes.numbered(piece)))

    def close(self) -> None:
        text = self.fitting.close() if self.fitting is not None else human(self.notes.sources())
        if text:
            self.write(text)


def render(reviews: list[Review], references: dict[str, dict[str, Any]] | None = None, rule_count: int = 0,
           changes: list[Any] | None = None, max_chars: int | None = None) -> str:
    """All reviews, each led by what its change does when `changes` (--base) is given, with one
    list of sources; cut to at most `max_chars` characters (default one GitHub comment, 0 no
    limit) as fit.py explains."""
    return written(Stream, reviews, references, rule_count, changes, max_chars)


def written(stream: Any, reviews: list[Review], *options: Any) -> str:
    """The whole text a report's Stream class writes of `reviews` (`options`: its arguments
    after `write`)."""
    parts: list[str] = []
    report = stream(parts.append, *options)
    for review in reviews:
        report.add(review)
    report.close()
    return "".join(parts)
