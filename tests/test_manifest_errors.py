"""Broken manifests end in a finding at file:line:col with plain words, never a traceback."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES

BASE = (EXAMPLES / "single-node-finetune.hw.yaml").read_text()


def review(hwlint, tmp_path, text):
    path = tmp_path / "bad.hw.yaml"
    path.write_text(text)
    run = hwlint("check", path)
    assert "Traceback" not in run.out + run.err
    return path, run


@pytest.mark.parametrize(
    "old, new, fragment, code",
    [
        ("    hidden_size: 5120", "    hidden_sise: 5120", 'unknown key "hidden_sise" in plan.model; did you mean "hidden_size"?', 1),
        ("  goal: finetune", "  goal: fine-tune", 'plan.goal is the text "fine-tune"; expected one of: pretrain, continued-pretrain, finetune, experiment; did you mean "finetune"?', 1),
        ("    count: 1\n    system", "    count: one\n    system", 'node_pools[0].count must be a whole number, not the text "one"', 1),
        ("    count: 1\n    system", "    count: -4\n    system", "node_pools[0].count is -4; it must be at least 1", 1),
        ("    system: DGX-H100", "    system: DGX-H10", 'names "DGX-H10", which is not in the catalog; did you mean "DGX-H100"?', 1),
        ("  precision: bf16", "  precision: [bf16", "not valid YAML", 2),
        ("  optimizer: adamw", "  optimizer: adamw\n  optimizer: adam", 'duplicate key "optimizer"', 2),
    ],
)
def test_problem_is_reported_at_its_line(hwlint, tmp_path, old, new, fragment, code):
    assert old in BASE
    text = BASE.replace(old, new, 1)
    edited = text.splitlines().index(new.splitlines()[-1 if "optimizer" in new else 0]) + 1
    path, run = review(hwlint, tmp_path, text)
    assert run.code == code, run.out
    first = run.out.splitlines()[0]
    # A YAML parser may notice an unclosed bracket on the next line.
    assert any(first.startswith(f"{path}:{line}:") for line in (edited, edited + 1)[: 2 if code == 2 else 1]), first
    assert fragment in first


def test_missing_required_section(hwlint, tmp_path):
    text = BASE[: BASE.index("plan:")] + BASE[BASE.index("procurement:"):]
    _, run = review(hwlint, tmp_path, text)
    assert run.code == 1 and 'the top level is missing the required key "plan"' in run.out


def test_empty_value_means_to_confirm(hwlint, tmp_path):
    text = BASE.replace("  it_capacity_kw: 17", "  it_capacity_kw:")
    path, run = review(hwlint, tmp_path, text)
    verbose = hwlint("check", "-v", path)
    assert "PWR001 pending" in verbose.out and "facility.it_capacity_kw" in verbose.out
