"""Hostile rule folders kept as data (tests/hostile_rule_folders/): each is stopped by the
limit meant for it, at the operation that would build too much or run too long in one C-level
call, not by the timer after the damage; and the whole pack has a budget per manifest.

A case passes when the hostile rule is that rule's error (exit 2) naming the limit, and the
built-in rules still gave their results.
"""

from __future__ import annotations

import pytest

from conftest import EXAMPLES, ROOT
from test_files_and_reports import run_limited

FOLDERS = ROOT / "tests" / "hostile_rule_folders"
MANIFEST = EXAMPLES / "multi-node-pretrain.hw.yaml"
ONE_CALL = "is over the limit for one operation"

CASES = {
    "printf-width-after-key": "a format width or precision of 999999999 is over the limit of 100",
    "printf-precision-after-key": "a format width or precision of 999999999 is over the limit of 100",
    "map-over-a-big-list": "over the limit",
    "string-of-a-nested-list": ONE_CALL,
    "count-over-a-huge-list": ONE_CALL,
    "in-over-a-huge-list": ONE_CALL,
    "equal-huge-lists": ONE_CALL,
    "sum-of-lists": "over the limit",
    # the `at` of a pending rule runs inside the rule's own budget, and its timeout is the rule's error
    "at-template-timeout": "RuleTimeout: the rule ran for more than 2 s",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_hostile_rule_is_stopped_by_its_limit(tmp_path, name):
    run = run_limited("check", MANIFEST, "--rules", FOLDERS / name, env={"HWLINT_CACHE_DIR": str(tmp_path)})
    assert run.returncode == 2, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if "rule GPU900: rule error" in line]
    assert len(errors) == 1 and CASES[name] in errors[0], run.stdout[-2000:]
    assert "Traceback" not in run.stderr and "MemoryError" not in run.stdout
    assert f"{MANIFEST}: " in run.stdout and " passed" in run.stdout  # the built-in rules ran


def test_the_whole_pack_has_one_budget_per_manifest(tmp_path):
    run = run_limited("check", MANIFEST, "--rules", FOLDERS / "whole-pack-budget", env={"HWLINT_CACHE_DIR": str(tmp_path)},
                      timeout=120)
    assert run.returncode == 2
    errors = [line for line in run.stdout.splitlines() if ": rule error" in line]
    stopped = [e for e in errors if "the rule ran for more than 2 s" in e]
    not_run = [e for e in errors if "the rule pack ran for more than 10 s on this manifest; this rule was not run" in e]
    assert len(stopped) <= 5 and not_run and len(errors) >= 6, run.stdout[-3000:]
