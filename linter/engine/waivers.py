"""Waivers: a signed-off exception that turns one failing result into `waived`, for a while.

A waiver in the manifest's `waivers:` list names the rule, optionally the manifest path the
finding points to, a reason, an approver and an expiry date. All but the path are required.
Each waiver is judged on its own and gives at most one finding of its own (layer `WVR`),
placed at the waiver's line in the manifest:

| code   | severity | when                                                           |
| ------ | -------- | -------------------------------------------------------------- |
| WVR001 | error    | reason, approver or expiry is missing, or the reason or approver has no visible text (only spaces or invisible characters): the waiver does not apply |
| WVR002 | error    | the rule id is not in the rule pack                            |
| WVR003 | error    | the rule is marked `waivable: false`: the waiver is rejected   |
| WVR004 | warning  | the expiry date has passed: the waiver no longer applies       |
| WVR005 | warning  | the waiver applies but expires within `EXPIRY_WARNING_DAYS`    |
| WVR006 | warning  | the waiver matches no failing result                           |
| WVR007 | error    | the expiry is not a plain date: it has a time or a time zone   |
| WVR008 | error    | the expiry is further ahead than policy `waiver_max_days`      |
| WVR009 | error    | the config's `waivers.approvers` is set and the approver is not in it: the waiver does not apply |

A waiver is valid through its expiry date (inclusive), judged by the date in UTC (the
review's `today`), whatever the machine's time zone. Its `path` matches the path a result
points to, or any path under it (`facility` covers `facility.racks[0].circuits`). An
expired waiver also leaves a note on the failure it used to cover, so the finding itself
says when the waiver ran out.
"""

from __future__ import annotations

import datetime as dt
import unicodedata

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.manifest.loader import Document
from linter.results import Result
from linter.engine.rules import RulePack

EXPIRY_WARNING_DAYS = 14
REQUIRED = {"reason": "reason", "approver": "approver", "expires": "expiry date"}  # key -> words
TITLE = "Waivers are complete, current and used"


def apply_waivers(results: list[Result], doc: Document, waivers: list[dict[str, Any]], pack: RulePack,
                  today: dt.date, max_days: int | None = None, approvers: list[str] | None = None) -> None:
    """Turn covered failures into `waived`, and append one finding per problem waiver.
    `max_days`: how far ahead of `today` an expiry may lie (policy waiver_max_days);
    `approvers`: who may approve one (the config's waivers.approvers; empty: anyone)."""
    findings = []
    written = doc.data.get("waivers") if isinstance(doc.data, dict) else None
    for index, waiver in enumerate(waivers):
        raw = written[index].get("expires") if isinstance(written, list) and index < len(written) \
            and isinstance(written[index], dict) else None
        finding = _judge(waiver, results, pack, today, raw, max_days, approvers)
        if finding is not None:
            code, severity, key, message, fix = finding
            line, column = doc.position(("waivers", index, key) if key else ("waivers", index))
            findings.append(Result(
                rule_id=code, title=TITLE, layer="WVR", severity=severity, status="fail", message=message,
                fix=fix, file=doc.path, line=line, column=column, path=f"waivers[{index}]", waiver=dict(waiver),
            ))
    results.extend(findings)


