"""Rule documentation, written from each rule's own data.

`hwlint rules show ID` prints `rule_text`; `docs/rules.md` is `pack_markdown` of the
built-in pack (`python -m linter.report.docs > docs/rules.md`; a test fails when the committed
file is stale). Both say what a rule checks, why it matters, a failing and a fixed
snippet, the fix, the tiers where it applies, the policy values it reads and its sources.
"""

from __future__ import annotations

import re

from linter.results import layer_name, layer_rank, one_line
from linter.engine.rules import Rule, RulePack
from linter.report.escape import cell

_EXPR = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)
_STMT = re.compile(r"\{%-?.*?-?%\}", re.S)
_BRANCH = re.compile(r"\{%-?\s*(else|elif\b.*?)\s*-?%\}", re.S)
_POLICY = re.compile(r"facts\.policy\.([a-z_0-9]+)")


def template_text(text: str) -> str:
    """A message or fix template as readable text: `{{ x | num }}` becomes <x>; control
    statements are dropped, and the branches of conditional wording are joined by
    "(otherwise:)"."""

    def placeholder(match: re.Match) -> str:
        expr = match.group(1).split("|")[0].strip().strip("()")
        return f"<{expr}>"

    text = _BRANCH.sub(" (otherwise:) ", _EXPR.sub(placeholder, text))
    return one_line(_STMT.sub(" ", text))


# Checks that are not rules of the pack: the manifest file itself, and its waivers. Their
# findings carry these ids; docs/rules.md, `hwlint rules show` and SARIF describe them from here.
FILE_CHECKS: dict[str, tuple[str, str, str]] = {
    "IO": ("The manifest file can be read",
           "The file exists, is a regular file (or a folder holding *.hw.yaml files) and is within the size limit.",
           "Give the path of a manifest file; split a manifest over the size limit."),
    "YAML": ("The manifest is well-formed YAML",
             "The file is UTF-8 YAML without duplicate keys, custom tags or unbounded aliases, within the nesting "
             "and size limits. Nothing else can be reviewed until it parses.",
             "Correct the YAML at the line and column given; the message says what the parser found."),
    "SCHEMA": ("The manifest matches the manifest schema",
               "Every key is known (a key given with no value too), every value has the expected type, unit range "
               "and form, every required key is present (`hwlint schema` prints the schema), and every name that "
               "refers to another part of the manifest (a NIC's fabric, a rack's node pool, the checkpoints' storage "
               "tier) is defined there. Rules read only what the schema defines.",
               "Correct the key or value named; the message gives the closest valid spelling where there is one."),
    "CATALOG": ("Catalog names exist",
                "A GPU model, NIC, switch or system named in the manifest is an entry of the catalog, whose values "
                "then fill what the manifest leaves out.",
                "Use a catalog name (the message suggests the closest), or give the part's values in the manifest."),
    "WVR001": ("A waiver is complete", "A waiver names its reason, approver and expiry date, the reason and approver "
               "in visible text; an incomplete or blank one does not apply.", "Add the missing reason, approver or expires."),
    "WVR002": ("A waiver names a rule of the pack", "The rule id of a waiver exists in the rule pack.",
               "Correct the rule id (`hwlint rules list` shows them)."),
    "WVR003": ("A waiver names a rule that may be waived", "Some rules cannot be waived; a waiver for one does not apply.",
               "Fix the finding instead of waiving it."),
    "WVR004": ("A waiver has not expired", "An expired waiver no longer applies, so the finding counts again.",
               "Fix the finding, or renew the waiver with a new expiry date and approver."),
    "WVR005": ("A waiver does not expire soon", "A waiver close to its expiry date is flagged ahead of time.",
               "Plan the fix, or renew the waiver before it expires."),
    "WVR006": ("A waiver is used", "A waiver that matches no failing result is stale.", "Remove the waiver."),
    "WVR007": ("A waiver expires on a date", "An expiry is a date (YYYY-MM-DD), the last day the waiver applies, judged "
               "in UTC; one with a time or a time zone does not apply.", "Write the expiry as a date alone."),
    "WVR008": ("A waiver expires within the policy's maximum",
               "An expiry further ahead than policy `waiver_max_days` (730 days by default) does not apply.",
               "Set an earlier expiry and renew the waiver when it comes."),
}


