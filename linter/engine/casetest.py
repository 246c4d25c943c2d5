"""Rule tests as data: each rule's `tests:` cases run through the real pipeline.

A case names a base manifest (relative to the rule file), dotted-path edits (`set`,
`unset`) and the status the rule must give. `hwlint rules test [DIR]` and the pytest suite
both run them; a rule without at least one passing and one failing case is itself a
failure.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linter.manifest.loader import Document, InputError, load_file
from linter.paths import data_dir
from linter.results import undotted
from linter.engine.review import review_document
from linter.engine.rules import Rule, RulePack, Spec


@dataclass
class Outcome:
    rule_id: str
    case: str
    expected: str
    actual: str
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.expected == self.actual


def edit(data: Any, case: Spec) -> Any:
    data = copy.deepcopy(data)
    for path, value in case.set.items():
        _assign(data, undotted(path), value)
    for path in case.unset:
        _assign(data, undotted(path), None)
    return data


def _assign(data: Any, path: tuple, value: Any) -> None:
    node = data
    for step, following in zip(path, path[1:]):
        if isinstance(node, dict) and step not in node:
            node[step] = [] if isinstance(following, int) else {}
        node = node[step]
    if value is None:
        if isinstance(node, dict):
            node.pop(path[-1], None)
        else:
            del node[path[-1]]
    else:
        node[path[-1]] = value


def run_case(rule: Rule, case: Spec, pack: RulePack, bases: dict[Path, Document] | None = None) -> Outcome:
    """One case: the base manifest (relative to the rule's file), edited, reviewed with only this rule."""
    bases = {} if bases is None else bases
    folder = Path(rule.file).parent.resolve()
    builtin = data_dir("rules").resolve()
    root = builtin.parent if folder == builtin else folder  # the built-in cases use ../examples
    base = (folder / case.base).resolve()
    if os.path.commonpath([root, base]) != str(root):
        return Outcome(rule.id, case.name, case.expect, "error",
                       f"base {case.base} is outside the rule folder {folder}; keep case manifests inside it")
    try:
        if base not in bases:
            bases[base] = load_file(str(base), str(root))
    except InputError as exc:
        return Outcome(rule.id, case.name, case.expect, "error", f"base {case.base}: {exc.message}")
    doc = copy.copy(bases[base])
    try:
        doc.data = edit(doc.data, case)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        return Outcome(rule.id, case.name, case.expect, "error", f"cannot apply set/unset to {case.base}: {type(exc).__name__} {exc}")
    if getattr(case, "catalog", None):
        from linter.manifest.catalog import CatalogError, load_catalog
        from linter.record import replace

        team = (folder / case.catalog).resolve()
        if os.path.commonpath([root, team]) != str(root):
            return Outcome(rule.id, case.name, case.expect, "error",
                           f"catalog {case.catalog} is outside the rule folder {folder}; keep case catalogs inside it")
        try:
            pack = replace(pack, catalog=load_catalog((str(team),)), catalog_folders=[team])
        except CatalogError as exc:
            return Outcome(rule.id, case.name, case.expect, "error", f"catalog {case.catalog}: {exc}")
    review = review_document(doc, pack, case.tier, lambda rule_id: rule_id == rule.id)
    result = next((r for r in review.results if r.rule_id == rule.id), None)
    if result is None:
        problems = "; ".join(f"{r.path}: {r.message}" for r in review.file_findings)
        return Outcome(rule.id, case.name, case.expect, "invalid", problems or "no result")
    return Outcome(rule.id, case.name, case.expect, result.status, result.message or result.reason)


def run_rule(rule: Rule, pack: RulePack, bases: dict[Path, Document]) -> list[Outcome]:
    outcomes = [run_case(rule, case, pack, bases) for case in rule.spec.tests]
    kinds = {c.expect for c in rule.spec.tests}
    for needed in ("pass", "fail"):
        if needed not in kinds:
            outcomes.append(Outcome(rule.id, f"has a {needed}ing case", needed, "missing", "add one to tests:"))
    return outcomes


def run_pack(pack: RulePack, folder: Path | None = None) -> list[Outcome]:
    """Run the cases of every rule, or of the rules defined under `folder`."""
    bases: dict[Path, Document] = {}
    chosen = [r for r in pack.rules if folder is None or Path(r.file).resolve().parent == folder.resolve()]
    return [o for rule in chosen for o in run_rule(rule, pack, bases)]
