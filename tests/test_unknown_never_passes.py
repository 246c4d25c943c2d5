"""Unknown never passes: deleting one field or one list item of a bundled example, anywhere,
never turns a failing or pending result into a pass, and never crashes.

Every mutant is the example with ONE mapping key (a field, with all it holds) or ONE list item
deleted. All mutants of every bundled example are written to a temporary folder and judged by
one `hwlint check --format json` call (one process for them all), then each rule's status is
compared with the example's own.

What counts as an escape (the rule's result got better while the manifest said less):

* a rule that failed, was pending or was waived and now **passes**. A deleted *field* may
  never do this: a field the manifest leaves out is Unknown (`physics.values.Unknown`), and a
  rule reading it is pending on it. A deleted *list item* makes a different, smaller manifest
  that lists one thing fewer (`nics: [a]` -> `nics: []` says the nodes have no NIC), so its
  pass is legitimate only when the item was the finding's own subject (the result pointed
  into the deleted item: the old quote BUY003 named is gone) or the deletion is noticed: some
  other rule that passed now fails or waits (no NIC: NET005 fails), or one that failed or
  waited now says something else (a rack's only contents item deleted, `contents: []`: the
  rack holds no nodes and passes PWR003, while PWR008 now names the 16 nodes in no rack).
* a rule that failed or was pending and is now **skipped** (not applicable, or another tier).
  A rule that stops applying because the manifest got smaller or vaguer is a pass in disguise,
  so this too is an escape unless the result pointed into the deleted item or the deletion is
  noticed by another rule as above. This admits the frameworks' and models' documented
  defaults (deleting `parallelism.tensor` is writing `tensor: 1`: GPU009 stops applying, and
  the layout no longer multiplies out to the GPUs bought, so GPU005 fails) and a removed
  subject (deleting the only rental quote, whose capacity BUY007 waited for: BUY007, which
  compares rentals, no longer applies). A check of one field that applies only when the field
  is given (GPU011: the global batch against micro-batch x data x accumulation steps) may
  stop applying when that very field is deleted: its result points at the field and it says
  "applies only when the plan gives a global batch size", so the reader sees why.
* waived -> fail is legitimate (deleting a waiver), and so are fail -> pending and
  pending -> fail.

A mutant the schema refuses is fine when it is refused with a located message (exit 2, a
SCHEMA finding naming a line), never with a traceback; nothing passes in such a review.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

import pytest

from conftest import EXAMPLES, ROOT, TODAY

NOT_PASSED = ("fail", "pending", "waived")
WORSE = ("fail", "pending")


def deletions(node, path=()):
    """Every path of a mapping key or a list item in `node`, outermost first."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield path + (key,)
            yield from deletions(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield path + (i,)
            yield from deletions(value, path + (i,))


def without(data, path):
    import copy

    out = copy.deepcopy(data)
    node = out
    for step in path[:-1]:
        node = node[step]
    del node[path[-1]]
    return out


def dotted(path) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def statuses(manifest: dict) -> dict[str, dict]:
    return {r["rule_id"]: r for r in manifest["results"]}


def escapes(before: dict[str, dict], after: dict[str, dict], path: tuple) -> list[str]:
    """The rules whose result got better by deleting `path` (see the module docstring)."""
    deleted = dotted(path)
    noticed = any(r["status"] in WORSE and (before.get(rid, {}).get("status") == "pass" or (
        before.get(rid, {}).get("status") == r["status"]
        and (before[rid].get("message"), before[rid].get("missing")) != (r.get("message"), r.get("missing"))))
        for rid, r in after.items() if rid not in ("WVR", "FILE"))
    out = []
    for rid, old in before.items():
        new = after.get(rid)
        if new is None or old["status"] not in NOT_PASSED:
            continue
        status = new["status"]
        if status not in ("pass", "skipped") or (old["status"] == "waived" and status != "pass"):
            continue
        subject = old.get("path") or ""
        inside = [p for p in [subject, *old.get("missing", [])]
                  if p == deleted or p.startswith(deleted + ".") or p.startswith(deleted + "[")]
        if isinstance(path[-1], int) and inside:
            continue  # the item the finding was about, or waited for, is gone
        if status == "skipped" and subject == deleted:
            continue  # a check of this very field, which applies only when it is given, says so
        if (isinstance(path[-1], int) or status == "skipped") and noticed:
            continue
        out.append(f"{deleted}: {rid} {old['status']} -> {status} ({new.get('reason', '')[:100]})")
    return out


@pytest.mark.slow
def test_deleting_one_field_or_item_never_passes(tmp_path):
    # the JSON report's dates are text: YAML writes them back quoted, which the schema reads the same
    examples = sorted(EXAMPLES.glob("*.hw.yaml"))
    from linter.manifest.loader import load_file

    plan: list[tuple[str, tuple, Path]] = []
    for example in examples:
        data = load_file(str(example)).data
        for k, path in enumerate(deletions(data)):
            target = tmp_path / f"{example.name.removesuffix('.hw.yaml')}-{k:04d}.hw.yaml"
            target.write_text(yaml.safe_dump(without(data, path), sort_keys=False), encoding="utf-8")
            plan.append((example.name, path, target))
    proc = subprocess.run(
        [sys.executable, "-m", "linter.cli", "check", "--format", "json", "--no-cache",
         *map(str, examples), str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, env={**__import__("os").environ, "HWLINT_TODAY": TODAY}, timeout=600)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode in (0, 1, 2), proc.stderr[-2000:]
    report = {Path(m["file"]).resolve(): m for m in json.loads(proc.stdout)["manifests"]}
    found = []
    for name, path, target in plan:
        before = statuses(report[(EXAMPLES / name).resolve()])
        after_manifest = report[target.resolve()]
        after = statuses(after_manifest)
        refused = [r for r in after.values() if r["layer"] == "FILE" and r["status"] == "fail"]
        if refused:
            assert all(r["line"] for r in refused), (name, dotted(path), refused)
            assert not any("internal error" in r["message"] for r in refused), (name, dotted(path), refused)
            assert not any(r["status"] == "pass" for r in after.values() if r["layer"] != "FILE"), (name, dotted(path))
            continue
        found += [f"{name}: {e}" for e in escapes(before, after, path)]
    assert len(plan) > 1500  # every deletion of every bundled example
    assert not found, f"{len(found)} escapes of {len(plan)} mutants:\n" + "\n".join(found[:60])
