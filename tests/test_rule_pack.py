"""The rule pack: every rule's own cases (one pytest case each), coverage of the layers,
tier skips, waivability, policy overrides, and `hwlint rules test` on a user's folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, hwlint_process
from linter.engine.casetest import run_case
from linter.engine.rules import load_pack

PACK = load_pack()
CASES = [(rule, case) for rule in PACK.rules for case in rule.spec.tests]


@pytest.mark.parametrize("rule, case", CASES, ids=[f"{r.id}: {c.name}" for r, c in CASES])
def test_rule_case(rule, case):
    outcome = run_case(rule, case, PACK)
    assert outcome.actual == outcome.expected, outcome.detail


def test_every_rule_has_a_passing_and_a_failing_case():
    lacking = [r.id for r in PACK.rules if not {"pass", "fail"} <= {c.expect for c in r.spec.tests}]
    assert not lacking


def test_the_pack_covers_every_layer_with_at_least_thirty_rules():
    layers = {r.layer for r in PACK.rules}
    assert layers == {"GPU", "LNK", "NET", "MEM", "STO", "PWR", "OPS", "BUY"}
    assert len(PACK.rules) >= 30


def test_tokens_per_parameter_is_only_a_note():
    # DOMAIN.md: the Chinchilla ratio is a secondary reading and advice, never an error.
    assert PACK.get("GPU007").spec.severity == "info"
    assert PACK.get("MEM001").spec.severity == "warning"  # 2x host RAM is advice


def test_power_cooling_checkpoint_space_and_backup_are_never_skipped_by_tier():
    never_skipped = ["PWR001", "PWR002", "PWR003", "PWR004", "STO003", "STO006"]
    assert all(PACK.get(i).spec.tiers == "all" for i in never_skipped)
    assert not any(PACK.get(i).spec.waivable for i in ("PWR001", "PWR002", "PWR003", "STO006"))


def test_headroom_backup_and_checkpoint_space_still_fail_at_the_smallest_tier(hwlint):
    flawed = EXAMPLES / "flawed-cluster.hw.yaml"
    run = hwlint("check", "--tier", "single-gpu", "--select", "PWR001,PWR004,STO003,STO006", flawed)
    assert run.code == 1
    for rule_id in ("PWR001", "PWR004", "STO003", "STO006"):
        assert f" {rule_id} error " in run.out


def test_a_single_node_skips_the_fabric_and_the_parallel_file_system(hwlint):
    # The flawed cluster fails NET005 and STO004; reviewed as one node they are not applicable.
    flawed = EXAMPLES / "flawed-cluster.hw.yaml"
    assert hwlint("check", "--select", "NET005,STO004", "--fail-on", "warning", flawed).code == 1
    run = hwlint("check", "--tier", "single-node", "--select", "NET,STO004", "--fail-on", "info", flawed)
    assert run.code == 0, run.out
    assert "0 failing" in run.out and "not applicable" in run.out


def _manifest(tmp_path: Path, extra: str, base: str = "flawed-cluster.hw.yaml") -> Path:
    path = tmp_path / "m.hw.yaml"
    path.write_text((EXAMPLES / base).read_text(encoding="utf-8") + extra, encoding="utf-8")
    return path


def test_a_waiver_cannot_cover_a_missing_backup(hwlint, tmp_path):
    waiver = "\nwaivers:\n  - {rule: STO006, reason: later, approver: cto@example.com, expires: 2027-06-30}\n"
    run = hwlint("check", "--select", "STO006", _manifest(tmp_path, waiver))
    assert run.code == 1 and "STO006 error" in run.out


def test_policy_in_the_manifest_moves_a_threshold_and_the_review_says_so(hwlint, tmp_path):
    flawed = EXAMPLES / "flawed-cluster.hw.yaml"
    assert "MEM001 warning" in hwlint("check", "--select", "MEM001", flawed).out
    path = _manifest(tmp_path, "\npolicy:\n  host_ram_ratio: 1.5\n")
    assert "MEM001 warning" not in hwlint("check", "--select", "MEM001", path).out
    review = hwlint("check", "--format", "markdown", "--select", "MEM001", path).out.replace("\\_", "_")
    assert "| host_ram_ratio | 1.5x | manifest |" in review


def test_missing_data_is_pending_and_names_the_field(hwlint, tmp_path):
    text = (EXAMPLES / "multi-node-pretrain.hw.yaml").read_text(encoding="utf-8")
    path = tmp_path / "m.hw.yaml"
    path.write_text(text.replace("    tokens_billion: 2000\n", ""), encoding="utf-8")
    review = hwlint("check", "--format", "markdown", "--select", "STO001", path).out.replace("\\_", "_")
    assert "needs plan.dataset.tokens_billion" in review


def test_rules_test_runs_every_builtin_case_and_prints_a_line_each(hwlint):
    run = hwlint("rules", "test")
    assert run.code == 0, run.out
    lines = run.out.splitlines()
    assert len(lines) == len(CASES) + 1
    assert lines[-1] == f"{len(CASES)} passed, 0 failed"


TEAM_RULE = """\
rules:
  - id: OPS101
    title: Our clusters keep three backup copies
    severity: warning
    tiers: all
    require: "manifest.storage.backup.copies >= 3"
    message: "Only {{{{ manifest.storage.backup.copies }}}} backup copies."
    fix: Keep three.
    cite: [seed-hardware-layers]
    at: storage.backup.copies
    tests:
      - {{name: two copies, base: cases/base.hw.yaml, expect: {two}}}
      - name: three copies
        base: cases/base.hw.yaml
        set: {{"storage.backup.copies": 3}}
        expect: pass
"""


def _team_folder(tmp_path: Path, two: str = "fail") -> Path:
    rules = tmp_path / "team-rules"
    (rules / "cases").mkdir(parents=True)
    (rules / "cases" / "base.hw.yaml").write_text(
        (EXAMPLES / "multi-node-pretrain.hw.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (rules / "team.yaml").write_text(TEAM_RULE.format(two=two), encoding="utf-8")
    return rules


def test_rules_test_runs_a_users_folder_with_bases_relative_to_the_rule_file(tmp_path):
    folder = _team_folder(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = hwlint_process("rules", "test", folder, cwd=elsewhere)
    assert run.code == 0, run.out + run.err
    assert run.out.splitlines() == ["ok   OPS101 two copies", "ok   OPS101 three copies", "2 passed, 0 failed"]


def test_rules_test_fails_on_a_wrong_expectation(tmp_path):
    run = hwlint_process("rules", "test", _team_folder(tmp_path, two="pass"), cwd=tmp_path)
    assert run.code == 1
    assert "FAIL OPS101 two copies: expected pass, got fail (Only 2 backup copies.)" in run.out


def test_rules_test_demands_a_failing_case(tmp_path):
    folder = _team_folder(tmp_path)
    text = (folder / "team.yaml").read_text(encoding="utf-8")
    (folder / "team.yaml").write_text(text.replace("      - {name: two copies, base: cases/base.hw.yaml, expect: fail}\n", ""))
    run = hwlint_process("rules", "test", folder, cwd=tmp_path)
    assert run.code == 1
    assert "FAIL OPS101 has a failing case: expected fail, got missing" in run.out


def test_naming_the_builtin_folder_loads_it_once(hwlint, monkeypatch):
    monkeypatch.chdir(ROOT)
    run = hwlint("rules", "test", "rules")
    assert run.code == 0, run.err
    assert run.out.splitlines()[-1] == f"{len(CASES)} passed, 0 failed"
