"""The pull-request comment (`--format comment`): one GitHub comment for any number of
manifests, never longer than GitHub's 65,536 characters (counted as GitHub counts them, in
UTF-16 code units: `fit.size`, measured on the text exactly as it is written out).

In order:

1. the hidden marker `<!-- hwlint-review -->` the workflow finds its comment by;
2. the overall verdict (the worst manifest's) and how many manifests have which verdict,
   then the configs in effect (each chain of config files with their sha256, or "no config",
   and how many manifests each governed; at most CONFIGS_LISTED of them, then a count);
3. a verdict table, one row per manifest: file, verdict, errors, warnings, to confirm, what
   changed against the base (with `--base`) and where its details are. Failing manifests come
   first. With `--base`, manifests identical to their base version are no rows but one line
   under the table ("12 manifests unchanged: a, b, ... and 4 more"). Should the rows of
   thousands of manifests not fit in half the comment, a last row counts the rest;
4. the full review of as many changed manifests as fit, failing ones first, each led by what
   its change does; the first that does not fit whole keeps its summary and as many findings
   as fit (fit.shorten); the others are left to
5. one line saying where the rest is: review.md in the artifact the action uploads
   (`HWLINT_ARTIFACT`, set by action.yml), and as far as it holds them this run's job summary,
   linked to the run when GitHub's `GITHUB_SERVER_URL`, `GITHUB_REPOSITORY` and
   `GITHUB_RUN_ID` are set; outside a workflow, the command that prints the full review;
6. one list of sources for the whole comment: citations are numbered once (markdown.Footnotes).
"""

from __future__ import annotations

from typing import Any

from linter.manifest.config import described
from linter.engine.review import Review
from linter.report import ConfigsInEffect
from linter.report import changes as diff
from linter.report import fit
from linter.report.escape import code, human, markdown as md
from linter.report.location import artifact, workflow_run
from linter.report.markdown import Footnotes, rank, render_one, verdict, written

MARKER = "<!-- hwlint-review -->"
LIMIT = fit.GITHUB_LIMIT
NAMES_ROOM = 2_000  # at most this much (and a tenth of the comment) names unchanged manifests
CONFIGS_LISTED = 10  # configs named in the comment's head; the rest are counted
RANK_WORDS = ("need changes", "acceptable with warnings", "with items to confirm", "ready for sign-off")


def _count(review: Review, severity: str) -> int:
    failing = sum(r.status == "fail" and r.severity == severity and r.layer != "FILE" for r in review.results)
    return failing + (len(review.file_findings) if severity == "error" else 0)


def _changed(change: Any) -> str:
    if change is None:
        return ""
    if not change.base_exists:
        return "new"
    if change.unchanged:
        return "unchanged"
    return f"{len(change.introduced)} introduced, {len(change.resolved)} resolved"


def _cells(review: Review, change: Any, with_base: bool) -> list[str]:
    """A manifest's row of the verdict table but its last cell (where its details are)."""
    pending = sum(r.status == "pending" for r in review.results)
    cells = [code(review.file), verdict(review), str(_count(review, "error")), str(_count(review, "warning")),
             str(pending)]
    if with_base:
        cells.append(_changed(change))
    return cells


def _row(cells: list[str], where: str) -> str:
    return "| " + " | ".join(cells + [where]) + " |\n"


def _where_the_rest_is() -> str:
    """Where the full reviews are: in a workflow run, the artifact the action uploads (and the
    job summary, as far as GitHub's 1 MiB for it allows); elsewhere, the command."""
    run, stored = workflow_run(), artifact()
    if run and stored:
        return (f"are review.md in the artifact {code(stored)} of {run}, every finding also in hwlint.json and "
                "hwlint.sarif there; its job summary shows them as far as GitHub's 1 MiB for a summary allows")
    if run:
        return f"are in the job summary of {run}, as far as GitHub's 1 MiB for a summary allows (it says so at its top)"
    return "are not in this comment: `hwlint check --format markdown --max-chars 0 FILE` prints the full review of a manifest"


class _Standing:
    """The changed or new manifests of one rank, as far as the comment can show them: the rows
    that fit in half of it, the rendered reviews that fit in all of it, and one more of each
    (the first that does not fit is where the table stops, or the review that is shortened)."""

    def __init__(self) -> None:
        self.count = 0
        self.rows: list[list[str]] = []
        self.rows_size = 0
        self.details: list[tuple[str, Review]] = []
        self.details_least = 0