def file_check_markdown(check_id: str) -> str:
    title, means, fix = FILE_CHECKS[check_id]
    return f"### {check_id}: {title}\n\n{means}\n\n**Fix:** {fix}\n"


def _tiers(rule: Rule) -> str:
    return "every tier (never skipped by scale)" if rule.spec.tiers == "all" else ", ".join(rule.spec.tiers)


def _cite(key: str, pack: RulePack) -> str:
    ref = pack.references.get(key, {})
    parts = [ref.get("title", key), ref.get("publisher"), str(ref.get("year", "")), ref.get("section"), ref.get("url")]
    return ". ".join(p for p in parts if p)


def policy_used(rule: Rule) -> list[str]:
    """Names of the policy thresholds the rule reads, in order of first use."""
    s = rule.spec
    found = _POLICY.findall(" ".join((s.when, s.require, s.message, s.fix)))
    return list(dict.fromkeys(found))


def _policy_value(name: str, pack: RulePack) -> str:
    spec = pack.policy.get(name, {})
    unit = spec.get("unit", "")
    sep = "" if unit in ("", "%", "x") else " "
    return f"{name} = {spec.get('default')}{sep}{unit}"


def _conditions(rule: Rule, pack: RulePack) -> str:
    described = {c["name"]: c.get("description", "") for c in pack.conditions}
    return "; ".join(f"{name} ({described.get(name, '')})" for name in rule.spec.not_applicable_when)


def rule_text(rule: Rule, pack: RulePack) -> str:
    s = rule.spec
    lines = [f"{s.id}: {s.title}", f"severity: {s.severity}; applies at: {_tiers(rule)}"]
    if s.applies_when:
        lines.append(f"only when: {s.applies_when}")
    if s.not_applicable_when:
        lines.append(f"not applicable when: {_conditions(rule, pack)}")
    if s.never_skip:
        lines.append("may never be skipped: cannot be waived, and `hwlint verify` waits while it is pending or deselected")
    elif not s.waivable:
        lines.append("cannot be waived")
    lines += ["", "What it checks:", f"  {s.title}.", f"  Requirement: {one_line(s.require)}"]
    used = policy_used(rule)
    if used:
        lines.append("  Policy (defaults; a manifest's policy: section overrides them): "
                     + "; ".join(_policy_value(n, pack) for n in used))
    if s.why:
        lines += ["", "Why it matters:", f"  {one_line(s.why)}"]
    if s.example_fail:
        lines += ["", "Fails:"] + [f"  {line}" for line in s.example_fail.rstrip().splitlines()]
    if s.example_pass:
        lines += ["", "Passes:"] + [f"  {line}" for line in s.example_pass.rstrip().splitlines()]
    lines += ["", "Fix:", f"  {template_text(s.fix)}"]
    if s.confirm:
        lines += ["", "When pending, to confirm:", f"  {one_line(s.confirm)}"]
    lines += ["", "Sources:"]
    lines += [f"  [{i}] {_cite(key, pack)}" for i, key in enumerate(s.cite, 1)]
    if s.uncited:
        lines.append(f"  No other source: {one_line(s.uncited)}")
    lines.append(f"\nDefined in {rule.file}:{rule.line}")
    return "\n".join(lines)


def _anchor(rule: Rule) -> str:
    return rule.id.lower()


