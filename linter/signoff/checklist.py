"""The sign-off checklist: every rule of the pack as one GitHub task, grouped by layer.

Each item says where the purchase stands in the words of the source checklist (confirmed /
to confirm / not applicable), plus failing and waived, and what backs it up:

| result  | box | shows                                                            |
| ------- | --- | ---------------------------------------------------------------- |
| pass    | [x] | confirmed, with the rule's evidence in words (its `evidence:`)   |
| pending | [ ] | to confirm: the missing fields and the verifiable action to take |
| skipped | [x] | not applicable, and why (tier or condition)                      |
| fail    | [ ] | failing: severity, the gap in the manifest's numbers, the fix    |
| waived  | [x] | waived: who approved it, why, until when                         |

An unchecked box is work left before sign-off. The action for a pending item is chosen per
missing field from rules/actions.yaml: the field's own action (a UPS rating is asked of the
facility, a server's maximum power read off its spec page), else the rule's `confirm:` hint,
else the action of the area the field lies in. A confirmed item shows the rule's evidence in
words. Rendered from templates/checklist.md.j2 with the Markdown review's
environment, so every value from the manifest is escaped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from linter import __version__
from linter.manifest.config import Config, described, settings, settings_digest
from linter.manifest.loader import Document
from linter.numbers import num
from linter.report import procurement
from linter.report.markdown import environment
from linter.results import LAYERS, RESERVED_LAYERS, Result, layer_name, layer_of, layer_rank, one_line
from linter.engine.review import Review, today
from linter.engine.rules import RulePack, pack_digest
from linter.signoff.records import check, content_digest, required_roles

RULE_LAYERS = [layer for layer in LAYERS if layer not in RESERVED_LAYERS]  # shown even when empty
STATUS_WORDS = {
    "pass": "confirmed", "pending": "to confirm", "skipped": "not applicable", "fail": "failing", "waived": "waived",
}
DONE = {"pass", "skipped", "waived"}

FALLBACK_ACTION = "find the value and add it to the manifest"
_INDEX = re.compile(r"\[\d+\]")


@lru_cache(maxsize=1)
def actions() -> dict[str, list[tuple[str, str]]]:
    """rules/actions.yaml: {"fields": [(path, action)], "areas": [(prefix, action)]}, `[]` for any index."""
    from linter.manifest.loader import load_file
    from linter.paths import data_dir

    data = load_file(str(data_dir("rules") / "actions.yaml")).data
    return {kind: [(entry["field"], entry["action"]) for entry in data[kind]] for kind in ("fields", "areas")}


def field_action(path: str) -> str | None:
    """The action rules/actions.yaml gives for this very field, if any."""
    generic = _INDEX.sub("[]", path)
    return next((action for field, action in actions()["fields"] if generic == field), None)


def action_for(path: str) -> str:
    """The action for a missing field: its own, else its area's, else the fallback."""
    own = field_action(path)
    if own:
        return own
    generic = _INDEX.sub("[]", path)
    for prefix, action in actions()["areas"]:
        if generic == prefix or generic.startswith((prefix + ".", prefix + "[")):
            return action
    return FALLBACK_ACTION


def evidence(facts: dict[str, Any]) -> list[str]:
    """`field = value` for the manifest fields a rule read (derived `facts.` values are left
    out: a reader sees the manifest's own words); list items merged, pointers left out."""
    merged: dict[str, list[str]] = {}
    for key, value in facts.items():
        if key.startswith("facts.") or (isinstance(value, str) and _POINTER.match(value)):
            continue
        shown = str(value).lower() if isinstance(value, bool) else num(value, 2)
        base = key[: key.rindex("[")] if key.endswith("]") else key
        merged.setdefault(base, []).append(shown)
    return [f"{key} = {', '.join(values)}" for key, values in merged.items()]


_POINTER = re.compile(r"^[a-z_]+(\.[a-z_]+)*\[\d+\]")  # a value that is a manifest path, not evidence