def _judge(waiver: dict[str, Any], results: list[Result], pack: RulePack, today: dt.date, raw_expires: Any = None,
           max_days: int | None = None, approvers: list[str] | None = None) -> tuple[str, str, str, str, str] | None:
    """Apply one waiver; return (code, severity, key to point at, message, fix) if it has a problem.
    `raw_expires` is the expiry as written (the loader keeps a time and zone the model drops)."""
    rule_id = waiver["rule"]
    missing = [words for key, words in REQUIRED.items() if not waiver.get(key)]
    if missing:
        return ("WVR001", "error", "", f"The waiver for {rule_id} gives no {_words(missing)}, so it does not apply.",
                "Give every waiver a reason, an approver and an expiry date (YYYY-MM-DD), or remove it.")
    for key in ("approver", "reason"):
        if not _visible(str(waiver[key])):
            return ("WVR001", "error", key,
                    f"The waiver for {rule_id} gives {'an' if key == 'approver' else 'a'} {REQUIRED[key]} with no visible text ({_invisible(str(waiver[key]))}), "
                    "so it does not apply.",
                    f"Write the {REQUIRED[key]} in words ({'who approved the waiver' if key == 'approver' else 'why the finding is accepted'}), "
                    "or remove the waiver.")
    if approvers and str(waiver["approver"]).strip().casefold() not in {a.strip().casefold() for a in approvers}:
        return ("WVR009", "error", "approver",
                f"The waiver for {rule_id} is approved by {waiver['approver']}, who is not among those the config lets "
                f"approve a waiver ({', '.join(approvers)}), so it does not apply.",
                "Have one of them approve the waiver and name them as its approver, or fix the finding.")
    if isinstance(raw_expires, str) and "T" in raw_expires:
        zone = raw_expires[19:].lstrip(".0123456789")
        what = f"a time and the time zone {zone}" if zone else "a time"
        return ("WVR007", "error", "expires",
                f"The waiver for {rule_id} expires at {raw_expires}, with {what}; an expiry is a date (YYYY-MM-DD), the last "
                "day the waiver applies, judged in UTC, so this waiver does not apply.",
                f"Write the expiry as a date alone, e.g. `expires: {raw_expires[:10]}`.")
    rule = pack.get(rule_id)
    if rule is None:
        import difflib  # only for a waiver of an unknown rule

        close = difflib.get_close_matches(rule_id, [r.id for r in pack.rules], n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return ("WVR002", "error", "rule", f"The waiver names {rule_id}, which is not a rule in the pack{hint}.",
                "Correct the rule id (`hwlint rules list` shows them) or remove the waiver.")
    result = next((r for r in results if r.rule_id == rule_id), None)
    if not rule.spec.waivable or rule.spec.never_skip:
        kind = "one of the checks that may never be skipped" if rule.spec.never_skip else "marked not waivable"
        return ("WVR003", "error", "rule",
                f"{rule_id} ({rule.spec.title}) cannot be waived: the rule is {kind}, "
                "so this waiver is rejected and the rule's result stands.",
                "Remove the waiver and meet the requirement" + (f": {result.fix}" if result and result.fix else "."))
    expires = dt.date.fromisoformat(str(waiver["expires"]))
    if max_days is not None and (expires - today).days > max_days:
        latest = today + dt.timedelta(days=int(max_days))
        return ("WVR008", "error", "expires",
                f"The waiver for {rule_id} runs until {expires}, {(expires - today).days:,} days from {today}; a waiver may run at "
                f"most {int(max_days):,} days (policy waiver_max_days), so this one does not apply.",
                f"Set an expiry no later than {latest} and renew the waiver with a new approval then, or fix the finding.")
    covered = [r for r in results if r.rule_id == rule_id and r.status == "fail" and _covers(waiver.get("path"), r.path)]
    if expires < today:
        for failure in covered:
            failure.message = f"{failure.message} (A waiver for this, approved by {waiver['approver']}, expired on {expires}.)"
        return ("WVR004", "warning", "expires",
                f"The waiver for {rule_id} approved by {waiver['approver']} expired on {expires}; it no longer applies.",
                "Fix the finding, or renew the waiver with a new approval and expiry date.")
    if not covered:
        if result is None:  # the rule was deselected (--select/--ignore): nothing to say
            return None
        return ("WVR006", "warning", "", f"The waiver for {rule_id} matches no failing result: {_why_unused(waiver, result)}.",
                "Remove the waiver" + (", or correct its path." if waiver.get("path") else "."))
    for failure in covered:
        failure.status = "waived"
        failure.waiver = dict(waiver)
        failure.reason = f"waived by {waiver['approver']} until {expires}: {waiver['reason']}"
    days = (expires - today).days
    if days <= EXPIRY_WARNING_DAYS:
        when = "today" if days == 0 else f"in {days} day{'s' if days != 1 else ''}"
        return ("WVR005", "warning", "expires",
                f"The waiver for {rule_id} expires on {expires}, {when}; after that the failure counts again.",
                "Fix the finding, or renew the waiver with a new approval before it expires.")
    return None


def _covers(path: str | None, result_path: str) -> bool:
    if not path:
        return True
    path = path.strip()
    return result_path == path or result_path.startswith((path + ".", path + "["))


def _why_unused(waiver: dict[str, Any], result: Result) -> str:
    if result.status == "fail":
        return f"the rule fails at {result.path}, not under {waiver['path']}"
    words = {"pass": "the rule passes", "pending": "the rule is still to confirm",
             "skipped": "the rule does not apply here", "waived": "another waiver already covers it"}
    return words[result.status]


def _visible(text: str) -> bool:
    """Whether `text` shows anything: a letter, digit, punctuation mark or symbol, not only
    spaces, line breaks, format characters (U+200B) or combining marks."""
    return any(unicodedata.category(ch)[0] in "LNPS" for ch in text)


def _invisible(text: str) -> str:
    if not text:
        return "it is empty"
    names = sorted({f"U+{ord(ch):04X}" for ch in text})
    return f"{len(text)} character{'s' if len(text) != 1 else ''}: {', '.join(names[:5])}{', ...' if len(names) > 5 else ''}"


def _words(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]
