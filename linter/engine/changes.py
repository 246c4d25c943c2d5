"""What a change to a manifest does: findings introduced, resolved and still open, and how
the budget moved (GPUs, power, switch ports, memory per GPU).

A finding is keyed by rule id and manifest path (`Result.path`, e.g. `facility.racks[0]`),
never by line: inserting a comment or reordering keys changes no finding. Problems with the
file itself (syntax, schema) have no rule path of their own, so their message joins the key.

A finding that stops failing only because of how the manifest is judged, not what it buys, is
not a fix: the reviewers' settings (the manifest's `policy:` and `tier:`, its waivers, and the
rules deselected by --select/--ignore or the config) are reported in their own section. To
tell, the new version is reviewed once more with the base version's policy and tier: a finding
that fails again there was moved by the settings, whatever else changed.

The base version comes from a second file (`hwlint diff OLD NEW`) or from git
(`hwlint check FILE... --base REF`: every base version read by one `git cat-file --batch`). A file
that does not exist at REF is a new manifest: everything it fails is introduced.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path
from typing import Any, Callable

from linter.digest import sha256
from linter.physics.values import Unknown
from linter.manifest.loader import Document, InputError, load_bytes
from linter.numbers import num
from linter.paths import repository_of
from linter.record import field, record, replace
from linter.results import Result
from linter.engine.review import Review, not_loaded, review_document

# (key, label, unit, facts path); every figure is a number the budget table also shows
BUDGET: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("gpus", "GPUs", "", ("gpus_total",)),
    ("compute_nodes", "Compute nodes", "", ("compute_nodes",)),
    ("it_power_kw", "IT power at full load", "kW", ("power", "it_kw")),
    ("facility_limit_kw", "Usable facility power", "kW", ("power", "facility_limit_kw")),
    ("switch_ports_needed", "Switch ports needed", "", ("fabric", "ports_needed")),
    ("switch_ports_present", "Switch ports present", "", ("fabric", "ports_present")),
    ("memory_per_gpu_gb", "Memory needed per GPU", "GB", ("memory", "total_gb")),
    ("usable_memory_per_gpu_gb", "Usable memory per GPU", "GB", ("memory", "usable_gb")),
    # money ("money": in the review's currency) and delivery ("date": an ISO date; moves in days)
    ("capex", "Capex (purchases)", "money", ("procurement", "capex")),
    ("opex_per_month", "Opex per month", "money", ("procurement", "opex_per_month")),
    ("rent_per_month", "Rent per month for the same capacity", "money", ("procurement", "rent_per_month")),
    ("total_cost", "Total cost over the project", "money", ("procurement", "total_cost")),
    ("payback_months", "Payback against renting", "months", ("procurement", "payback_months")),
    ("ready_date", "Ready to train (delivery, installation, burn-in)", "date", ("procurement", "ready_date")),
)


class BaseError(Exception):
    """The base version cannot be read (no git, not a repository, unknown ref)."""


def budget_figures(review: Review) -> dict[str, float | int | str | None]:
    """The budget's headline numbers (dates as ISO text); None where the manifest does not
    give enough data."""
    out: dict[str, float | int | str | None] = {}
    for key, _, unit, path in BUDGET:
        value: Any = review.facts
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        if unit == "date":
            known = isinstance(value, str)
        else:
            known = isinstance(value, (int, float)) and not isinstance(value, (bool, Unknown))
        out[key] = value if known else None
    return out


def currency(review: Review | None) -> str | None:
    """The currency a review reports money in, when it is known."""
    found = (review.facts.get("procurement") or {}).get("currency") if review is not None and review.facts else None
    return found if isinstance(found, str) else None


def _located(results: list[Result]) -> list[Result]:
    return [one for r in results for one in r.located()]


def key(result: Result) -> tuple[str, str]:
    if result.layer == "FILE":
        return result.rule_id, f"{result.path}: {result.message}"
    return result.rule_id, result.path


@record
class Delta:
    key: str
    label: str
    unit: str  # a unit, a currency code for money, or "date" (old and new are ISO dates)
    old: float | int | str | None
    new: float | int | str | None
    # what the figure would be with the base version's policy and tier: the rest of the
    # change is the settings', not the hardware's (None: the settings moved nothing)
    without_settings: float | int | str | None = None

    @property
    def settings_part(self) -> float | int | None:
        """How much of the change the reviewers' settings made (None when none of it)."""
        if self.without_settings is None or self.new is None or self.unit == "date" \
                or not isinstance(self.without_settings, (int, float)):
            return None
        part = round(self.new - self.without_settings, 6)
        return part or None

    @property
    def change(self) -> float | int | None:
        """new - old; for dates, in days."""
        if self.old is None or self.new is None:
            return None
        if self.unit == "date":
            return (dt.date.fromisoformat(str(self.new)) - dt.date.fromisoformat(str(self.old))).days
        return round(self.new - self.old, 6)


