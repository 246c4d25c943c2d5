"""Hostile rule folders kept as data (tests/hostile_rule_folders/): each is stopped by the
limit meant for it, at the operation that would build too much or run too long in one C-level
call, not by the timer after the damage; and the whole pack has a budget per manifest.

A case passes when the hostile rule is that rule's error (exit 2) naming the limit, and the
built-in rules still gave their results.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import EXAMPLES, ROOT, TODAY, hostile_manifest
from linter.engine.rules import load_pack
from test_bad_inputs import measured
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
    "at-template-timeout": "RuleTimeout: the rule used more than 2 s of CPU time",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_hostile_rule_is_stopped_by_its_limit(tmp_path, name):
    run = run_limited("check", MANIFEST, "--rules", FOLDERS / name, env={"HWLINT_CACHE_DIR": str(tmp_path)})
    assert run.returncode == 2, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if "rule GPU900: rule error" in line]
    assert len(errors) == 1 and CASES[name] in errors[0], run.stdout[-2000:]
    assert "Traceback" not in run.stderr and "MemoryError" not in run.stdout
    assert f"{MANIFEST}: " in run.stdout and " passed" in run.stdout  # the built-in rules ran


@pytest.mark.slow
def test_the_whole_pack_has_one_budget_per_manifest(tmp_path):
    run = run_limited("check", MANIFEST, "--rules", FOLDERS / "whole-pack-budget", env={"HWLINT_CACHE_DIR": str(tmp_path)},
                      timeout=120)
    assert run.returncode == 2
    errors = [line for line in run.stdout.splitlines() if ": rule error" in line]
    stopped = [e for e in errors if "the rule used more than 2 s of CPU time" in e]
    # the rules after the first five: not run, or stopped when what was left of the pack's budget ran out
    not_run = [e for e in errors if re.search(r"the rule pack used more than 10 s of CPU time on this manifest; "
                                              r"this rule was (not run|stopped)", e)]
    assert len(stopped) <= 5 and not_run and len(errors) >= 6, run.stdout[-3000:]


# --- budgets in CPU time: the machine's load does not change a verdict ---------------------

@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="pins processes to one CPU (Linux)")
def test_the_4990_rack_manifest_gets_the_same_verdict_beside_a_cpu_hog_as_on_an_idle_machine(tmp_path):
    """A CPU hog pinned to the CPU hwlint runs on, hwlint at nice 19: it gets about 1.5% of the
    CPU, so each power rule takes some 4 s on the clock, past the 2 s a clock budget allowed.
    In CPU time nothing changed, and neither does the verdict."""
    manifest = hostile_manifest("racks-4990", tmp_path)
    cpu = min(os.sched_getaffinity(0))
    env = {**os.environ, "HWLINT_TODAY": TODAY, "HWLINT_CACHE_DIR": str(tmp_path / "cache")}

    def check(busy: bool) -> subprocess.CompletedProcess:
        def pinned() -> None:
            os.sched_setaffinity(0, {cpu})
            if busy:
                os.nice(19)

        return subprocess.run([sys.executable, "-m", "linter.cli", "check", manifest], capture_output=True, text=True,
                              cwd=ROOT, env=env, timeout=900, preexec_fn=pinned)

    idle = check(busy=False)  # also fills the pack cache, so both runs do the same work
    assert idle.returncode == 1 and "rule error" not in idle.stdout, idle.stdout[-2000:]
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    try:
        busy = check(busy=True)
    finally:
        hog.kill()
        hog.wait()
    assert (busy.returncode, busy.stdout) == (idle.returncode, idle.stdout), busy.stdout[-2000:]


def multiplied(folder_name: str, target, files: int, rules_per_file: int = 0, bytes_per_file: int = 0) -> None:
    """`files` rule files from the folder's template.yaml, each of `rules_per_file` records (or
    as many as fit in `bytes_per_file`), ids OPA000, OPA001, ... in order."""
    template = (FOLDERS / folder_name / "template.yaml").read_text()
    head, record = template.split("rules:\n", 1)
    target.mkdir()
    n = 0
    for f in range(files):
        body, count = [], 0
        while (count < rules_per_file) if rules_per_file else (sum(map(len, body)) + len(record) < bytes_per_file):
            body.append(record.replace("id: ID", f"id: OP{chr(ord('A') + n // 1000)}{n % 1000:03d}"))
            n, count = n + 1, count + 1
        (target / f"r{f}.yaml").write_text(head + "rules:\n" + "".join(body))


def test_a_pack_of_twenty_thousand_rules_is_refused_before_any_is_compiled(tmp_path):
    multiplied("ten-files-of-2000-rules", tmp_path / "rules", files=10, rules_per_file=2000)
    code, out, err, seconds, megabytes = measured("check", "--rules", str(tmp_path / "rules"), str(MANIFEST))
    assert code == 2 and out == "" and "Traceback" not in err
    builtin = len(load_pack().rules)  # the built-in rules count toward the pack's limit
    assert err.startswith(f"hwlint: rule error: {tmp_path / 'rules' / 'r0.yaml'}:1:1: the rule pack would hold "
                          f"{builtin + 2000:,} rules with this file; a pack may hold at most 2,000"), err
    assert seconds < 2 and megabytes < 200, f"{seconds:.2f} s of CPU, {megabytes:.0f} MB"


@pytest.mark.slow
def test_loading_a_rule_pack_has_the_pack_budget_in_cpu_time(tmp_path):
    multiplied("slow-to-compile", tmp_path / "rules", files=18, bytes_per_file=490_000)
    code, out, err, seconds, megabytes = measured("check", "--rules", str(tmp_path / "rules"), str(MANIFEST))
    assert code == 2 and out == "" and "Traceback" not in err
    assert re.match(rf"^hwlint: rule error: {re.escape(str(tmp_path / 'rules'))}/r\d+\.yaml:\d+:1: loading the rule pack "
                    r"used more than 10 s of CPU time; refusing it", err), err
    assert seconds < 12 and megabytes < 200, f"{seconds:.2f} s of CPU, {megabytes:.0f} MB"