class Stream:
    """The comment written from the reviews as they come (`add`, then `close`): each manifest
    is ranked and counted, and kept only while its row or its review can still be in the
    comment (`_Standing`); a run of thousands of manifests holds a few of them."""

    def __init__(self, write: Any, references: dict[str, dict[str, Any]] | None = None, rule_count: int = 0,
                 changes: list[Any] | None = None, max_chars: int | None = None):
        self.write, self.references, self.rule_count = write, references or {}, rule_count
        self.limit = LIMIT if not max_chars else min(max_chars, LIMIT)
        self.notes = Footnotes(self.references)
        self.by_file = {c.file: c for c in changes or []}
        self.with_base = changes is not None
        self.base = next((c.base for c in changes or []), "")
        self.tally = [0, 0, 0, 0]
        self.verdicts: dict[int, str] = {}  # rank -> the verdict of its first manifest
        self.standings = [_Standing() for _ in range(4)]
        self.unchanged = self.unchanged_failing = 0
        self.names: list[str] = []  # the first unchanged manifests, those that fit under the table
        self.names_size = 0
        self.names_full = False
        self.configs = ConfigsInEffect()

    def detail(self, review: Review, shown: Any) -> str:
        change = self.by_file.get(review.file)
        return (diff.render_markdown([change]) if change is not None else "") + render_one(
            review, self.references, self.rule_count, shown, self.notes)

    def finish(self, text: str) -> str:
        return human(self.notes.number(text))

    def add(self, review: Review) -> None:
        standing = rank(review)
        self.tally[standing] += 1
        self.configs.add(review)
        if standing not in self.verdicts:
            self.verdicts[standing] = verdict(review)
        change = self.by_file.get(review.file)
        if self.with_base and getattr(change, "unchanged", False):
            self.unchanged += 1
            self.unchanged_failing += standing < 2
            name = code(review.file)
            room = self.names_size + (2 if self.names else 0) + fit.size(name)  # ", ".join(names + [name])
            if not self.names_full and room <= min(NAMES_ROOM, self.limit // 10):
                self.names.append(name)
                self.names_size = room
            else:
                self.names_full = True
            return
        kept = self.standings[standing]
        kept.count += 1
        if kept.rows_size <= self.limit // 2:
            cells = _cells(review, change, self.with_base)
            kept.rows.append(cells)
            kept.rows_size += fit.size(_row(cells, "below"))
        if kept.details_least <= self.limit:
            text = self.detail(review, None)
            kept.details.append((text, review))
            kept.details_least += self.notes.least(text)

    def close(self) -> None:
        self.write(self.text())

    def configs_line(self) -> str:
        """'**Config:** no config.' or each chain of config files in effect, with its manifests."""
        chains = list(self.configs.counts.items())
        if not chains:
            return ""
        if len(chains) == 1:
            return f"**Config:** {md(described(list(chains[0][0]), short=True))}.\n\n"
        shown = [f"{md(described(list(chain), short=True))} ({n} manifest{'s' if n != 1 else ''})"
                 for chain, n in chains[:CONFIGS_LISTED]]
        more = f"; and {len(chains) - CONFIGS_LISTED} more" if len(chains) > CONFIGS_LISTED else ""
        return f"**Configs:** {'; '.join(shown)}{more}.\n\n"

    def text(self) -> str:
        limit, with_base, finish = self.limit, self.with_base, self.finish
        count = sum(self.tally)
        listed = sum(kept.count for kept in self.standings)
        rows = [cells for kept in self.standings for cells in kept.rows]
        details = [detail for kept in self.standings for detail in kept.details]
        failing = self.standings[0].count + self.standings[1].count  # changed or new, and failing

        head = f"{MARKER}\n## hwlint: {self.verdicts[min(self.verdicts)] if count else 'no manifests'}\n\n"
        head += f"**{count} manifest{'s' if count != 1 else ''} reviewed:** " + ", ".join(
            f"{n} {word}" for n, word in zip(self.tally, RANK_WORDS) if n) + "."
        if with_base:
            head += f" Against {code(self.base)}: {listed} changed or new, {self.unchanged} unchanged."
        head += "\n\n" + self.configs_line()

        # Rows and details come failing manifests first, in the given order within a rank. A
        # rank whose rows or reviews were not all kept ends the table or the details within
        # those kept: the kept ones alone are more than fits.
        def table(detailed: int) -> str:
            columns = ["Manifest", "Verdict", "Errors", "Warnings", "To confirm"] + (["Change"] if with_base else []) + ["Details"]
            out = "| " + " | ".join(columns) + " |\n" + "|" + " --- |" * len(columns) + "\n"
            for n, cells in enumerate(rows):
                row = _row(cells, "below" if n < detailed else "job summary")
                if fit.size(out) + fit.size(row) > limit // 2:  # the first n rows are the n worst manifests
                    out += f"| … and {listed - n} more manifests ({failing - min(n, failing)} failing) | | | | |" + \
                           (" |" if with_base else "") + " job summary |\n"
                    break
                out += row
            if self.unchanged:
                more = self.unchanged - len(self.names)
                out += (f"\n**{self.unchanged} manifest{'s' if self.unchanged != 1 else ''} unchanged**"
                        f"{f' ({self.unchanged_failing} failing, as before)' if self.unchanged_failing else ''}: "
                        f"{', '.join(self.names)}{f' and {more} more' if more else ''}.\n")
            return out + "\n"

        def rest(detailed: int) -> str:
            left = listed - detailed
            if not left and not self.unchanged:
                return ""
            what = (f"The full reviews of the {left} manifest{'s' if left != 1 else ''} not detailed here"
                    if left else "The full reviews")
            what += " and of the unchanged ones" if self.unchanged and left else (
                " of the unchanged manifests" if self.unchanged else "")
            return f"\n---\n\n{what} {_where_the_rest_is()}.\n"

        def whole(parts: list[str], detailed: int) -> str:
            return finish(head + table(detailed) + fit.SEPARATOR.join(parts) + rest(detailed))

        # the details: as many whole reviews as fit, then one shortened
        parts: list[str] = []
        for candidate, review in details:
            if fit.size(whole(parts + [candidate], len(parts) + 1)) <= limit:
                parts.append(candidate)
                continue
            before = list(parts)
            shortened = fit.shorten([review], self.detail, limit,
                                    lambda text: whole(before + [text], len(before) + 1))
            if shortened is not None:
                return shortened
            break
        text = whole(parts, len(parts))
        if fit.size(text) > limit:  # not even the table fits: should not happen with the caps above
            text = finish(head + "The verdict table does not fit this comment. " + rest(0).strip("-\n ") + "\n")
        return text


def render(reviews: list[Review], references: dict[str, dict[str, Any]] | None = None, rule_count: int = 0,
           changes: list[Any] | None = None, max_chars: int | None = None) -> str:
    return written(Stream, reviews, references, rule_count, changes, max_chars)