@record
class Changes:
    """The difference between a base review and the new review of one manifest."""

    file: str
    base: str  # what the base was: "REF" or the old file's path
    base_exists: bool = True
    reviewed: bool = True  # False: the new version stopped at a file problem; rules not compared
    introduced: list[Result] = field(default_factory=list)
    resolved: list[tuple[Result, str]] = field(default_factory=list)  # (old finding, its status now)
    still_open: list[Result] = field(default_factory=list)
    budget: list[Delta] = field(default_factory=list)
    unchanged: bool = False  # the file is byte for byte its base version
    # what the reviewers changed: policy values, the tier, waivers, deselected rules
    settings: list[Setting] = field(default_factory=list)
    # (old finding, its status now, why): no longer failing because of a setting, so not resolved
    not_fixed: list[tuple[Result, str, str]] = field(default_factory=list)
    # the config that governed each version (path or None) and each key that differs
    config_files: tuple[str | None, str | None] = (None, None)  # the nearest config of each version
    config_chains: tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = ((), ())  # each version's _chain
    config: list[ConfigChange] = field(default_factory=list)
    # (the finding as the base's settings judge the new version, its status now, the relaxed
    # settings named): it fails under the base's config or manifest settings and passes only
    # because they were relaxed; never resolved, never unchanged
    by_relaxation: list[tuple[Result, str, str]] = field(default_factory=list)
    base_fail_on: str | None = None  # the base config's fail_on: a relaxed finding fails the run at it
    fields: list[FieldChange] = field(default_factory=list)  # what the manifest's own values did


@record
class ConfigChange:
    """One key of the governing config that differs between the base and the new version."""

    key: str  # e.g. "policy.power_headroom_pct", "signoff.roles", "ignore"
    old: Any
    new: Any
    direction: str  # "relaxes", "tightens" or "neutral" (changes nothing that is judged)


@record
class FieldChange:
    """One value of the manifest that differs: its path, old and new (None: absent), and how
    much of each budget move it makes on its own (budget key -> change), when measured."""

    path: str
    old: Any
    new: Any
    budget: dict[str, float | int] = field(default_factory=dict)
    steps: tuple[Any, ...] = ()  # the path as keys and indexes


@record
class Setting:
    """One change of how the manifest is judged, in words, and the rules whose result it moved."""

    kind: str  # "policy", "tier", "waiver" or "deselected"
    text: str
    rules: list[str] = field(default_factory=list)


SETTING_KEYS = ("policy", "tier")  # the manifest's keys that say how it is judged (waivers are compared by result)
Recheck = Callable[[dict[str, Any]], Review]  # the new version reviewed with these top-level keys replaced


def settings_of(doc: Document | None) -> dict[str, Any]:
    """The policy and tier a manifest sets, as written (None where it sets none)."""
    data = doc.data if doc is not None and isinstance(doc.data, dict) else {}
    return {k: data.get(k) for k in SETTING_KEYS}


def rechecker(doc: Document | None, pack: Any, tier: str | None, selected: Any, config: Any = None) -> Recheck | None:
    """A way to review `doc` again with some of its top-level keys replaced (None: removed)."""
    if doc is None or not isinstance(doc.data, dict):
        return None

    def recheck(keys: dict[str, Any]) -> Review:
        data = {k: v for k, v in doc.data.items() if k not in keys}
        data.update({k: v for k, v in keys.items() if v is not None})
        return review_document(replace(doc, data=data), pack, tier, selected, config)

    return recheck


