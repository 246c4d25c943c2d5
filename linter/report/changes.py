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


CONFIG_TITLE = "What the config change does"
FIELDS_SHOWN = 30  # changed fields listed in text and Markdown; the JSON has every one
RELAXED = "introduced-by-relaxation"


def counts(changes: Changes) -> str:
    moved = f", {len(changes.not_fixed)} no longer failing because of the settings" if changes.not_fixed else ""
    relaxed = f", {len(changes.by_relaxation)} {RELAXED}" if changes.by_relaxation else ""
    return (f"{len(changes.introduced)} introduced{relaxed}, {len(changes.resolved)} resolved, "
            f"{len(changes.still_open)} still open{moved}")


def value(v: Any) -> str:
    """A config or manifest value in one line: numbers as the reports write them."""
    if v is None:
        return "unset"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return num(v, 4)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {value(x)}" for k, x in v.items()) + "}"
    return one_line(str(v))


def config_files(changes: Changes) -> str:
    """Which config files governed each version, in words: those that changed named, so
    that a reviewer opens the right one (in a chain, often not the nearest)."""
    was, now = changes.config_chains

    def names(chain: tuple[tuple[str, str], ...]) -> str:
        return ", then ".join(path for path, _ in chain) or "no config"

    if [path for path, _ in was] != [path for path, _ in now]:
        return f"{names(was)} (base) -> {names(now)} (this version)"
    edited = [path for (path, before), (_, after) in zip(was, now) if before != after]
    kept = [path for (path, before), (_, after) in zip(was, now) if before == after]
    if not edited:
        return f"{names(now)}, the same files (what they name changed)"
    return f"{', '.join(edited)} changed" + (f" ({', '.join(kept)} unchanged)" if kept else "")


def attribution(changes: Changes, key: str) -> str:
    """'; by field: storage.write_gbps 10 -> 0.5: -11 days' for the field changes that move
    budget `key` on their own, or the changed fields listed when none does alone; nothing when
    only one field changed (the move is all its own)."""
    delta = next((d for d in changes.budget if d.key == key), None)
    if delta is None or not delta.change or len(changes.fields) < 2:
        return ""  # one field change: it is the whole move, listed beside it
    parts = [(f, f.budget[key]) for f in changes.fields if key in f.budget]
    if not parts:  # no one change moves it on its own (or it was not measured): the changes beside it
        named = [f.path for f in changes.fields[:5]]
        more = len(changes.fields) - len(named)
        return "; with the field changes " + ", ".join(named) + (f" and {more} more" if more else "")
    text = "; by field: " + "; ".join(f"{f.path} {value(f.old)} -> {value(f.new)}: {_signed(part, delta.unit)}"
                                      for f, part in parts)
    if abs(sum(part for _, part in parts) - delta.change) > 1e-6:
        text += "; the rest from the changes together"
    return text


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
                             f"({_signed(d.change, d.unit)}{_settings_note(d)}{attribution(c, d.key)})")
        lines += [f"  setting: {s.text}" + (f" (moves {', '.join(s.rules)})" if s.rules and s.kind != "deselected" else "")
                  for s in c.settings]
        lines += [f"  not fixed: {r.rule_id} at {r.path or 'the file'} (now {status}) {why}" for r, status, why in c.not_fixed]
        if c.config:
            lines.append(f"  config: {config_files(c)}")
            lines += [f"  config: {x.key}: {value(x.old)} -> {value(x.new)} ({x.direction})" for x in c.config]
        lines += [f"  {RELAXED}: {shown(r.file)}:{r.line}:{r.column}: {r.rule_id} {r.severity} (now {status}) {why}: "
                  f"{one_line(r.message)}" for r, status, why in c.by_relaxation]
        lines += [f"  field: {f.path}: {value(f.old)} -> {value(f.new)}" for f in c.fields[:FIELDS_SHOWN]]
        if len(c.fields) > FIELDS_SHOWN:
            lines.append(f"  and {len(c.fields) - FIELDS_SHOWN} more changed fields (the JSON lists them all)")
    return "\n".join(lines) + "\n" if lines else ""


def render_markdown(all_changes: list[Changes]) -> str:
    out = []
    for c in all_changes:
        base = "a new manifest" if not c.base_exists else f"against {md(c.base)}"
        out.append(f"## What this change does: {md(c.file)}\n\n{base}: **{counts(c)}**\n")
        if not c.reviewed:
            out.append(f"> {UNREVIEWED}\n")
        rows = [("🆕 introduced", r, "") for r in c.introduced]
        rows += [(f"🔓 {RELAXED}", r, f" (now {md(status)}: {md(why)})") for r, status, why in c.by_relaxation]
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
                    f"{md(_signed(d.change, d.unit) + _settings_note(d) + attribution(c, d.key))} |" for d in c.budget]
            out.append("")
        if c.config:
            out.append(f"### {CONFIG_TITLE}\n\n{md(config_files(c))}\n")
            out.append("| Config key | Before | After | Effect |\n| --- | --- | --- | --- |")
            out += [f"| {md(x.key)} | {md(value(x.old))} | {md(value(x.new))} | {md(x.direction)} |" for x in c.config]
            out.append("")
        if c.fields:
            out.append("| Field | Before | After |\n| --- | --- | --- |")
            out += [f"| {md(f.path)} | {md(value(f.old))} | {md(value(f.new))} |" for f in c.fields[:FIELDS_SHOWN]]
            if len(c.fields) > FIELDS_SHOWN:
                out.append(f"| … and {len(c.fields) - FIELDS_SHOWN} more (the JSON lists them all) | | |")
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
        "introduced_by_relaxation": [{**finding(r), "status_now": status, "why": why}
                                     for r, status, why in changes.by_relaxation],
        "config": {"base": changes.config_files[0], "new": changes.config_files[1],
                   "changes": [{"key": x.key, "old": x.old, "new": x.new, "direction": x.direction}
                               for x in changes.config]},
        "fields": [{"path": f.path, "old": f.old, "new": f.new, "budget": dict(f.budget)} for f in changes.fields],
    }

