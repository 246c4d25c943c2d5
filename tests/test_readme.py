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