@dataclass
class Item:
    rule_id: str
    title: str
    status: str
    words: str
    headline: str = ""  # follows the status words, after `lead`
    lead: str = " "
    details: list[tuple[str, str]] = field(default_factory=list)  # (label, text)

    @property
    def done(self) -> bool:
        return self.status in DONE


def item(result: Result, pack: RulePack) -> Item:
    out = Item(result.rule_id, result.title, result.status, STATUS_WORDS[result.status])
    if result.status == "pass" and result.evidence:
        out.details = [("Evidence", result.evidence)]
    elif result.status == "pass":
        found = evidence(result.facts)
        out.details = [("Evidence", "; ".join(found))] if found else []
    elif result.status == "skipped":
        out.lead, out.headline = ": ", result.reason
    elif result.status == "pending":
        out.details = _to_confirm(result, pack)
    elif result.status == "fail":
        out.headline = f"({result.severity}) at {result.path or 'the manifest'}, line {result.line}"
        out.details = [("Gap", result.message), ("Fix", result.fix)]
    else:
        waiver = result.waiver or {}
        out.headline = f"by {waiver.get('approver')} until {waiver.get('expires')}"
        out.details = [("Why", str(waiver.get("reason"))), ("Gap", result.message)]
    return out


def deselected_item(d: dict[str, Any]) -> Item:
    """A rule that did not run: an open box, saying how it was deselected."""
    never = " (one of the checks that may never be skipped)" if d.get("never_skip") else ""
    return Item(d["rule_id"], d["title"], "deselected", "not run", lead=": ", headline=f"deselected by {d['how']}{never}",
                details=[("Action", "run it: drop it from --ignore / --select or the config, then review again")])


def _to_confirm(result: Result, pack: RulePack) -> list[tuple[str, str]]:
    if not result.missing:  # a rule that could not be evaluated
        return [("Why", result.reason), ("Action", "report it to the rule's author")]
    details = [("Missing", ", ".join(result.missing))]
    rule = pack.get(result.rule_id)
    hint = one_line(rule.spec.confirm) if rule is not None and rule.spec.confirm else None
    by_action: dict[str, list[str]] = {}
    for path in result.missing:  # each field's own action; a rule's hint only for fields that have none
        action = field_action(path) or hint or action_for(path)
        by_action.setdefault(action, []).append(path)
    return details + [("Action", action if len(by_action) == 1 else f"{action} ({', '.join(paths)})")
                      for action, paths in by_action.items()]


def waiver_rows(doc: Document, results: list[Result]) -> list[dict[str, str]]:
    problems = {r.path: r for r in results if r.layer == "WVR"}
    rows = []
    for index, waiver in enumerate(doc.data.get("waivers") or []):
        problem = problems.get(f"waivers[{index}]")
        status = "applies" if problem is None else problem.message
        if problem is not None and problem.rule_id == "WVR005":
            status = "applies; " + problem.message
        rows.append({
            "rule": waiver.get("rule", "—"), "path": waiver.get("path", "any"),
            "approver": waiver.get("approver", "—"), "expires": str(waiver.get("expires", "—")),
            "reason": waiver.get("reason", "—"), "status": status,
        })
    return rows


def signoff_rows(doc: Document, review: Review, pack_sha: str, config: Any = None) -> list[dict[str, str]]:
    verdict = check(doc, pack_sha, review.results, config=config)
    rows = []
    for role in required_roles(doc.data, config):
        recorded = [c for c in verdict.checks if c.role == role]
        if not recorded:
            rows.append({"role": role, "name": "", "date": "", "status": ""})
        for c in recorded:
            rows.append({"role": role, "name": c.name, "date": c.date,
                         "status": c.state + (f": {'; '.join(c.why)}" if c.state != "valid" and c.why else "")})
    return rows


