"""What a change to a manifest does: findings introduced, resolved and still open, and how
the budget moved (GPUs, power, switch ports, memory per GPU).

A finding is keyed by rule id and manifest path (`Result.path`, e.g. `facility.racks[0]`),
never by line: inserting a comment or reordering keys changes no finding. Problems with the
file itself (syntax, schema) have no rule path of their own, so their message joins the key.

The base version comes from a second file (`hwlint diff OLD NEW`) or from git
(`hwlint check FILE --base REF`, read with `git show REF:./FILE` next to the file). A file
that does not exist at REF is a new manifest: everything it fails is introduced.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linter.physics.facts import Unknown
from linter.manifest.loader import InputError, load_bytes
from linter.numbers import num
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
)


class BaseError(Exception):
    """The base version cannot be read (no git, not a repository, unknown ref)."""


def budget_figures(review: Review) -> dict[str, float | int | None]:
    """The budget's headline numbers; None where the manifest does not give enough data."""
    out: dict[str, float | int | None] = {}
    for key, _, _, path in BUDGET:
        value: Any = review.facts
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        known = isinstance(value, (int, float)) and not isinstance(value, (bool, Unknown))
        out[key] = value if known else None
    return out


def key(result: Result) -> tuple[str, str]:
    if result.layer == "FILE":
        return result.rule_id, f"{result.path}: {result.message}"
    return result.rule_id, result.path


@dataclass
class Delta:
    key: str
    label: str
    unit: str
    old: float | int | None
    new: float | int | None

    @property
    def change(self) -> float | int | None:
        if self.old is None or self.new is None:
            return None
        return round(self.new - self.old, 6)


@dataclass
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


def compare(old: Review | None, new: Review, base: str) -> Changes:
    """Findings (status fail) keyed by rule and manifest path; `old` None: a new manifest.

    When the new version cannot be reviewed (a YAML or schema problem stops the review before
    the rules run), the rules' old findings are not resolved, only unknown: they are left out.
    """
    reviewed = not new.file_findings
    before = {key(r): r for r in (old.results if old else []) if r.status == "fail" and (reviewed or r.layer == "FILE")}
    after = {key(r): r for r in new.results if r.status == "fail"}
    now = {key(r): r.status for r in new.results}
    old_budget = budget_figures(old) if old else {}
    new_budget = budget_figures(new)
    return Changes(
        file=new.file,
        base=base,
        base_exists=old is not None,
        reviewed=reviewed,
        introduced=[r for k, r in after.items() if k not in before],
        resolved=[(r, now.get(k, "gone")) for k, r in before.items() if k not in after],
        still_open=[r for k, r in after.items() if k in before],
        budget=[Delta(k, label, unit, old_budget.get(k), new_budget[k]) for k, label, unit, _ in BUDGET
                if old_budget.get(k) is not None or new_budget[k] is not None],
    )


def review_bytes(raw: bytes, path: str, pack: Any, tier: str | None, selected: Any) -> Review:
    """Review manifest bytes that are not on disk (a base version) as if they were `path`."""
    try:
        doc = load_bytes(raw, path)
    except InputError as exc:
        return not_loaded(path, exc)
    return review_document(doc, pack, tier, selected)


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, timeout=60)
    except FileNotFoundError:
        raise BaseError("--base needs git, and git is not installed") from None
    except subprocess.TimeoutExpired:
        raise BaseError("git did not answer within 60 s") from None


def read_base(file: str, ref: str) -> bytes | None:
    """The bytes of `file` at git revision `ref`, or None if the file did not exist there."""
    if not ref or ref.startswith("-"):
        raise BaseError(f"--base {ref!r} is not a git revision")
    target = Path(file).resolve()
    folder = target.parent
    if not folder.is_dir():
        raise BaseError(f"{file}: no such folder")
    found = _git(folder, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if found.returncode != 0:
        inside = _git(folder, "rev-parse", "--is-inside-work-tree")
        if inside.returncode != 0:
            raise BaseError(f"{file} is not inside a git repository, so --base {ref} cannot be read")
        raise BaseError(f"--base {ref}: no such commit, branch or tag (fetch it first, e.g. git fetch origin {ref})")
    commit = found.stdout.decode().strip()
    shown = _git(folder, "show", f"{commit}:./{target.name}")
    if shown.returncode != 0:
        exists = _git(folder, "cat-file", "-e", f"{commit}:./{target.name}")
        if exists.returncode != 0:
            return None
        raise BaseError(f"git show {ref}:{file} failed: {shown.stderr.decode(errors='replace').strip()}")
    return shown.stdout


def against_ref(new: Review, ref: str, pack: Any, tier: str | None, selected: Any) -> Changes:
    raw = read_base(new.file, ref)
    old = review_bytes(raw, new.file, pack, tier, selected) if raw is not None else None
    return compare(old, new, ref)
