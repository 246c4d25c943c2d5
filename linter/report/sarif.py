"""SARIF 2.1.0, in the subset GitHub code scanning reads.

- `tool.driver.rules`: every rule of the pack (plus the file and waiver checks that fired),
  with name, short and full description, help as plain text and as Markdown (what the rule
  checks, why, a failing and a fixed snippet, the fix and its sources: the text of
  docs/rules.md, with templates shown as <placeholders>), `helpUri` to the rule's section of
  docs/rules.md, and the default level from its severity. hwlint has no public address of
  its own, so where docs/rules.md is published is given (`--docs-url`, or `docs_url` in the
  config; the GitHub Action passes the copy of the action it runs); without it there is no
  `helpUri` or `informationUri` (SARIF wants an absolute address, never a placeholder) and
  the help, which holds the whole rule reference, keeps its source names as plain text.
- `results`: the failures, and waived failures carrying an in-source suppression (the waiver
  lives in the manifest). Location: the manifest's path from the repository root, and the
  line and column of the YAML key the rule points at, to the end of the key (columns count
  code points).
- `partialFingerprints`: `hwlintFinding/v1`, a hash of rule id and manifest path (diff.key),
  never the line or its text, so moving unrelated lines or editing the value keeps every alert
  the same alert. `primaryLocationLineHash` is left to GitHub's upload action, which computes
  it from the line's text when it is missing, and logs a warning for every result whose given
  value differs from the one it computes.
- `invocations`: `executionSuccessful` is false when a manifest could not be read or the
  rule pack failed, with a notification for each.
- `automationDetails.id`: the code-scanning category (`--sarif-category`, with the trailing
  slash GitHub's upload action adds), written only when one is given: the upload action
  fills in its own `category` input (or one made from the workflow, job and matrix) only
  when the log has none, so a fixed id here would put every hwlint upload of a repository
  in one category, where each analysis replaces the alerts of the one before.

Plain-text SARIF messages treat `[text](target)` as a link, so brackets and backslashes that
came from a manifest are escaped as the specification asks.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable
from urllib.parse import quote

from linter import __version__
from linter.digest import sha256
from linter.engine.changes import key
from linter.results import Result, layer_name, one_line
from linter.manifest.config import described
from linter.engine.review import Review
from linter.engine.rules import Rule, RulePack, pack_digest
from linter.report import ConfigsInEffect, joined, reported
from linter.report.json import ITEMS, Frame, Spool, dumps, feed
from linter.report.location import repo_relative

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}
FINGERPRINT = "hwlintFinding/v1"
_LINK_TO_REFERENCE = re.compile(r"\[([^\]]*)\]\(#ref-[^)]*\)")


def docs_address(value: str) -> str:
    """`value` as the rule reference's address: an absolute http(s) address of docs/rules.md,
    without a #fragment (each rule adds its own). ValueError says what is wrong."""
    from urllib.parse import urlsplit

    parts = urlsplit(value.strip())
    if parts.scheme not in ("https", "http") or not parts.netloc or parts.fragment or any(c.isspace() for c in value.strip()):
        raise ValueError(f"{value!r} is not an absolute http(s) address without a #fragment, "
                         "e.g. https://github.com/ORG/hwlint/blob/v0.1.0/docs/rules.md")
    return value.strip()


def text(value: str) -> str:
    """Escape a plain-text SARIF message: `\\`, `[` and `]` are literal, never a link."""
    return re.sub(r"([\\\[\]])", r"\\\1", value)


def _name(title: str) -> str:
    return "".join(word[:1].upper() + word[1:] for word in re.findall(r"[A-Za-z0-9]+", title)) or "Rule"


def _descriptor(rule: Rule, pack: RulePack, docs_url: str | None) -> dict[str, Any]:
    from linter.report.docs import rule_markdown, rule_text

    spec = rule.spec
    full = one_line(spec.why or spec.title)
    plain = rule_text(rule, pack).rsplit("\n\nDefined in ", 1)[0]  # not the rule file's path on this machine
    markdown = rule_markdown(rule, pack)
    markdown = markdown.replace("](#ref-", f"]({docs_url}#ref-") if docs_url else _LINK_TO_REFERENCE.sub(r"\1", markdown)
    descriptor = {
        "id": spec.id,
        "name": _name(spec.title),
        "shortDescription": {"text": spec.title},
        "fullDescription": {"text": full},
        "help": {"text": plain, "markdown": markdown},
        "defaultConfiguration": {"level": LEVEL[spec.severity]},
        "properties": {
            "tags": ["hwlint", layer_name(rule.layer)],
            "problem.severity": PROBLEM_SEVERITY[spec.severity],
            "tiers": spec.tiers if isinstance(spec.tiers, list) else [spec.tiers],
        },
    }
    if docs_url:
        descriptor["helpUri"] = f"{docs_url}#{spec.id.lower()}"
    return descriptor


