"""GitHub Actions workflow commands: one annotation per failure (and a notice per waived
failure, with its waiver), shown on the pull request.

    ::error file=examples/a.hw.yaml,line=32,col=11,title=hwlint GPU001 (error)::Each GPU needs ...

Severity maps to the command: error -> `error`, warning -> `warning`, info -> `notice`.
A workflow command ends at the line break, so everything from a manifest is escaped:
`%`, CR and LF in the message, and additionally `:` and `,` in property values (they
separate properties). Rule-pack errors are annotations without a file.
"""

from __future__ import annotations

from linter.engine.review import Review
from linter.report import reported
from linter.report.location import repo_relative

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def data(value: object) -> str:
    return str(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def prop(value: object) -> str:
    return data(value).replace(":", "%3A").replace(",", "%2C")


def annotation(kind: str, message: str, **properties: object) -> str:
    props = ",".join(f"{name}={prop(value)}" for name, value in properties.items())
    return f"::{kind}{' ' + props if props else ''}::{data(message)}"


def render(reviews: list[Review]) -> str:
    lines = []
    for r in reported(reviews):
        if r.status == "waived":  # shown, with its waiver, but only as a notice
            kind, label, message = "notice", "waived", f"{r.message}\n\nWaiver: {r.reason}"
        else:
            kind, label = COMMAND[r.severity], r.severity
            message = f"{r.message}\n\nFix: {r.fix}" if r.fix else r.message
        lines.append(annotation(
            kind, message or r.title,
            file=repo_relative(r.file), line=r.line, col=r.column, title=f"hwlint {r.rule_id} ({label})",
        ))
    lines += [annotation("error", error, title="hwlint rule pack") for review in reviews for error in review.rule_errors]
    return "".join(line + "\n" for line in lines)
