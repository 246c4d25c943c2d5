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

from linter.physics.values import Unknown
from linter.manifest.loader import Document, InputError, load_bytes
from linter.numbers import num
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
            recheck: Recheck | None = None) -> Changes:
    """Findings (status fail) keyed by rule and manifest path; `old` None: a new manifest.

    When the new version cannot be reviewed (a YAML or schema problem stops the review before
    the rules run), the rules' old findings are not resolved, only unknown: they are left out.
    `old_settings` (settings_of the base version) and `recheck` (the new version reviewed again
    with some keys replaced) tell a fix from a change of policy or tier; without them, only
    waivers and tier skips are told apart.
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
    if old is None or not reviewed:
        changes.resolved = [(r, result.status if result else "gone") for _, r, result in gone]
        changes.settings = _deselection(new)
        return changes
    policy = _policy_changes(old, new)
    tier_moved = old.tier != new.tier
    # Which settings, put back as they were, make a finding fail again: each on its own, then together.
    kinds = [k for k, moved in (("policy", bool(policy)), ("tier", tier_moved)) if moved]
    fails_again: dict[str, set[tuple[str, str]]] = {}
    if recheck is not None and old_settings is not None and kinds and any(
            result is not None and result.status != "waived" for _, _, result in gone):
        singles = [(k,) for k in kinds] + ([tuple(kinds)] if len(kinds) > 1 else [])
        for combo in singles:
            again = recheck({k: old_settings.get(k) for k in combo})
            fails_again[" and ".join(combo)] = {key(r) for r in _located(again.results) if r.status == "fail"}
            if len(combo) == len(kinds):
                _settings_budget(changes.budget, budget_figures(again))
    moved_by: dict[str, list[str]] = {"policy": [], "tier": [], "waiver": []}
    for k, r, result in gone:
        status = result.status if result else "gone"
        why = ""
        if status == "waived":
            why, kind = "waived" + (f" until {result.waiver.get('expires')}" if result and result.waiver else ""), "waiver"
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
    for name, (was, now_value, text) in policy.items():
        changes.settings.append(Setting("policy", text, sorted(set(moved_by["policy"]))))
    if tier_moved:
        changes.settings.append(Setting("tier", _tier_text(old, new), sorted(set(moved_by["tier"]))))
    changes.settings += _waiver_changes(old, new, moved_by["waiver"])
    changes.settings += _deselection(new)
    return changes


def _policy_changes(old: Review, new: Review) -> dict[str, tuple[Any, Any, str]]:
    """name -> (old value, new value, in words) for each policy value that differs."""
    out = {}
    for name in sorted(set(old.policy) | set(new.policy)):
        was, now = old.policy.get(name, {}), new.policy.get(name, {})
        if was.get("value") == now.get("value"):
            continue
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


def _deselection(review: Review) -> list[Setting]:
    """The rules that did not run, by how they were deselected: their findings are not compared."""
    by_how: dict[str, list[str]] = {}
    for d in review.deselected:
        by_how.setdefault(d["how"], []).append(d["rule_id"])
    def said(how: str) -> str:  # "not selected by --select GPU" reads on its own; "--ignore PWR" needs "deselected by"
        return how if how.startswith("not selected") else f"deselected by {how}"

    return [Setting("deselected", f"{len(ids)} rule{'s' if len(ids) != 1 else ''} {said(how)} "
                                  f"({', '.join(ids)}): not run on either version, so not compared", ids)
            for how, ids in by_how.items()]


def _settings_budget(budget: list[Delta], without: dict[str, Any]) -> None:
    """Mark how much of each budget move the settings made (new vs. the new version judged with
    the base version's policy and tier)."""
    for delta in budget:
        figure = without.get(delta.key)
        if figure is not None and figure != delta.new:
            delta.without_settings = figure


def review_bytes(raw: bytes, path: str, pack: Any, tier: str | None, selected: Any, config: Any = None) -> Review:
    """Review manifest bytes that are not on disk (a base version) as if they were `path`."""
    try:
        doc = load_bytes(raw, path)
    except InputError as exc:
        return not_loaded(path, exc)
    return review_document(doc, pack, tier, selected, config)


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
    """The review of a base version (None: there is none, a new manifest) and its document."""
    if old_raw is None:
        return None, None
    doc = document_of(old_raw, path)
    if doc is None:
        return review_bytes(old_raw, path, pack, tier, selected, config), None
    return review_document(doc, pack, tier, selected, config), doc


def compare_documents(old: Review | None, old_doc: Document | None, new: Review, new_doc: Document | None, base: str,
                      pack: Any, tier: str | None, selected: Any, config: Any = None) -> Changes:
    """compare(), telling fixes from changed settings with the two versions' documents."""
    return compare(old, new, base, settings_of(old_doc), rechecker(new_doc, pack, tier, selected, config))


def _repository(folder: Path) -> Path | None:
    """The work tree `folder` lies in: the nearest folder holding `.git` (a folder, or the
    file a linked work tree or submodule has), found without starting git."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


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
    if not ref or ref.startswith("-") or "\n" in ref:
        raise BaseError(f"--base {ref!r} is not a git revision")
    by_root: dict[Path, list[tuple[int, str]]] = {}
    for index, file in enumerate(files):
        target = Path(file).resolve()
        if not target.parent.is_dir():
            raise BaseError(f"{file}: no such folder")
        root = _repository(target.parent)
        if root is None:
            raise BaseError(f"{file} is not inside a git repository, so --base {ref} cannot be read")
        inside = target.relative_to(root).as_posix()
        if "\n" in inside:
            raise BaseError(f"{file}: git cannot be asked for a path with a line break in it")
        by_root.setdefault(root, []).append((index, inside))
    out: list[bytes | None] = [None] * len(files)
    for root, wanted in by_root.items():
        # The first answer says whether REF names a commit at all; the others are the files.
        answers = _cat_file(root, [f"{ref}^{{commit}}"] + [f"{ref}:{inside}" for _, inside in wanted])
        if answers[0][0] != "commit":
            raise BaseError(f"--base {ref}: no such commit, branch or tag (fetch it first, e.g. git fetch origin {ref})")
        for (index, inside), (kind, content) in zip(wanted, answers[1:]):
            if kind == "blob":
                out[index] = content
            elif kind != "missing":
                raise BaseError(f"--base {ref}: {files[index]} is a {kind} there, not a file")
    return out


def against_ref(reviews: list[Review], ref: str, pack: Any, tier: str | None, selected: Any,
                config: Any = None, sources: dict[str, bytes] | None = None) -> list[Changes]:
    """The changes of each review against its file's version at `ref`. `sources`: the bytes of
    reviews not read from disk (standard input), by file name."""
    import hashlib

    bases = read_bases([r.file for r in reviews], ref)
    out = []
    for new, raw in zip(reviews, bases):
        unchanged = raw is not None and bool(new.digest) and hashlib.sha256(raw).hexdigest() == new.digest
        # The same bytes, judged by the same pack, selection and config as the new version: the
        # base version's review is the new one's (and nothing can have moved). A base judged
        # otherwise (its own config, say) must be reviewed on its own.
        old, old_doc = (new, None) if unchanged else versions(raw, new.file, pack, tier, selected, config)
        new_doc = None if unchanged else document_of(current(new, sources or {}), new.file)
        changes = compare_documents(old, old_doc, new, new_doc, ref, pack, tier, selected, config)
        changes.unchanged = unchanged
        out.append(changes)
    return out


def current(review: Review, sources: dict[str, bytes]) -> bytes | None:
    """The bytes `review` was made from: given, or read again from disk when they still match."""
    import hashlib

    raw = sources.get(review.file)
    if raw is None:
        try:
            raw = Path(review.file).read_bytes()
        except OSError:
            return None
    return raw if hashlib.sha256(raw).hexdigest() == review.digest else None