def compare(old: Review | None, new: Review, base: str, old_settings: dict[str, Any] | None = None,
            recheck: Recheck | None = None, config: list[ConfigChange] | None = None,
            under_base_config: Callable[[], Review] | None = None) -> Changes:
    """Findings (status fail) keyed by rule and manifest path; `old` None: a new manifest.

    When the new version cannot be reviewed (a YAML or schema problem stops the review before
    the rules run), the rules' old findings are not resolved, only unknown: they are left out.
    `old_settings` (settings_of the base version) and `recheck` (the new version reviewed again
    with some keys replaced) tell a fix from a change of policy or tier; without them, only
    waivers and tier skips are told apart. `config` (config_changes of the two versions' configs)
    and `under_base_config` (the new version reviewed under the base's config) find what fails
    only under the base's config: introduced by relaxation, as is what fails under the base
    version's own policy and tier and did not fail before.
    """
    reviewed = not new.file_findings
    # a finding that names several failing items counts each at its own path (Result.located)
    before = {key(r): r for r in _located(old.results if old else []) if r.status == "fail" and (reviewed or r.layer == "FILE")}
    after = {key(r): r for r in _located(new.results) if r.status == "fail"}
    now = {key(r): r for r in _located(new.results)}
    by_rule = {r.rule_id: r for r in new.results if r.layer != "FILE"}
    old_budget = budget_figures(old) if old else {}
    new_budget = budget_figures(new)
    money = currency(new) or currency(old) or "money"
    if old is not None and currency(old) and currency(new) and currency(old) != currency(new):
        money = f"{currency(old)} -> {currency(new)}"  # the figures are not comparable; say so
    changes = Changes(
        file=new.file,
        base=base,
        base_exists=old is not None,
        reviewed=reviewed,
        introduced=[r for k, r in after.items() if k not in before],
        still_open=[r for k, r in after.items() if k in before],
        budget=[Delta(k, label, money if unit == "money" else unit, old_budget.get(k), new_budget[k])
                for k, label, unit, _ in BUDGET if old_budget.get(k) is not None or new_budget[k] is not None],
    )
    gone = [(k, r, now.get(k) or by_rule.get(r.rule_id)) for k, r in before.items() if k not in after]
    changes.config = list(config or [])
    if old is None or not reviewed:
        changes.resolved = [(r, result.status if result else "gone") for _, r, result in gone]
        changes.settings = _deselection(new, old if reviewed else None)
        if reviewed and under_base_config is not None and any(c.direction == "relaxes" for c in changes.config):
            # a new manifest: what fails only under the base's config was let in by its relaxation
            for k, r in ((key(r), r) for r in _located(under_base_config().results) if r.status == "fail"):
                if k not in after:
                    result = now.get(k) or by_rule.get(r.rule_id)
                    changes.by_relaxation.append((r, result.status if result else "gone", _config_why(changes.config)))
        return changes
    policy = _policy_changes(old, new)
    tier_moved = old.tier != new.tier
    # Which settings, put back as they were, make a finding fail again: each on its own, then together.
    kinds = [k for k, moved in (("policy", bool(policy)), ("tier", tier_moved)) if moved]
    fails_again: dict[str, dict[tuple[str, str], Result]] = {}
    if recheck is not None and old_settings is not None and kinds:
        singles = [(k,) for k in kinds] + ([tuple(kinds)] if len(kinds) > 1 else [])
        for combo in singles:
            again = recheck({k: old_settings.get(k) for k in combo})
            fails_again[" and ".join(combo)] = {key(r): r for r in _located(again.results) if r.status == "fail"}
            if len(combo) == len(kinds):
                _settings_budget(changes.budget, budget_figures(again))
    relaxed = [c for c in changes.config if c.direction == "relaxes"]
    by_config: dict[tuple[str, str], Result] = {}
    if relaxed and under_base_config is not None:
        by_config = {key(r): r for r in _located(under_base_config().results) if r.status == "fail"}
    config_why = _config_why(changes.config)
    moved_by: dict[str, list[str]] = {"policy": [], "tier": [], "waiver": []}
    for k, r, result in gone:
        status = result.status if result else "gone"
        why = ""
        if status == "waived":
            why, kind = "waived" + (f" until {result.waiver.get('expires')}" if result and result.waiver else ""), "waiver"
        elif k in by_config:
            changes.by_relaxation.append((by_config[k], status, config_why))
            continue
        elif status == "skipped" and tier_moved and result is not None and result.reason.startswith("applies at"):
            why, kind = f"it does not apply at {new.tier} (it was judged at {old.tier})", "tier"
        else:
            found = [combo for combo, keys in fails_again.items() if k in keys]
            kind = found[0] if found else ""
            if kind:
                why = _because(kind, policy, old, new)
        if why:
            changes.not_fixed.append((r, status, why))
            for one in kind.split(" and "):
                moved_by[one].append(r.rule_id)
        else:
            changes.resolved.append((r, status))
    # What the change brings that only the relaxed settings keep from failing: it fails under
    # the base's config, or with the base version's own policy and tier, and failed nowhere before.
    masked = {**{k: (r, "") for combo, found in fails_again.items() for k, r in found.items()},
              **{k: (r, config_why) for k, r in by_config.items()}}
    for k, (r, why) in masked.items():
        if k in before or k in after:
            continue
        if not why:
            combo = next(c for c, found in fails_again.items() if k in found)
            why = "passes only " + _because(combo, policy, old, new).replace(
                "(with the base version's settings it still fails)", "(with the base version's settings it fails)")
            for one in combo.split(" and "):
                moved_by[one].append(r.rule_id)
        result = now.get(k) or by_rule.get(r.rule_id)
        changes.by_relaxation.append((r, result.status if result else "gone", why))
    for name, (was, now_value, text) in policy.items():
        changes.settings.append(Setting("policy", text, sorted(set(moved_by["policy"]))))
    if tier_moved:
        changes.settings.append(Setting("tier", _tier_text(old, new), sorted(set(moved_by["tier"]))))
    changes.settings += _waiver_changes(old, new, moved_by["waiver"])
    changes.settings += _deselection(new, old)
    return changes