def _extra_descriptor(r: Result, docs_url: str | None) -> dict[str, Any]:
    """A check that is not a pack rule (the manifest file itself, waivers), described from
    docs.FILE_CHECKS as docs/rules.md describes it."""
    from linter.report.docs import FILE_CHECKS, file_check_markdown

    layer = layer_name(r.layer)
    title, means, fix = FILE_CHECKS.get(r.rule_id, (r.title, f"{r.title} ({layer.lower()}).", "See the message."))
    descriptor = {
        "id": r.rule_id,
        "name": _name(f"{layer} {title}"),
        "shortDescription": {"text": title},
        "fullDescription": {"text": means},
        "help": {"text": f"{r.rule_id}: {title}\n\n{means}\n\nFix: {fix}",
                 "markdown": file_check_markdown(r.rule_id) if r.rule_id in FILE_CHECKS else f"**{title}**\n\n{means}"},
        "defaultConfiguration": {"level": LEVEL[r.severity]},
        "properties": {"tags": ["hwlint", layer], "problem.severity": PROBLEM_SEVERITY[r.severity]},
    }
    if r.rule_id in FILE_CHECKS and docs_url:
        descriptor["helpUri"] = f"{docs_url}#{r.rule_id.lower()}"
    return descriptor


def fingerprint(result: Result) -> str:
    return sha256("\0".join(key(result)).encode())[:32]


def automation_id(category: str | None) -> str | None:
    """The run's automationDetails.id for a category, as the upload action writes it (a
    trailing slash: the category is what comes before the last one); None for none given."""
    category = (category or "").strip()
    if not category:
        return None
    return category if category.endswith("/") else category + "/"


def _region(r: Result, lines: Any) -> dict[str, int]:
    """The key the finding points at, from its first character to its last, when the line
    holds that key there (the position may be of a list item or an ancestor instead)."""
    line, column = max(1, r.line), max(1, r.column)
    region = {"startLine": line, "startColumn": column}
    last = (r.path or "").rsplit(".", 1)[-1]
    text = lines(r.file)
    if last and not last.endswith("]") and len(text) >= line:
        at = text[line - 1][column - 1:]
        if at.startswith(last) and at[len(last):].lstrip(" ").startswith(":"):
            region.update(endLine=line, endColumn=column + len(last))
    return region


def _source_lines() -> Any:
    from functools import lru_cache

    @lru_cache(maxsize=64)
    def lines(file: str) -> list[str]:
        try:
            return Path(file).read_text(encoding="utf-8").split("\n")  # the file's own lines, not U+2028
        except (OSError, UnicodeDecodeError, ValueError):
            return []

    return lines


def _result(r: Result, index: int, lines: Any) -> dict[str, Any]:
    message = f"{r.message} Fix: {r.fix}" if r.fix else r.message
    out: dict[str, Any] = {
        "ruleId": r.rule_id,
        "ruleIndex": index,
        "level": LEVEL[r.severity],
        "message": {"text": text(message or r.title)},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": {"uri": quote(repo_relative(r.file), safe="/"), "uriBaseId": "%SRCROOT%"},
                "region": _region(r, lines),
            },
        }],
        "partialFingerprints": {FINGERPRINT: fingerprint(r)},
        "properties": {"manifestPath": r.path, "layer": layer_name(r.layer), "facts": r.facts},
    }
    if r.status == "waived" and r.waiver:
        out["suppressions"] = [{"kind": "inSource", "status": "accepted", "justification": r.reason}]
    return out


def _extra(r: Result, rules: list[dict[str, Any]], index: dict[str, int], docs_url: str | None) -> int:
    """The index of `r`'s rule, describing a check that is not a pack rule when it first fires."""
    at = index.get(r.rule_id)
    if at is None:
        at = index[r.rule_id] = len(rules)
        rules.append(_extra_descriptor(r, docs_url))
    return at


