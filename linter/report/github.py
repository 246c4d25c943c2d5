"""GitHub Actions workflow commands: one annotation per failure (and a notice per waived
failure, with its waiver), shown on the pull request.

GitHub shows at most 10 error, 10 warning and 10 notice annotations per step and drops the
rest silently, so they come most severe first (then by file and line), and each kind is cut
to 9 with a 10th that counts what was left out and says where every finding is (the
artifact the action uploads, or the command that lists them). With
`--base`, manifests identical to their base version are not annotated.

    ::error file=examples/a.hw.yaml,line=32,col=11,title=hwlint GPU001 (error)::Each GPU needs ...

Severity maps to the command: error -> `error`, warning -> `warning`, info -> `notice`.
A workflow command ends at the line break, so everything from a manifest is escaped:
`%`, CR and LF in the message, and additionally `:` and `,` in property values (they
separate properties). Rule-pack errors are annotations without a file.
"""

from __future__ import annotations

from linter.engine.review import Review
from linter.report import reported
from linter.report.location import artifact, repo_relative
from linter.report.text import deselection

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def data(value: object) -> str:
    return str(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def prop(value: object) -> str:
    return data(value).replace(":", "%3A").replace(",", "%2C")


def annotation(kind: str, message: str, **properties: object) -> str:
    props = ",".join(f"{name}={prop(value)}" for name, value in properties.items())
    return f"::{kind}{' ' + props if props else ''}::{data(message)}"


PER_STEP = 10  # GitHub's limit per annotation kind and step
RANK = {"error": 0, "warning": 1, "notice": 2}


def render(reviews: list[Review], changes: list | None = None) -> str:
    if changes is not None:
        same = {c.file for c in changes if c.unchanged}
        reviews = [r for r in reviews if r.file not in same]
    found = [("error", error, {"title": "hwlint rule pack"}) for review in reviews for error in review.rule_errors]
    ordered = sorted(reported(reviews), key=lambda r: (RANK[_kind(r)], repo_relative(r.file), r.line, r.column, r.rule_id))
    for r in ordered:
        if r.status == "waived":  # shown, with its waiver, but only as a notice
            label, message = "waived", f"{r.message}\n\nWaiver: {r.reason}"
        else:
            label = r.severity
            message = f"{r.message}\n\nFix: {r.fix}" if r.fix else r.message
        found.append((_kind(r), message or r.title, {"file": repo_relative(r.file), "line": r.line, "col": r.column,
                                                     "title": f"hwlint {r.rule_id} ({label})"}))
    found += [("notice", f"{len(review.deselected)} rules did not run ({deselection(review)})",
               {"file": repo_relative(review.file), "title": "hwlint rules deselected"})
              for review in reviews if review.deselected]
    lines = []
    for kind in RANK:
        mine = [f for f in found if f[0] == kind]
        shown = mine if len(mine) <= PER_STEP else mine[:PER_STEP - 1]
        lines += [annotation(k, message, **props) for k, message, props in shown]
        if len(mine) > len(shown):
            left = len(mine) - len(shown)
            lines.append(annotation(kind, f"{left} more {kind} annotation{'s' if left != 1 else ''} not shown: GitHub shows "
                                    f"{PER_STEP} per kind and step. {_every_finding()}", title=f"hwlint: {left} more"))
    return "".join(line + "\n" for line in lines)


def _every_finding() -> str:
    """Where every finding is: the reports the action uploads, or the command that lists them
    (the log holds only the annotations shown)."""
    stored = artifact()
    if stored:
        return f"Every finding is in hwlint.sarif and review.md of the artifact {stored} of this run."
    return "`hwlint check` on these manifests lists every finding."


def _kind(r) -> str:
    return "notice" if r.status == "waived" else COMMAND[r.severity]
