"""SARIF 2.1.0, in the subset GitHub code scanning reads.

- `tool.driver.rules`: every rule of the pack (plus the manifest-file checks that fired),
  with name, short and full description, help, and the default level from its severity.
  `helpUri` is set only when the rule's first source with a URL has one; hwlint invents none.
- `results`: the failures, and waived failures carrying an in-source suppression (the waiver
  lives in the manifest). Location: the manifest's path from the repository root, and the
  line and column of the YAML key the rule points at (columns count code points).
- `partialFingerprints`: a hash of rule id and manifest path (diff.key), never the line, so
  moving unrelated lines keeps every alert the same alert.

Plain-text SARIF messages treat `[text](target)` as a link, so brackets and backslashes that
came from a manifest are escaped as the specification asks.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable
from urllib.parse import quote

from linter import __version__
from linter.engine.changes import key
from linter.results import Result, layer_name, one_line
from linter.engine.review import Review
from linter.engine.rules import Rule, RulePack, pack_digest
from linter.report import reported
from linter.report.json import ITEMS, stream_dumps
from linter.report.location import repo_relative

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}
FINGERPRINT = "hwlintFinding/v1"


def text(value: str) -> str:
    """Escape a plain-text SARIF message: `\\`, `[` and `]` are literal, never a link."""
    return re.sub(r"([\\\[\]])", r"\\\1", value)


def _name(title: str) -> str:
    return "".join(word[:1].upper() + word[1:] for word in re.findall(r"[A-Za-z0-9]+", title)) or "Rule"


def _help_uri(rule: Rule, references: dict[str, dict[str, Any]]) -> str | None:
    for cite in rule.spec.cite:
        url = str(references.get(cite, {}).get("url") or "")
        if url.startswith(("https://", "http://")):
            return url
    return None


def _descriptor(rule: Rule, references: dict[str, dict[str, Any]]) -> dict[str, Any]:
    spec = rule.spec
    sources = [references.get(c, {}) for c in spec.cite]
    source_lines = [f"- {s.get('title', c)} ({s.get('publisher', '')}, {s.get('year', '')})" for c, s in zip(spec.cite, sources)]
    full = one_line(spec.why or spec.title)
    descriptor: dict[str, Any] = {
        "id": spec.id,
        "name": _name(spec.title),
        "shortDescription": {"text": spec.title},
        "fullDescription": {"text": full},
        "help": {"text": f"{full}\n\nFix: {one_line(spec.fix)}\n\nSources:\n" + "\n".join(source_lines)},
        "defaultConfiguration": {"level": LEVEL[spec.severity]},
        "properties": {
            "tags": ["hwlint", layer_name(rule.layer)],
            "problem.severity": PROBLEM_SEVERITY[spec.severity],
            "tiers": spec.tiers if isinstance(spec.tiers, list) else [spec.tiers],
        },
    }
    uri = _help_uri(rule, references)
    if uri:
        descriptor["helpUri"] = uri
    return descriptor


def _extra_descriptor(r: Result) -> dict[str, Any]:
    """A check that is not a pack rule (the manifest file itself, waivers): described by its result."""
    layer = layer_name(r.layer)
    return {
        "id": r.rule_id,
        "name": _name(f"{layer} {r.rule_id}"),
        "shortDescription": {"text": r.title},
        "fullDescription": {"text": f"{r.title} ({layer.lower()})."},
        "defaultConfiguration": {"level": LEVEL[r.severity]},
        "properties": {"tags": ["hwlint", layer], "problem.severity": PROBLEM_SEVERITY[r.severity]},
    }


def fingerprint(result: Result) -> str:
    return hashlib.sha256("\0".join(key(result)).encode()).hexdigest()[:32]


def _result(r: Result, index: int) -> dict[str, Any]:
    message = f"{r.message} Fix: {r.fix}" if r.fix else r.message
    out: dict[str, Any] = {
        "ruleId": r.rule_id,
        "ruleIndex": index,
        "level": LEVEL[r.severity],
        "message": {"text": text(message or r.title)},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": {"uri": quote(repo_relative(r.file), safe="/"), "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": max(1, r.line), "startColumn": max(1, r.column)},
            },
        }],
        "partialFingerprints": {FINGERPRINT: fingerprint(r)},
        "properties": {"manifestPath": r.path, "layer": layer_name(r.layer), "facts": r.facts},
    }
    if r.status == "waived" and r.waiver:
        out["suppressions"] = [{"kind": "inSource", "status": "accepted", "justification": r.reason}]
    return out


def _rules(reviews: list[Review], pack: RulePack) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The rule descriptors (the pack's, then the other checks that fired) and each id's index."""
    rules = [_descriptor(rule, pack.references) for rule in pack.rules]
    index = {d["id"]: i for i, d in enumerate(rules)}
    for r in reported(reviews):
        if r.rule_id not in index:
            index[r.rule_id] = len(rules)
            rules.append(_extra_descriptor(r))
    return rules, index


def document(reviews: list[Review], pack: RulePack, results: list[Any] | None = None) -> dict[str, Any]:
    """The SARIF log; `results` stands in for the results when given (streaming)."""
    rules, index = _rules(reviews, pack)
    errors = [e for review in reviews for e in review.rule_errors]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "hwlint",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
                "properties": {"rulePackDigest": pack_digest(pack)},
            }},
            "invocations": [{
                "executionSuccessful": not errors,
                "toolExecutionNotifications": [{"level": "error", "message": {"text": text(e)}} for e in errors],
            }],
            "columnKind": "unicodeCodePoints",
            "results": results if results is not None else [_result(r, index[r.rule_id]) for r in reported(reviews)],
        }],
    }


def stream(reviews: list[Review], pack: RulePack, write: Callable[[str], None]) -> None:
    """The log, written one result at a time (the results come last in it)."""
    _, index = _rules(reviews, pack)
    stream_dumps(document(reviews, pack, results=[ITEMS]), (_result(r, index[r.rule_id]) for r in reported(reviews)), write)


def render(reviews: list[Review], pack: RulePack) -> str:
    parts: list[str] = []
    stream(reviews, pack, parts.append)
    return "".join(parts)
