"""The pull-request comment (`--format comment`): one GitHub comment for any number of
manifests, never longer than GitHub's 65,536 characters (counted as GitHub counts them, in
UTF-16 code units: `fit.size`, measured on the text exactly as it is written out).

In order:

1. the hidden marker `<!-- hwlint-review -->` the workflow finds its comment by;
2. the overall verdict (the worst manifest's) and how many manifests have which verdict;
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

from linter.engine.review import Review
from linter.report import changes as diff
from linter.report import fit
from linter.report.escape import code, human, markdown as md
from linter.report.location import artifact, workflow_run
from linter.report.markdown import Footnotes, rank, render_one, verdict

MARKER = "<!-- hwlint-review -->"
LIMIT = fit.GITHUB_LIMIT
NAMES_ROOM = 2_000  # at most this much (and a tenth of the comment) names unchanged manifests
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


def _row(review: Review, change: Any, where: str, with_base: bool) -> str:
    pending = sum(r.status == "pending" for r in review.results)
    cells = [code(review.file), verdict(review), str(_count(review, "error")), str(_count(review, "warning")),
             str(pending)]
    if with_base:
        cells.append(_changed(change))
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


def render(reviews: list[Review], references: dict[str, dict[str, Any]] | None = None, rule_count: int = 0,
           changes: list[Any] | None = None, max_chars: int | None = None) -> str:
    references = references or {}
    limit = LIMIT if not max_chars else min(max_chars, LIMIT)
    notes = Footnotes(references)
    finish = lambda text: human(notes.number(text))  # noqa: E731
    by_file = {c.file: c for c in changes or []}
    with_base = changes is not None
    unchanged = [r for r in reviews if with_base and getattr(by_file.get(r.file), "unchanged", False)]
    same = {id(r) for r in unchanged}
    listed = sorted((r for r in reviews if id(r) not in same), key=rank)  # stable: the given order within a rank

    worst = min((rank(r) for r in reviews), default=3)
    tally = [sum(rank(r) == n for r in reviews) for n in range(4)]
    head = f"{MARKER}\n## hwlint: {verdict(next(r for r in reviews if rank(r) == worst)) if reviews else 'no manifests'}\n\n"
    head += f"**{len(reviews)} manifest{'s' if len(reviews) != 1 else ''} reviewed:** " + ", ".join(
        f"{n} {word}" for n, word in zip(tally, RANK_WORDS) if n) + "."
    if with_base:
        base = next((c.base for c in changes or []), "")
        head += f" Against {code(base)}: {len(listed)} changed or new, {len(unchanged)} unchanged."
    head += "\n\n"

    # the details: as many whole reviews as fit, then one shortened
    def detail(review: Review, shown: Any) -> str:
        change = by_file.get(review.file)
        return (diff.render_markdown([change]) if change is not None else "") + render_one(
            review, references, rule_count, shown, notes)

    def table(detailed: int) -> str:
        columns = ["Manifest", "Verdict", "Errors", "Warnings", "To confirm"] + (["Change"] if with_base else []) + ["Details"]
        out = "| " + " | ".join(columns) + " |\n" + "|" + " --- |" * len(columns) + "\n"
        for n, review in enumerate(listed):
            row = _row(review, by_file.get(review.file), "below" if n < detailed else "job summary", with_base)
            if fit.size(out) + fit.size(row) > limit // 2:
                left = listed[n:]
                failing = sum(rank(r) < 2 for r in left)
                out += f"| … and {len(left)} more manifests ({failing} failing) | | | | |" + (" |" if with_base else "") + \
                       " job summary |\n"
                break
            out += row
        if unchanged:
            names, shown = [], 0
            for review in unchanged:
                name = code(review.file)
                if fit.size(", ".join(names + [name])) > min(NAMES_ROOM, limit // 10):
                    break
                names.append(name)
            more = len(unchanged) - len(names)
            failing = sum(rank(r) < 2 for r in unchanged)
            out += (f"\n**{len(unchanged)} manifest{'s' if len(unchanged) != 1 else ''} unchanged**"
                    f"{f' ({failing} failing, as before)' if failing else ''}: {', '.join(names)}"
                    f"{f' and {more} more' if more else ''}.\n")
        return out + "\n"

    def rest(detailed: int) -> str:
        left = len(listed) - detailed
        if not left and not unchanged:
            return ""
        what = (f"The full reviews of the {left} manifest{'s' if left != 1 else ''} not detailed here"
                if left else "The full reviews")
        what += " and of the unchanged ones" if unchanged and left else (" of the unchanged manifests" if unchanged else "")
        return f"\n---\n\n{what} {_where_the_rest_is()}.\n"

    def whole(parts: list[str], detailed: int) -> str:
        return finish(head + table(detailed) + fit.SEPARATOR.join(parts) + rest(detailed))

    parts: list[str] = []
    for review in listed:
        candidate = detail(review, None)
        if fit.size(whole(parts + [candidate], len(parts) + 1)) <= limit:
            parts.append(candidate)
            continue
        before = list(parts)
        shortened = fit.shorten([review], detail, limit,
                                lambda text: whole(before + [text], len(before) + 1))
        if shortened is not None:
            return shortened
        break
    text = whole(parts, len(parts))
    if fit.size(text) > limit:  # not even the table fits: should not happen with the caps above
        text = finish(head + "The verdict table does not fit this comment. " + rest(0).strip("-\n ") + "\n")
    return text
