"""The base diff as a reader sees it: text lines, Markdown tables, the JSON block, and the
`hwlint diff` output. The changes themselves are computed in linter.engine.changes."""

from __future__ import annotations

from typing import Any

from linter.engine.changes import Changes
from linter.numbers import num
from linter.report.escape import markdown as md
from linter.report.escape import path as shown
from linter.results import Result, one_line

UNREVIEWED = "the new version has a file problem that stops the review, so the rules' findings are not compared"


def _signed(value: float | int | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "date":
        unit = "days"
    sign = "+" if value > 0 else ""
    return f"{sign}{num(value)}{' ' + unit if unit else ''}" if value else "no change"


def _figure(value: float | int | str | None, unit: str) -> str:
    if value is None:
        return "unknown"
    if unit == "date":
        return str(value)
    return f"{num(value)}{' ' + unit if unit else ''}"


SETTINGS_TITLE = "What the reviewers changed (settings, not fixes)"


def counts(changes: Changes) -> str:
    moved = f", {len(changes.not_fixed)} no longer failing because of the settings" if changes.not_fixed else ""
    return (f"{len(changes.introduced)} introduced, {len(changes.resolved)} resolved, "
            f"{len(changes.still_open)} still open{moved}")


def _settings_note(d: Any) -> str:
    """', of which +9 kW from the settings' for a budget move the settings made (in part)."""
    part = d.settings_part
    if part is None:
        return ""
    whole = d.change is not None and abs(part - d.change) < 1e-9
    return ", all of it from the settings, not the hardware" if whole else f", of which {_signed(part, d.unit)} from the settings"


def render_text(all_changes: list[Changes]) -> str:
    lines = []
    for c in all_changes:
        base = f"{c.base} (new file)" if not c.base_exists else c.base
        lines.append(f"{shown(c.file)}: against {shown(base)}: {counts(c)}")
        if not c.reviewed:
            lines.append(f"  {UNREVIEWED}")
        lines += [f"  introduced: {shown(r.file)}:{r.line}:{r.column}: {r.rule_id} {r.severity} {one_line(r.message)}"
                  for r in c.introduced]
        lines += [f"  resolved: {r.rule_id} at {r.path or 'the file'} (now {status})" for r, status in c.resolved]
        lines += [f"  still open: {shown(r.file)}:{r.line}:{r.column}: {r.rule_id} {r.severity}" for r in c.still_open]
        for d in c.budget:
            if d.change != 0:
                lines.append(f"  budget: {d.label}: {_figure(d.old, d.unit)} -> {_figure(d.new, d.unit)} "
                             f"({_signed(d.change, d.unit)}{_settings_note(d)})")
        lines += [f"  setting: {s.text}" + (f" (moves {', '.join(s.rules)})" if s.rules and s.kind != "deselected" else "")
                  for s in c.settings]
        lines += [f"  not fixed: {r.rule_id} at {r.path or 'the file'} (now {status}) {why}" for r, status, why in c.not_fixed]
    return "\n".join(lines) + "\n" if lines else ""


def render_markdown(all_changes: list[Changes]) -> str:
    out = []
    for c in all_changes:
        base = "a new manifest" if not c.base_exists else f"against {md(c.base)}"
        out.append(f"## What this change does: {md(c.file)}\n\n{base}: **{counts(c)}**\n")
        if not c.reviewed:
            out.append(f"> {UNREVIEWED}\n")
        rows = [("🆕 introduced", r, "") for r in c.introduced]
        rows += [("✅ resolved", r, f" (now {md(status)})") for r, status in c.resolved]
        rows += [("⏳ still open", r, "") for r in c.still_open]
        if rows:
            out.append("| Change | Rule | Where | Finding |\n| --- | --- | --- | --- |")
            out += [f"| {what}{note} | {md(r.rule_id)} ({md(r.severity)}) | {md(r.path or r.file)} | {md(r.message or r.title)} |"
                    for what, r, note in rows]
            out.append("")
        if c.budget:
            out.append("| Budget | Before | After | Change |\n| --- | --- | --- | --- |")
            out += [f"| {md(d.label)} | {md(_figure(d.old, d.unit))} | {md(_figure(d.new, d.unit))} | "
                    f"{md(_signed(d.change, d.unit) + _settings_note(d))} |" for d in c.budget]
            out.append("")
        if c.settings or c.not_fixed:
            out.append(f"### {SETTINGS_TITLE}\n")
            out += [f"- **{md(s.kind)}**: {md(s.text)}" + (f" (moves {md(', '.join(s.rules))})" if s.rules and s.kind != "deselected" else "")
                    for s in c.settings]
            out.append("")
            if c.not_fixed:
                out.append("| No longer failing, not fixed | Where | Why |\n| --- | --- | --- |")
                out += [f"| {md(r.rule_id)} ({md(r.severity)}), now {md(status)} | {md(r.path or r.file)} | {md(why)} |"
                        for r, status, why in c.not_fixed]
                out.append("")
    return "\n".join(out) + "\n---\n\n" if out else ""


def as_json(changes: Changes) -> dict[str, Any]:
    def finding(r: Result) -> dict[str, Any]:
        return {"rule_id": r.rule_id, "path": r.path, "severity": r.severity, "title": r.title,
                "message": r.message, "line": r.line, "column": r.column}

    return {
        "base": changes.base,
        "base_exists": changes.base_exists,
        "reviewed": changes.reviewed,
        "introduced": [finding(r) for r in changes.introduced],
        "resolved": [{**finding(r), "status_now": status} for r, status in changes.resolved],
        "still_open": [finding(r) for r in changes.still_open],
        "budget": [{"key": d.key, "label": d.label, "unit": d.unit, "old": d.old, "new": d.new, "change": d.change,
                    "from_settings": d.settings_part} for d in changes.budget],
        "settings": [{"kind": s.kind, "text": s.text, "rules": list(s.rules)} for s in changes.settings],
        "not_fixed": [{**finding(r), "status_now": status, "why": why} for r, status, why in changes.not_fixed],
    }

