"""What a change to a manifest does: findings introduced, resolved and still open, and how
the budget moved (GPUs, power, switch ports, memory per GPU).

A finding is keyed by rule id and manifest path (`Result.path`, e.g. `facility.racks[0]`),
never by line: inserting a comment or reordering keys changes no finding. Problems with the
file itself (syntax, schema) have no rule path of their own, so their message joins the key.

The base version comes from a second file (`hwlint diff OLD NEW`) or from git
(`hwlint check FILE... --base REF`: every base version read by one `git cat-file --batch`). A file
that does not exist at REF is a new manifest: everything it fails is introduced.
"""

from __future__ import annotations

import datetime as dt
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
    # money ("money": in the review's currency) and delivery ("date": an ISO date; moves in days)
    ("capex", "Capex (purchases)", "money", ("procurement", "capex")),
    ("opex_per_month", "Opex per month", "money", ("procurement", "opex_per_month")),
    ("rent_per_month", "Rent per month for the same capacity", "money", ("procurement", "rent_per_month")),
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


def key(result: Result) -> tuple[str, str]:
    if result.layer == "FILE":
        return result.rule_id, f"{result.path}: {result.message}"
    return result.rule_id, result.path


@dataclass
class Delta:
    key: str
    label: str
    unit: str  # a unit, a currency code for money, or "date" (old and new are ISO dates)
    old: float | int | str | None
    new: float | int | str | None

    @property
    def change(self) -> float | int | None:
        """new - old; for dates, in days."""
        if self.old is None or self.new is None:
            return None
        if self.unit == "date":
            return (dt.date.fromisoformat(str(self.new)) - dt.date.fromisoformat(str(self.old))).days
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
    unchanged: bool = False  # the file is byte for byte its base version


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
    money = currency(new) or currency(old) or "money"
    if old is not None and currency(old) and currency(new) and currency(old) != currency(new):
        money = f"{currency(old)} -> {currency(new)}"  # the figures are not comparable; say so
    return Changes(
        file=new.file,
        base=base,
        base_exists=old is not None,
        reviewed=reviewed,
        introduced=[r for k, r in after.items() if k not in before],
        resolved=[(r, now.get(k, "gone")) for k, r in before.items() if k not in after],
        still_open=[r for k, r in after.items() if k in before],
        budget=[Delta(k, label, money if unit == "money" else unit, old_budget.get(k), new_budget[k])
                for k, label, unit, _ in BUDGET if old_budget.get(k) is not None or new_budget[k] is not None],
    )


def review_bytes(raw: bytes, path: str, pack: Any, tier: str | None, selected: Any, config: Any = None) -> Review:
    """Review manifest bytes that are not on disk (a base version) as if they were `path`."""
    try:
        doc = load_bytes(raw, path)
    except InputError as exc:
        return not_loaded(path, exc)
    return review_document(doc, pack, tier, selected, config)


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
                config: Any = None) -> list[Changes]:
    """The changes of each review against its file's version at `ref`."""
    import hashlib

    bases = read_bases([r.file for r in reviews], ref)
    out = []
    for new, raw in zip(reviews, bases):
        changes = compare(review_bytes(raw, new.file, pack, tier, selected, config) if raw is not None else None, new, ref)
        changes.unchanged = raw is not None and bool(new.digest) and hashlib.sha256(raw).hexdigest() == new.digest
        out.append(changes)
    return out