def _rules(reviews: list[Review], pack: RulePack, docs_url: str | None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The rule descriptors (the pack's, then the other checks that fired) and each id's index."""
    rules = [_descriptor(rule, pack, docs_url) for rule in pack.rules]
    index = {d["id"]: i for i, d in enumerate(rules)}
    for r in reported(reviews):
        _extra(r, rules, index, docs_url)
    return rules, index


def _problems(review: Review) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A review's notifications: its rule errors, and why an unreadable file could not be read."""
    errors = [_notification(e) for e in review.rule_errors]
    unread = [_notification(f"{repo_relative(r.file)}: {r.message}", r) for r in review.file_findings] if review.unreadable else []
    return errors, unread


def _document(reviews: list[Review], pack: RulePack, rules: list[dict[str, Any]], results: list[Any],
              docs_url: str | None = None, notifications: list[dict[str, Any]] | None = None,
              deselected: list[tuple[str, str, str]] | None = None, category: str | None = None,
              configs: ConfigsInEffect | None = None) -> dict[str, Any]:
    """The log; `notifications`, `deselected` ((rule id, how, manifest) of each rule a
    manifest's review switched off) and `configs` stand in for what `reviews` hold when given
    (streaming)."""
    if notifications is None:
        found = [_problems(review) for review in reviews]
        notifications = [n for errors, _ in found for n in errors] + [n for _, unread in found for n in unread]
    if deselected is None:
        deselected = [(d["rule_id"], d["how"], repo_relative(review.file)) for review in reviews for d in review.deselected]
    log = _log(rules, results, notifications, pack_digest(pack), docs_url, category)
    if configs is None:
        configs = ConfigsInEffect()
        for review in reviews:
            configs.add(review)
    log["runs"][0]["properties"] = {"configs": [
        {"files": [{"path": repo_relative(p), "sha256": f"sha256:{d}"} for p, d in chain],
         "description": described(list(chain)), "manifests": n} for chain, n in configs.counts.items()]}
    index = {d["id"]: i for i, d in enumerate(rules)}
    overrides = []  # SARIF's place for rules a run switched off: one per (rule, manifest)
    for rule_id, how, where in deselected:
        if rule_id in index:
            overrides.append({
                "descriptor": {"id": rule_id, "index": index[rule_id]},
                "configuration": {"enabled": False},
                "properties": {"deselectedBy": how, "manifest": where},
            })
    if overrides:
        log["runs"][0]["invocations"][0]["ruleConfigurationOverrides"] = overrides
    return log


def document(reviews: list[Review], pack: RulePack, docs_url: str | None = None,
             sarif_category: str | None = None) -> dict[str, Any]:
    rules, index = _rules(reviews, pack, docs_url)
    lines = _source_lines()
    results = [_result(r, index[r.rule_id], lines) for r in reported(reviews)]
    return _document(reviews, pack, rules, results, docs_url, category=sarif_category)


class Stream:
    """The log written a manifest at a time (`add`, then `close`). What comes before the
    results (the rules that fired beyond the pack's, the notifications, the rules switched
    off) is known only at the end, so the results wait in a Spool (memory, then a temporary
    file) and the rest is kept small: a notification per problem, three strings per
    deselected rule and manifest."""

    def __init__(self, write: Callable[[str], None], pack: RulePack, docs_url: str | None = None,
                 sarif_category: str | None = None):
        self.write, self.pack, self.docs_url, self.category = write, pack, docs_url, sarif_category
        self.rules = [_descriptor(rule, pack, docs_url) for rule in pack.rules]
        self.index = {d["id"]: i for i, d in enumerate(self.rules)}
        self.lines = _source_lines()
        self.errors: list[dict[str, Any]] = []
        self.unread: list[dict[str, Any]] = []
        self.deselected: list[tuple[str, str, str]] = []
        self.configs = ConfigsInEffect()
        self.frame = Frame(_document([], pack, self.rules, [ITEMS], docs_url))  # where results go, and how deep
        self.spool = Spool("SARIF")
        self.count = 0

    def add(self, review: Review) -> None:
        for r in reported((review,)):
            result = _result(r, _extra(r, self.rules, self.index, self.docs_url), self.lines)
            self.spool.write(self.frame.item(result, not self.count))
            self.count += 1
        errors, unread = _problems(review)
        self.errors += errors
        self.unread += unread
        self.deselected += [(d["rule_id"], d["how"], repo_relative(review.file)) for d in review.deselected]
        self.configs.add(review)

    def close(self) -> None:
        frame = Frame(_document([], self.pack, self.rules, [ITEMS], self.docs_url, self.errors + self.unread,
                                self.deselected, self.category, self.configs))
        frame.around(self.spool, self.count, self.write)


def stream(reviews: list[Review], pack: RulePack, write: Callable[[str], None], docs_url: str | None = None,
           sarif_category: str | None = None) -> None:
    """The log, written one result at a time (the results come last in it)."""
    feed(Stream(write, pack, docs_url, sarif_category), reviews)


def _notification(message: str, where: Result | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"level": "error", "message": {"text": text(one_line(message))}}
    if where is not None:
        out["locations"] = [{"physicalLocation": {
            "artifactLocation": {"uri": quote(repo_relative(where.file), safe="/"), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": max(1, where.line), "startColumn": max(1, where.column)}}}]
    return out


def _log(rules: list, results: list, notifications: list, digest: str | None,
         docs_url: str | None = None, category: str | None = None) -> dict[str, Any]:
    driver: dict[str, Any] = {"name": "hwlint", "version": __version__, "semanticVersion": __version__}
    if docs_url:
        driver["informationUri"] = docs_url
    driver["rules"] = rules
    if digest:
        driver["properties"] = {"rulePackDigest": digest}
    run: dict[str, Any] = {"tool": {"driver": driver}}
    if automation_id(category):
        run["automationDetails"] = {"id": automation_id(category)}
    run["invocations"] = [{"executionSuccessful": not notifications, "toolExecutionNotifications": notifications}]
    run["columnKind"] = "unicodeCodePoints"
    run["results"] = results
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def failed(message: str, sarif_category: str | None = None) -> str:
    """The log of a run that ended in an internal error: no results, execution unsuccessful."""
    return dumps(_log([], [], [_notification(message)], None, category=sarif_category))


def render(reviews: list[Review], pack: RulePack, docs_url: str | None = None, sarif_category: str | None = None) -> str:
    parts: list[str | bytes] = []
    stream(reviews, pack, parts.append, docs_url, sarif_category)
    return joined(parts)