def _policy_changes(old: Review, new: Review) -> dict[str, tuple[Any, Any, str]]:
    """name -> (old value, new value, in words) for each policy value that differs."""
    out = {}
    for name in sorted(set(old.policy) | set(new.policy)):
        was, now = old.policy.get(name, {}), new.policy.get(name, {})
        if was.get("value") == now.get("value"):
            continue
        if "manifest" not in (was.get("source"), now.get("source")):
            continue  # moved by the config alone: its own section (config_changes) says so
        unit = now.get("unit") or was.get("unit") or ""

        def shown(entry: dict[str, Any]) -> str:
            if "value" not in entry:
                return "unset"
            value = entry["value"]
            figure = num(value, 4) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
            where = {"manifest": "the manifest's", "config": "the config's floor", "default": "the default"}.get(
                entry.get("source", ""), entry.get("source", ""))
            return f"{figure}{_unit(unit)} ({where})"

        out[name] = (was.get("value"), now.get("value"), f"policy {name} went from {shown(was)} to {shown(now)}")
    return out


def _config_why(config: list[ConfigChange]) -> str:
    """Why a finding is introduced-by-relaxation of the config: the relaxing keys, old and new."""
    return "passes only because the config was relaxed (" + "; ".join(
        f"{c.key} {_shown_value(c.old)} -> {_shown_value(c.new)}" for c in config if c.direction == "relaxes") + \
        "): it fails under the base's config"