def rule_markdown(rule: Rule, pack: RulePack) -> str:
    s = rule.spec
    used = policy_used(rule)
    rows = [
        ("Severity", s.severity),
        ("Applies at", _tiers(rule)),
        ("Only when", s.applies_when or ("always" if s.when.strip() == "true" else f"`{cell(s.when)}`")),
        *((("Not applicable when", _conditions(rule, pack)),) if s.not_applicable_when else ()),
        ("Waivable", "yes" if s.waivable else "no" + (" (may never be skipped; verify waits for it)" if s.never_skip else "")),
        ("Policy", ", ".join(f"`{_policy_value(n, pack)}`" for n in used) or "none"),
        ("Points at", f"`{cell(template_text(s.at))}`"),
    ]
    out = [f"### {s.id}: {s.title}", "", "| | |", "| --- | --- |"]
    out += [f"| {k} | {cell(v)} |" for k, v in rows]
    out += ["", f"**Checks:** `{cell(s.require)}`", "", f"**Why it matters.** {one_line(s.why or '')}", ""]
    out += ["**Fails:**", "", "```yaml", s.example_fail.rstrip() if s.example_fail else "", "```", ""]
    out += ["**Passes:**", "", "```yaml", s.example_pass.rstrip() if s.example_pass else "", "```", ""]
    out += [f"**Message:** {template_text(s.message)}", "", f"**Fix:** {template_text(s.fix)}", ""]
    if s.confirm:
        out += [f"**When pending, to confirm:** {one_line(s.confirm)}", ""]
    out += ["**Sources:** " + "; ".join(f"[{key}](#ref-{key})" for key in s.cite)
            + (f". No other source: {cell(s.uncited)}" if s.uncited else ""), ""]
    tests = ", ".join(f"{c.expect}: {c.name}" for c in s.tests)
    out += [f"**Tests ({len(s.tests)}):** {tests}", ""]
    return "\n".join(out)


def pack_markdown(pack: RulePack) -> str:
    """docs/rules.md: an index, every rule by layer, the policy defaults and the sources."""
    out = [
        "# hwlint rules",
        "",
        "<!-- Generated from rules/*.yaml by `python -m linter.report.docs > docs/rules.md`; do not edit by hand. -->",
        "",
        f"{len(pack.rules)} rules in {len({r.layer for r in pack.rules})} layers. Each rule gives one result per manifest:",
        "pass, fail (with its severity), pending (the manifest lacks a value the rule reads), skipped (not",
        "applicable at this tier or under this condition) or waived. `hwlint rules show ID` prints the same",
        "information for one rule; `hwlint rules test` runs every rule's test cases.",
        "",
        "| Rule | Severity | Applies at | Requirement |",
        "| --- | --- | --- | --- |",
    ]
    for rule in sorted(pack.rules, key=lambda r: (layer_rank(r.layer), r.id)):
        tiers = "all" if rule.spec.tiers == "all" else ", ".join(rule.spec.tiers)
        out.append(f"| [{rule.id}](#{_anchor(rule)}) | {rule.spec.severity} | {tiers} | {cell(rule.spec.title)} |")
    out.append("")
    for layer in sorted({r.layer for r in pack.rules}, key=layer_rank):
        rules = sorted((r for r in pack.rules if r.layer == layer), key=lambda r: r.id)
        out += [f"## {layer}: {layer_name(layer)}", ""]
        for rule in rules:
            out += [f'<a id="{_anchor(rule)}"></a>', "", rule_markdown(rule, pack)]
    out += [
        "## Checks of the manifest file and its waivers",
        "",
        "These are not rules of the pack and cannot be waived or deselected; their findings carry these ids.",
        "",
    ]
    for check_id in FILE_CHECKS:
        out += [f'<a id="{check_id.lower()}"></a>', "", file_check_markdown(check_id)]
    out += [
        "## Policy",
        "",
        "Thresholds a team may tune. A manifest sets any of them in its `policy:` section; every review",
        "lists the values it used. Defaults live in `rules/policy.yaml`.",
        "",
        "| Policy | Default | Means | Why this default | Sources |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, spec in pack.policy.items():
        unit = spec.get("unit", "")
        default = f"{spec.get('default')}{'' if unit in ('', '%', 'x', ':1') else ' '}{unit}"
        sources = ", ".join(f"[{k}](#ref-{k})" for k in spec.get("cite", [])) or "team default"
        out.append(f"| `{name}` | {default} | {cell(spec.get('means', ''))} | {cell(spec.get('why', ''))} | {sources} |")
    out += ["", "## Sources", ""]
    for key in sorted(pack.references):
        out += [f'<a id="ref-{key}"></a>', "", f"- **{key}**: {_cite(key, pack)}", ""]
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    import sys

    from linter.engine.rules import load_pack

    sys.stdout.write(pack_markdown(load_pack()))


if __name__ == "__main__":
    main()

