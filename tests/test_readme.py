"""The README's commands and sample output stay true."""

from __future__ import annotations

import re

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_first_two_commands_set_up_review_and_test():
    blocks = re.findall(r"```sh\n(.+?)\n```", README, re.S)
    review, tests = blocks[0], blocks[1]
    assert "pip install -e ." in review and "hwlint check" in review and "examples/" in review
    assert tests.endswith("python -m pytest")
    # CI runs the same test command the README gives.
    assert "python -m pytest" in (ROOT / ".ci" / "run").read_text()


def test_sample_text_output_is_what_hwlint_prints(hwlint, monkeypatch):
    monkeypatch.chdir(ROOT)
    sample = [line for line in README.splitlines() if line.startswith("examples/flawed-cluster.hw.yaml:")]
    assert sample
    run = hwlint("check", "examples/flawed-cluster.hw.yaml")
    for line in sample:
        assert line in run.out.splitlines()


def test_the_limits_table_gives_the_code_s_numbers():
    """Each limit docs/limits.md states is the number the code enforces."""
    import json

    from linter.engine import packcache, rules, sandbox
    from linter.manifest import loader, validate
    from linter.signoff import records

    limits = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    section = limits.split("## Limits\n", 1)[1].split("\n## ", 1)[0]
    rows = {row.split(" | ")[0].strip("| "): row for row in section.splitlines() if row.startswith("| ")}
    schema = json.loads((ROOT / "schemas" / "manifest.schema.json").read_text())

    def says(label: str, *numbers: float, unit: str = "") -> None:
        row = next((r for name, r in rows.items() if name.startswith(label)), None)
        assert row is not None, f"the Limits table has no row {label!r}"
        for n in numbers:
            text = f"{int(n):,}" if n == int(n) else f"{n:,}"
            # the number as a whole (not the 50 in 500,000), with its unit
            assert re.search(rf"(?<![\d,.]){re.escape(text + unit)}(?![\d,.]*\d)", row), (label, text + unit, row)

    says("manifest size", loader.MAX_BYTES)
    says("nesting", loader.MAX_DEPTH)
    says("values", loader.MAX_NODES)
    says("what aliases bring in", loader.ALIAS_VALUES_PER_CHARACTER, loader.ALIAS_VALUES_FLOOR)
    says("numbers", loader.MAX_DIGITS)
    says("node pools", schema["properties"]["node_pools"]["maxItems"])
    says("text values", schema["properties"]["name"]["maxLength"])
    says("unknown keys", validate.MAX_UNKNOWN_KEYS)
    says("rule file", packcache.MAX_RULE_BYTES)
    says("rules in a pack", rules.MAX_RULES)
    says("one rule expression", sandbox.TIME_BUDGET, unit=" seconds")
    says("the whole rule pack", sandbox.PACK_BUDGET, unit=" seconds")
    says("text or list", sandbox.MAX_TEXT, sandbox.MAX_SEQUENCE, sandbox.MAX_RANGE, sandbox.MAX_FORMAT_WIDTH)
    says("whole numbers", sandbox.MAX_INT_BITS)
    says("one operation", sandbox.MAX_WEIGHT)
    says("waiting for another sign-off", records.LOCK_WAIT_SECONDS, unit=" seconds")


def test_every_tour_command_runs_in_order_in_an_empty_folder(tmp_path):
    """The README's commands after the two set-up lines, run one after another as a newcomer
    types them, in an empty folder: each ends with a verdict (exit 0 or 1), never a usage error
    or a traceback, and the files the tour reads are the ones the earlier steps wrote."""
    import shlex

    from conftest import hwlint_process

    blocks = re.findall(r"```sh\n(.+?)\n```", README, re.S)[2:]
    commands = [shlex.split(line) for block in blocks for line in block.splitlines() if line.startswith("hwlint ")]
    assert [c[1] for c in commands] == ["size", "check", "check", "checklist", "signoff", "verify"]
    for command in commands:
        run = hwlint_process(*command[1:], cwd=tmp_path)
        assert run.code in (0, 1), (command, run.out[-1000:], run.err[-1000:])
        assert "Traceback" not in run.err and "internal error" not in run.err, command
    assert (tmp_path / "cluster.hw.yaml").exists() and (tmp_path / "review.md").stat().st_size > 1000
