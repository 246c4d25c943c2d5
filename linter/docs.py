"""Rule documentation, written from each rule's own data (`hwlint rules show`)."""

from __future__ import annotations

from .rules import Rule, RulePack


def _tiers(rule: Rule) -> str:
    return "every tier (never skipped by scale)" if rule.spec.tiers == "all" else ", ".join(rule.spec.tiers)


def _cite(key: str, pack: RulePack) -> str:
    ref = pack.references.get(key, {})
    parts = [ref.get("title", key), ref.get("publisher"), str(ref.get("year", "")), ref.get("section"), ref.get("url")]
    return ". ".join(p for p in parts if p)


def rule_text(rule: Rule, pack: RulePack) -> str:
    s = rule.spec
    lines = [f"{s.id}: {s.title}", f"severity: {s.severity}; applies at: {_tiers(rule)}"]
    if s.applies_when:
        lines.append(f"only when: {s.applies_when}")
    if not s.waivable:
        lines.append("cannot be waived")
    lines += ["", "What it checks:", f"  {s.require.strip()}"]
    if s.why:
        lines += ["", "Why it matters:", f"  {s.why.strip()}"]
    if s.example_fail:
        lines += ["", "Fails:"] + [f"  {line}" for line in s.example_fail.rstrip().splitlines()]
    if s.example_pass:
        lines += ["", "Passes:"] + [f"  {line}" for line in s.example_pass.rstrip().splitlines()]
    lines += ["", "Fix:", f"  {' '.join(s.fix.split())}", "", "Sources:"]
    lines += [f"  [{i}] {_cite(key, pack)}" for i, key in enumerate(s.cite, 1)]
    lines.append(f"\nDefined in {rule.file}:{rule.line}")
    return "\n".join(lines)