# What each --role reads first: its layers (in this order, before the others) and its budget
# figures (keys of linter.engine.changes.BUDGET).
ROLES = {
    "finance": (("BUY",), ("capex", "opex_per_month", "rent_per_month", "total_cost", "payback_months", "ready_date")),
    "facilities": (("PWR",), ("it_power_kw", "facility_limit_kw")),
    "technical-lead": (("GPU", "LNK", "NET", "MEM", "STO", "OPS"),
                       ("gpus", "compute_nodes", "memory_per_gpu_gb", "usable_memory_per_gpu_gb",
                        "switch_ports_needed", "switch_ports_present")),
}
ROLE_TITLES = {"finance": "finance", "facilities": "facilities", "technical-lead": "the technical lead"}


def role_numbers(review: Review, role: str) -> list[tuple[str, str]]:
    """(label, figure with its unit) of the role's budget figures; unknown ones say so, and
    estimates say "estimate"."""
    from linter.engine.changes import BUDGET, budget_figures, currency

    figures = budget_figures(review)
    money = currency(review) or ""
    power = review.facts.get("power") if isinstance(review.facts.get("power"), dict) else {}
    estimated = {"memory_per_gpu_gb"} | ({"it_power_kw"} if power.get("estimates") else set())
    rows = []
    for key, label, unit, _ in BUDGET:
        if key not in ROLES[role][1]:
            continue
        value = figures.get(key)
        if value is None:
            shown = "unknown: the manifest does not give enough to work it out"
        elif unit == "date":
            shown = str(value)
        else:
            shown = f"{num(value)}{' ' + (money if unit == 'money' else unit) if (money if unit == 'money' else unit) else ''}"
        rows.append((label, shown + (" (estimate)" if key in estimated and value is not None else "")))
    return sorted(rows, key=lambda row: ROLES[role][1].index(next(k for k, lab, _, _ in BUDGET if lab == row[0])))


def render(review: Review, doc: Document, pack: RulePack, config: Any = None, role: str | None = None) -> str:
    rule_results = [r for r in review.results if r.layer not in RESERVED_LAYERS]
    items = [item(r, pack) for r in rule_results] + [deselected_item(d) for d in review.deselected]
    layers = sorted(set(RULE_LAYERS) | {layer_of(i.rule_id) for i in items}, key=layer_rank)  # a team's own after the built-in
    if role:  # the role's layers first, in its order; the rest as they were
        first = ROLES[role][0]
        layers = [l for l in first if l in layers] + [l for l in layers if l not in first]
    by_layer = {layer: sorted((i for i in items if layer_of(i.rule_id) == layer), key=lambda i: i.rule_id)
                for layer in layers}
    counts = {s: sum(r.status == s for r in rule_results) for s in STATUS_WORDS}
    pack_sha = pack_digest(pack)
    return environment().get_template("checklist.md.j2").render(
        review=review,
        version=__version__,
        today=today().isoformat(),
        file_digest=f"sha256:{review.digest}",
        content_digest=content_digest(doc.data),
        pack_digest=pack_sha,
        config_files=described(review.config_files),
        config_digest="sha256:" + settings_digest(settings(config or Config())),
        rule_count=len(pack.rules),
        layers=[(layer_name(layer), by_layer[layer]) for layer in layers],
        counts=counts,
        words=STATUS_WORDS,
        open_items=counts["fail"] + counts["pending"] + len(review.deselected),
        deselected=len(review.deselected),
        waivers=waiver_rows(doc, review.results),
        signoffs=signoff_rows(doc, review, pack_sha, config),
        role=ROLE_TITLES.get(role or ""),
        role_numbers=role_numbers(review, role) if role else [],
        role_open=[(layer_name(l), i) for l in (ROLES[role][0] if role else ()) for i in by_layer.get(l, []) if not i.done],
        procurement=procurement.section(review) if role == "finance" and review.facts else None,
    )
