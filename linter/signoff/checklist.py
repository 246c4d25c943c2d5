"""The sign-off checklist: every rule of the pack as one GitHub task, grouped by layer.

Each item says where the purchase stands in the words of the source checklist (confirmed /
to confirm / not applicable), plus failing and waived, and what backs it up:

| result  | box | shows                                                            |
| ------- | --- | ---------------------------------------------------------------- |
| pass    | [x] | confirmed, with the numbers the rule read (Result.facts)         |
| pending | [ ] | to confirm: the missing fields and the verifiable action to take |
| skipped | [x] | not applicable, and why (tier or condition)                      |
| fail    | [ ] | failing: severity, the gap in the manifest's numbers, the fix    |
| waived  | [x] | waived: who approved it, why, until when                         |

An unchecked box is work left before sign-off. The action for a pending item is the rule's
`confirm:` hint, or is derived from where the missing fields live (`ACTIONS`): spec values
are looked up on the spec page, quotes asked of the vendor, the power bill computed from
the tariff. Rendered from templates/checklist.md.j2 with the Markdown review's
environment, so every value from the manifest is escaped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from linter import __version__
from linter.manifest.loader import Document
from linter.numbers import num
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

# Where a missing value lives -> the verifiable action that finds it. First match wins;
# `[]` stands for any list index.
ACTIONS = (
    ("facility.electricity_price_per_kwh", "compute the power bill: take the price per kWh from the utility tariff or the colocation contract"),
    ("facility.pue", "compute the power bill: ask the facility for its measured PUE"),
    ("facility", "ask the facility (data centre) for its power capacity, rack budgets, circuits and cooling"),
    ("node_pools[].gpu", "look up the GPU's spec page (datasheet), or name a catalog model"),
    ("node_pools[].system", "look up the server's spec page, or name a catalog system"),
    ("node_pools[].intra_node_link", "look up the server's spec page for its GPU interconnect"),
    ("node_pools[].max_power_kw", "look up the server's spec page for its maximum power draw"),
    ("node_pools[].nics", "ask the server vendor which network cards the quote includes, and their rate"),
    ("node_pools", "ask the server vendor for the configuration the quote covers"),
    ("network", "ask the network vendor for switch models, counts and port rates, and the topology"),
    ("storage", "ask the storage vendor for capacity and measured throughput; write down the checkpoint and backup plan"),
    ("procurement", "ask the vendor for a dated quote with price and lead time"),
    ("plan", "settle it with the training lead and write it into the plan"),
    ("operations", "name who runs monitoring, failure recovery, spares and burn-in, and write it down"),
    ("policy", "agree the threshold within the team"),
)
FALLBACK_ACTION = "find the value and add it to the manifest"
_INDEX = re.compile(r"\[\d+\]")
_POINTER = re.compile(r"^[a-z_]+(\.[a-z_]+)*\[\d+\]")  # a value that is a manifest path, not evidence


def action_for(path: str) -> str:
    generic = _INDEX.sub("[]", path)
    for prefix, action in ACTIONS:
        if generic == prefix or generic.startswith((prefix + ".", prefix + "[")):
            return action
    return FALLBACK_ACTION


def evidence(facts: dict[str, Any]) -> list[str]:
    """`path = value` for what a rule read; list items merged, pointers left out."""
    merged: dict[str, list[str]] = {}
    for key, value in facts.items():
        if isinstance(value, str) and _POINTER.match(value):
            continue
        shown = str(value).lower() if isinstance(value, bool) else num(value, 2)
        base = key[: key.rindex("[")] if key.endswith("]") else key
        merged.setdefault(base, []).append(shown)
    return [f"{key} = {', '.join(values)}" for key, values in merged.items()]


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
    hint = rule.spec.confirm if rule is not None else None
    if hint:
        return details + [("Action", one_line(hint))]
    actions: dict[str, list[str]] = {}
    for path in result.missing:
        actions.setdefault(action_for(path), []).append(path)
    return details + [("Action", action if len(actions) == 1 else f"{action} ({', '.join(paths)})")
                      for action, paths in actions.items()]


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


def render(review: Review, doc: Document, pack: RulePack, config: Any = None, role: str | None = None) -> str:
    rule_results = [r for r in review.results if r.layer not in RESERVED_LAYERS]
    items = [item(r, pack) for r in rule_results] + [deselected_item(d) for d in review.deselected]
    layers = sorted(set(RULE_LAYERS) | {layer_of(i.rule_id) for i in items}, key=layer_rank)  # a team's own after the built-in
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
        rule_count=len(pack.rules),
        layers=[(layer_name(layer), by_layer[layer]) for layer in layers],
        counts=counts,
        words=STATUS_WORDS,
        open_items=counts["fail"] + counts["pending"] + len(review.deselected),
        deselected=len(review.deselected),
        waivers=waiver_rows(doc, review.results),
        signoffs=signoff_rows(doc, review, pack_sha, config),
    )