def _shown_value(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return num(value, 4)
    if isinstance(value, (list, tuple, set)):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def _unit(unit: str) -> str:
    if not unit:
        return ""
    return unit if unit.startswith("%") else f" {unit}"


def _because(kind: str, policy: dict[str, tuple[Any, Any, str]], old: Review, new: Review) -> str:
    parts = []
    if "policy" in kind:
        parts.append("; ".join(f"{name} went from {num(a, 4) if isinstance(a, (int, float)) else a} to "
                               f"{num(b, 4) if isinstance(b, (int, float)) else b}" for name, (a, b, _) in policy.items()))
    if "tier" in kind:
        parts.append(f"the tier went from {old.tier} to {new.tier}")
    return "because " + " and ".join(parts) + " (with the base version's settings it still fails)"


def _tier_text(old: Review, new: Review) -> str:
    def by_tier(review: Review) -> set[str]:
        return {r.rule_id for r in review.results if r.status == "skipped" and r.reason.startswith("applies at")}

    before, after = by_tier(old), by_tier(new)
    dropped, added = sorted(after - before), sorted(before - after)
    text = f"tier changed from {old.tier} to {new.tier} ({new.tier_reason or 'as the counts imply'})"
    if dropped:
        text += f": {len(dropped)} rule{'s' if len(dropped) != 1 else ''} no longer apply ({', '.join(dropped)})"
    if added:
        text += f"{';' if dropped else ':'} {len(added)} rule{'s' if len(added) != 1 else ''} now apply ({', '.join(added)})"
    return text


def _waiver_changes(old: Review, new: Review, waived: list[str]) -> list[Setting]:
    """New, extended, shortened, changed and removed waivers, keyed by rule and path."""
    def keyed(review: Review) -> dict[tuple[str, str], dict[str, Any]]:
        return {(str(w.get("rule", "")), str(w.get("path", ""))): w for w in review.waivers if isinstance(w, dict)}

    before, after = keyed(old), keyed(new)
    out = []
    for (rule, path), waiver in after.items():
        where = f"{rule}{' at ' + path if path else ''}"
        moved = sorted({r for r in waived if r == rule})
        was = before.get((rule, path))
        expires, approver = waiver.get("expires"), waiver.get("approver")
        if was is None:
            text = f"new waiver for {where} until {expires}, approved by {approver}: {waiver.get('reason', '')}".rstrip(": ")
        elif was.get("expires") != expires:
            verb = "extended" if str(expires) > str(was.get("expires")) else "shortened"
            text = f"waiver for {where} {verb} from {was.get('expires')} to {expires}"
        elif was != waiver:
            text = f"waiver for {where} changed ({', '.join(k for k in sorted(set(was) | set(waiver)) if was.get(k) != waiver.get(k))})"
        else:
            if moved:  # the same waiver now covers a finding it did not before
                out.append(Setting("waiver", f"waiver for {where} (until {expires}) now covers a failing finding", moved))
            continue
        out.append(Setting("waiver", text, moved))
    for (rule, path), waiver in before.items():
        if (rule, path) not in after:
            out.append(Setting("waiver", f"waiver for {rule}{' at ' + path if path else ''} removed "
                                         f"(it ran until {waiver.get('expires')})"))
    return out


def _deselection(review: Review, base: Review | None = None) -> list[Setting]:
    """The rules that did not run on `review`, by how they were deselected, and whether the
    `base` version's review ran them (under its own config it may have)."""
    by_how: dict[tuple[str, bool], list[str]] = {}
    skipped_then = {d["rule_id"] for d in base.deselected} if base is not None else None
    for d in review.deselected:
        by_how.setdefault((d["how"], skipped_then is None or d["rule_id"] in skipped_then), []).append(d["rule_id"])

    def said(how: str) -> str:  # "not selected by --select GPU" reads on its own; "--ignore PWR" needs "deselected by"
        return how if how.startswith("not selected") else f"deselected by {how}"

    def where(both: bool) -> str:
        if base is None:
            return "not run, so not compared"
        return "not run on either version, so not compared" if both else "not run on this version; the base version ran them"

    return [Setting("deselected", f"{len(ids)} rule{'s' if len(ids) != 1 else ''} {said(how)} "
                                  f"({', '.join(ids)}): {where(both)}", ids)
            for (how, both), ids in by_how.items()]


def _settings_budget(budget: list[Delta], without: dict[str, Any]) -> None:
    """Mark how much of each budget move the settings made (new vs. the new version judged with
    the base version's policy and tier)."""
    for delta in budget:
        figure = without.get(delta.key)
        if figure is not None and figure != delta.new:
            delta.without_settings = figure


def config_changes(old: Any, new: Any) -> list[ConfigChange]:
    """Each key of the governing config that differs between `old` (the base's) and `new`,
    old and new, marked relaxes or tightens as a sign-off judges it (config.settings and
    config.compare: one place says which way a change moves the gate); besides those, the
    exclusions (a file they leave out is not reviewed: more of them relaxes) and docs_url
    (neutral: it changes nothing that is judged)."""
    from linter.manifest.config import compare, config_key, settings

    out = [ConfigChange(config_key(c.key), c.old, c.new, "relaxes" if c.relaxes else "tightens")
           for c in compare(settings(old), settings(new))]
    if old.exclude != new.exclude:  # None: the defaults; a list replaces them
        narrower = old.exclude is not None and (new.exclude is None or not set(new.exclude) - set(old.exclude))
        out.append(ConfigChange("exclude", old.exclude, new.exclude, "tightens" if narrower else "relaxes"))
    if set(old.extend_exclude) != set(new.extend_exclude):
        more = bool(set(new.extend_exclude) - set(old.extend_exclude))
        out.append(ConfigChange("extend_exclude", list(old.extend_exclude), list(new.extend_exclude),
                                "relaxes" if more else "tightens"))
    if old.docs_url != new.docs_url:
        out.append(ConfigChange("docs_url", old.docs_url, new.docs_url, "neutral"))
    return out


def review_bytes(raw: bytes, path: str, pack: Any, tier: str | None, selected: Any, config: Any = None,
                 place_all: bool = True) -> Review:
    """Review manifest bytes that are not on disk (a base version) as if they were `path`."""
    try:
        doc = load_bytes(raw, path)
    except InputError as exc:
        return not_loaded(path, exc)
    return review_document(doc, pack, tier, selected, config, place_all=place_all)


def document_of(raw: bytes | None, path: str) -> Document | None:
    """The loaded manifest, or None when there is none or it cannot be loaded."""
    if raw is None:
        return None
    try:
        return load_bytes(raw, path)
    except InputError:
        return None


def versions(old_raw: bytes | None, path: str, pack: Any, tier: str | None, selected: Any,
             config: Any = None) -> tuple[Review | None, Document | None]:
    """The review of a base version (None: there is none, a new manifest) and its document.
    Only its failing results are placed (given a path): `compare` keys those alone, and reads
    none of the others' places."""
    if old_raw is None:
        return None, None
    doc = document_of(old_raw, path)
    if doc is None:
        return review_bytes(old_raw, path, pack, tier, selected, config, place_all=False), None
    return review_document(doc, pack, tier, selected, config, place_all=False), doc


Judge = Callable[[Any], tuple[Any, Any]]  # a config -> the rule pack and selection it reviews with


def compare_documents(old: Review | None, old_doc: Document | None, new: Review, new_doc: Document | None, base: str,
                      pack: Any, tier: str | None, selected: Any, config: Any = None, old_config: Any = None,
                      judge: Judge | None = None, attribute: bool = False, folders: list[ConfigChange] = ()) -> Changes:
    """compare(), telling fixes from changed settings with the two versions' documents. With
    `old_config` (the base's config, when it differs from `config`) and `judge`, the new version
    is also reviewed under the base's config; with `attribute`, each field change's own share of
    each budget move is measured (the base version with that one change, reviewed again).
    `folders`: the config's rule and catalog folders whose files changed (folders_at_base)."""
    moved = config_changes(old_config, config) if old_config is not None and config is not None else []
    moved += folders
    under_base = None
    if moved and new_doc is not None:
        def under_base() -> Review:
            base_pack, base_selected = judge(old_config) if judge is not None else (pack, selected)
            return review_document(new_doc, base_pack, tier, base_selected, old_config)
    changes = compare(old, new, base, settings_of(old_doc), rechecker(new_doc, pack, tier, selected, config),
                      moved, under_base)
    if old_doc is not None and new_doc is not None and isinstance(old_doc.data, dict) and isinstance(new_doc.data, dict):
        changes.fields = field_changes(old_doc.data, new_doc.data)
        if attribute and old is not None and changes.reviewed and 0 < len(changes.fields) <= MAX_ATTRIBUTED:
            _attribute(changes, old, old_doc, pack, tier, selected, old_config if old_config is not None else config)
    return changes


MAX_ATTRIBUTED = 12  # more field changes than this are listed, not measured one at a time
# what the manifest says and is not hardware, a plan or a price: sign-offs and free text
_NOT_FIELDS = ("signoff", "signoffs")


def field_changes(old: Any, new: Any, path: tuple[Any, ...] = ()) -> list[FieldChange]:
    """Each value that differs between two manifests' data, by path (`storage.write_gbps`,
    `node_pools[0].count`); a list whose length changed is one change of the whole list."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in [*old, *(k for k in new if k not in old)]:
            if not path and k in _NOT_FIELDS:
                continue
            out += field_changes(old.get(k), new.get(k), (*path, k))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [c for i, (a, b) in enumerate(zip(old, new)) for c in field_changes(a, b, (*path, i))]
    if old == new and type(old) is type(new):
        return []
    return [FieldChange(_path_text(path), old, new, steps=path)]


def _path_text(path: tuple[Any, ...]) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def _with_change(data: dict[str, Any], steps: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A copy of `data` with the value at `steps` replaced (None: removed)."""
    import copy

    out = copy.deepcopy(data)
    holder: Any = out
    for step in steps[:-1]:
        holder = holder[step]
    if value is None and isinstance(holder, dict):
        holder.pop(steps[-1], None)
    else:
        holder[steps[-1]] = value
    return out


def _attribute(changes: Changes, old: Review, old_doc: Document, pack: Any, tier: str | None, selected: Any,
               config: Any) -> None:
    """Each field change's own share of each budget move: the base version with that one change."""
    before = budget_figures(old)
    moving = {d.key: d for d in changes.budget if d.change}
    if not moving:
        return
    for change in changes.fields:
        data = _with_change(old_doc.data, change.steps, change.new)
        figures = budget_figures(review_document(replace(old_doc, data=data), pack, tier, selected, config))
        for k, delta in moving.items():
            was, now = before.get(k), figures.get(k)
            if was is None or now is None or was == now:
                continue
            if delta.unit == "date":
                part: float | int = (dt.date.fromisoformat(str(now)) - dt.date.fromisoformat(str(was))).days
            else:
                part = round(now - was, 6)
            if part:
                change.budget[k] = part


def _cat_file(root: Path, names: list[str]) -> list[tuple[str, bytes]]:
    """(type or "missing", content) of each object name, from one `git cat-file --batch`."""
    request = "".join(f"{name}\n" for name in names).encode()
    try:
        done = subprocess.run(["git", "-C", str(root), "cat-file", "--batch"], input=request,
                              capture_output=True, timeout=60)
    except FileNotFoundError:
        raise BaseError("--base needs git, and git is not installed") from None
    except subprocess.TimeoutExpired:
        raise BaseError("git did not answer within 60 s") from None
    if done.returncode != 0:
        raise BaseError(f"git cat-file failed in {root}: {done.stderr.decode(errors='replace').strip()}")
    out, at, answers = done.stdout, 0, []
    for name in names:
        end = out.index(b"\n", at)
        header = out[at:end].decode(errors="replace")
        at = end + 1
        if header.endswith((" missing", " ambiguous")) or header == name:
            answers.append(("missing", b""))
            continue
        _, kind, size = header.rsplit(" ", 2)
        answers.append((kind, out[at:at + int(size)]))
        at += int(size) + 1  # the content, then a newline
    return answers


def read_bases(files: list[str], ref: str) -> list[bytes | None]:
    """The bytes of each of `files` at git revision `ref` (None where a file did not exist
    there), read with one git process per repository, so one for the usual run."""
    return read_versions(files, ref)[0]


BaseConfig = list[tuple[Path, bytes]]  # the chain of config files (as on disk, the root first) and their bytes at the base


def read_versions(files: list[str], ref: str) -> tuple[list[bytes | None], list[BaseConfig]]:
    """The bytes of each of `files` at git revision `ref`, and the config chain that governed
    each there: in each folder from the repository root down to the file's, the `.hwlint.yaml`
    or `pyproject.toml` with [tool.hwlint] as of `ref` (config.chain's rule). All read by the
    same one git process per repository."""
    from linter.manifest.config import NAMES

    if not ref or ref.startswith("-") or "\n" in ref:
        raise BaseError(f"--base {ref!r} is not a git revision")
    by_root: dict[Path, list[tuple[int, str]]] = {}
    for index, file in enumerate(files):
        target = Path(file).resolve()
        if not target.parent.is_dir():
            raise BaseError(f"{file}: no such folder")
        root = repository_of(target.parent)
        if root is None:
            raise BaseError(f"{file} is not inside a git repository, so --base {ref} cannot be read")
        inside = target.relative_to(root).as_posix()
        if "\n" in inside:
            raise BaseError(f"{file}: git cannot be asked for a path with a line break in it")
        by_root.setdefault(root, []).append((index, inside))
    out: list[bytes | None] = [None] * len(files)
    configs: list[BaseConfig] = [[] for _ in files]
    for root, wanted in by_root.items():
        # Each folder from a file's own up to the repository's root may hold its config.
        folders = {index: [str(Path(inside).parent.as_posix()), *(p.as_posix() for p in Path(inside).parent.parents)]
                   for index, inside in wanted}
        candidates = list(dict.fromkeys(
            f"{'' if folder == '.' else folder + '/'}{name}" for index, _ in wanted for folder in folders[index]
            for name in NAMES))
        # The first answer says whether REF names a commit at all; then the files, then the configs.
        answers = _cat_file(root, [f"{ref}^{{commit}}"] + [f"{ref}:{inside}" for _, inside in wanted]
                            + [f"{ref}:{c}" for c in candidates])
        if answers[0][0] != "commit":
            raise BaseError(f"--base {ref}: no such commit, branch or tag (fetch it first, e.g. git fetch origin {ref})")
        for (index, inside), (kind, content) in zip(wanted, answers[1:]):
            if kind == "blob":
                out[index] = content
            elif kind != "missing":
                raise BaseError(f"--base {ref}: {files[index]} is a {kind} there, not a file")
        found = {c: content for c, (kind, content) in zip(candidates, answers[1 + len(wanted):]) if kind == "blob"}
        for index, _ in wanted:
            configs[index] = _chain_at(root, folders[index], found, NAMES)
    return out, configs


def _chain_at(root: Path, folders: list[str], found: dict[str, bytes], names: tuple[str, ...]) -> BaseConfig:
    """The chain among `found` (repository path -> bytes at the base) as config.chain builds
    it on disk: in each folder from the repository root down, the config find() would choose."""
    from linter.manifest.config import holds_tool_hwlint

    out = []
    for folder in reversed(folders):
        for name in names:
            inside = f"{'' if folder == '.' else folder + '/'}{name}"
            raw = found.get(inside)
            if raw is None or (name == "pyproject.toml" and not holds_tool_hwlint(raw)):
                continue
            out.append((root / inside, raw))
            break
    return out


def _folder_at(folder: str, ref: str) -> dict[str, bytes] | None:
    """The `*.yaml` files (name -> bytes) a pack reads in `folder` as of git revision `ref`;
    None when the folder is not in a repository (then only the one on disk is known)."""
    where = Path(folder).resolve()
    root = repository_of(where)
    if root is None:
        return None
    inside = where.relative_to(root).as_posix()
    try:
        listed = subprocess.run(["git", "-C", str(root), "ls-tree", "-z", "--full-tree", ref, "--", f"{inside}/"],
                                capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BaseError(f"git could not list {folder} at {ref}: {exc}") from None
    names = [entry.split(b"\t", 1)[1].decode("utf-8", "replace") for entry in listed.stdout.split(b"\0")
             if b"\t" in entry and entry.split(b" ", 2)[1] == b"blob"]
    names = [n for n in names if n.endswith(".yaml")]
    blobs = _cat_file(root, [f"{ref}:{n}" for n in names]) if names else []
    return {Path(n).name: content for n, (kind, content) in zip(names, blobs) if kind == "blob"}


def _on_disk(folder: str) -> dict[str, bytes]:
    try:
        return {p.name: p.read_bytes() for p in sorted(Path(folder).glob("*.yaml")) if p.is_file()}
    except OSError:
        return {}


def folders_at_base(config: Any, ref: str, memo: dict[str, tuple[str, ConfigChange | None]] | None = None
                    ) -> tuple[Any, list[ConfigChange]]:
    """`config` (the base's) with each rule and catalog folder as it was at `ref`, where its
    files differ from the working tree's (copied to a temporary folder the run removes), and a
    change for each such folder: a team catalog or rule file edited in the change under review
    is judged as the config is, never as "unchanged". A folder's files changed in any way
    relax the review (a catalog entry may stand in for a built-in part, a rule may be gone)."""
    import atexit
    import shutil
    import tempfile

    memo = {} if memo is None else memo  # folder -> (the folder to judge the base with, its change): one look per run
    moved: list[ConfigChange] = []
    replaced: dict[str, list[str]] = {}
    for kind in ("rules", "catalog"):
        folders = list(getattr(config, kind, []) or [])
        for i, folder in enumerate(folders):
            if folder not in memo:
                then, now = _folder_at(folder, ref), _on_disk(folder)
                if then is None or then == now:
                    memo[folder] = (folder, None)
                else:
                    changed = [n + (" (gone)" if n not in now else " (new)" if n not in then else "")
                               for n in sorted({*then, *now}) if then.get(n) != now.get(n)]
                    copy = tempfile.mkdtemp(prefix="hwlint-base-")
                    atexit.register(shutil.rmtree, copy, True)
                    for name, content in then.items():
                        (Path(copy) / name).write_bytes(content)
                    memo[folder] = (copy, ConfigChange(f"{kind} folder {folder}", "as at the base",
                                                       f"changed: {', '.join(changed)}", "relaxes"))
            folders[i], change = memo[folder]
            moved += [change] if change else []
        replaced[kind] = folders
    if not moved:
        return config, []
    return replace(config, rules=replaced["rules"], catalog=replaced["catalog"]), moved


def _with_folders(judge: Judge, config: Any, judged: Any) -> Judge:
    """`judge`, building the pack of the base's `config` from `judged` (the same config with its
    folders as they were at the base): every other config as `judge` does."""
    def base(asked: Any) -> Any:
        return judge(judged if asked is config else asked)

    return base


def against_ref(reviews: list[Review], ref: str, pack: Any, tier: str | None, selected: Any,
                config: Any = None, sources: dict[str, bytes] | None = None, judge: Judge | None = None) -> list[Changes]:
    """The changes of each review against its file's version at `ref`. `sources`: the bytes of
    reviews not read from disk (standard input), by file name. With `judge` (a config -> the
    pack and selection it reviews with), each base version is judged under the config that
    governed it at `ref` (read from git, config.find's rule); without, under `config`."""
    bases, base_configs = read_versions([r.file for r in reviews], ref)
    plans = []
    folders: dict[str, tuple[str, ConfigChange | None]] = {}
    chains: dict[tuple, tuple[Any, str]] = {}  # each distinct base chain parsed once a run
    for new, raw, found in zip(reviews, bases, base_configs):
        if judge is None:
            old_config, note = config, ""
        else:
            chain_key = (id(config), *((str(path), content) for path, content in found))
            if chain_key not in chains:
                chains[chain_key] = base_config(found, config)
            old_config, note = chains[chain_key]
        moved = config_changes(old_config, config) if old_config is not config and config is not None else []
        judged, edited = folders_at_base(old_config, ref, folders) if judge is not None and old_config is not None \
            else (old_config, [])
        moved += edited
        base_judge = _with_folders(judge, old_config, judged) if edited else judge
        same_config = not moved and _config_path(old_config) == _config_path(config)
        base_pack, base_selected = base_judge(old_config) if judge is not None and not same_config else (pack, selected)
        unchanged = raw is not None and bool(new.digest) and sha256(raw) == new.digest
        # The same bytes, judged by the same pack, selection and config as the new version: the
        # base version's review is the new one's (and nothing can have moved). A base judged
        # otherwise (its own config) is reviewed on its own.
        # `asked`: what versions() reviews the base version with; None where the new review serves
        asked = None if unchanged and same_config else (raw, new.file, base_pack, tier, base_selected, old_config)
        plans.append((new, same_config, old_config, note, edited, base_judge, asked))

    def changes_of(plan: tuple) -> Changes:
        new, same_config, old_config, note, edited, base_judge, asked = plan
        if asked is None:
            old, old_doc, new_doc = new, None, None
        else:
            old, old_doc = versions(*asked)
            new_doc = document_of(current(new, sources or {}), new.file)
        changes = compare_documents(old, old_doc, new, new_doc, ref, pack, tier, selected, config,
                                    None if same_config else old_config, base_judge, folders=edited)
        changes.unchanged = asked is None
        changes.config_files = (_config_path(old_config), _config_path(config))
        changes.config_chains = (_chain(old_config), _chain(config))
        changes.base_fail_on = getattr(old_config, "fail_on", None)
        if note:
            changes.settings.append(Setting("config", note))
        return changes

    from linter.engine.bulk import each

    # each file's changes in order, in workers while they are measured faster (as the reviews
    # were): a worker sends back only the file's Changes, not the two reviews
    return list(each(plans, changes_of))


def _config_path(config: Any) -> str | None:
    return getattr(config, "path", None)


def _chain(config: Any) -> tuple[tuple[str, str], ...]:
    """(file as reports show it, sha256) of each config in effect, the root first."""
    from linter.paths import relative

    return tuple((relative(path), digest) for path, digest in getattr(config, "chain", None) or ())


def base_config(found: BaseConfig, config: Any) -> tuple[Any, str]:
    """The config that governed a base version (its chain `found` by read_versions), and a
    note when it cannot be read (then the current `config` judges the base too, and the note
    says so)."""
    from linter.manifest.config import ConfigError, chain_of
    from linter.paths import relative

    then = [(relative(path), sha256(raw)) for path, raw in found]
    if config is not None and [(relative(p), d) for p, d in getattr(config, "chain", [])] == then:
        return config, ""  # the same files, unchanged
    try:
        return chain_of(found), ""
    except ConfigError as exc:
        return config, f"the base's config cannot be read ({exc}), so the base version is judged under the current one"


def current(review: Review, sources: dict[str, bytes]) -> bytes | None:
    """The bytes `review` was made from: given, or read again from disk when they still match."""
    raw = sources.get(review.file)
    if raw is None:
        try:
            raw = Path(review.file).read_bytes()
        except OSError:
            return None
    return raw if sha256(raw) == review.digest else None
