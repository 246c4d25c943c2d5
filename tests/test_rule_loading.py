"""A broken rule pack is a load error naming the rule file and line, never a silent drop."""

from __future__ import annotations

import textwrap

from conftest import EXAMPLES

GOOD_RULE = """\
rules:
  - id: OPS901
    title: The plan names a goal
    severity: info
    tiers: all
    require: "manifest.plan.goal in ['pretrain', 'finetune', 'continued-pretrain', 'experiment']"
    message: "goal is {{ manifest.plan.goal }}"
    fix: "name a goal"
    cite: [seed-hardware-layers]
    at: plan.goal
"""


def write(folder, name, text):
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(textwrap.dedent(text))
    return folder


def check(hwlint, folder):
    return hwlint("check", "--rules", folder, EXAMPLES / "single-node-finetune.hw.yaml")


def test_extra_rule_folder_runs(hwlint, tmp_path):
    folder = write(tmp_path / "r", "ops.yaml", GOOD_RULE)
    run = hwlint("check", "-v", "--rules", folder, "--select", "OPS901", EXAMPLES / "single-node-finetune.hw.yaml")
    assert run.code == 0 and "1 passed" in run.out


def test_unknown_manifest_field_points_at_the_rule_line(hwlint, tmp_path):
    folder = write(tmp_path / "r", "ops.yaml", GOOD_RULE.replace("manifest.plan.goal in", "manifest.plan.gaol in"))
    run = check(hwlint, folder)
    assert run.code == 2
    assert f"{folder / 'ops.yaml'}:6:" in run.err
    assert 'reads manifest.plan.gaol, which is not in the manifest schema; did you mean "goal"?' in run.err


def test_unknown_fact_and_citation(hwlint, tmp_path):
    text = GOOD_RULE.replace("manifest.plan.goal in", "facts.gpu_totals > 0 and manifest.plan.goal in")
    text = text.replace("[seed-hardware-layers]", "[zero-2021]")
    run = check(hwlint, write(tmp_path / "r", "ops.yaml", text))
    assert run.code == 2
    assert 'not a derived fact; did you mean "gpus_total"?' in run.err
    assert 'cites "zero-2021", which is not in rules/references.yaml; did you mean "zero-2020"?' in run.err


def test_schema_violation_in_a_rule(hwlint, tmp_path):
    run = check(hwlint, write(tmp_path / "r", "ops.yaml", GOOD_RULE.replace("severity: info", "severity: fatal")))
    assert run.code == 2 and "ops.yaml:4:" in run.err and "severity" in run.err


def test_duplicate_rule_id(hwlint, tmp_path):
    folder = write(tmp_path / "r", "ops.yaml", GOOD_RULE)
    write(folder, "more.yaml", GOOD_RULE)
    run = check(hwlint, folder)
    assert run.code == 2 and "rule OPS901 is defined twice" in run.err


def test_builtin_id_cannot_be_redefined(hwlint, tmp_path):
    run = check(hwlint, write(tmp_path / "r", "ops.yaml", GOOD_RULE.replace("OPS901", "PWR001")))
    assert run.code == 2 and "PWR001 is defined twice" in run.err


def test_bad_expression_syntax(hwlint, tmp_path):
    run = check(hwlint, write(tmp_path / "r", "ops.yaml", GOOD_RULE.replace('in [', 'in [[')))
    assert run.code == 2 and "require is not a valid expression" in run.err


def test_missing_rule_folder(hwlint, tmp_path):
    run = check(hwlint, tmp_path / "absent")
    assert run.code == 2 and "Traceback" not in run.err
