"""The Markdown review of every example, compared with the committed golden file.

Set HWLINT_UPDATE_GOLDEN=1 to rewrite them, then read the diff by eye before committing:
these files are what users see.
"""

from __future__ import annotations

import os

import pytest

from conftest import EXAMPLES, ROOT

GOLDEN = ROOT / "tests" / "golden"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.hw.yaml"))


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.name)
def test_markdown_review_matches_golden(hwlint, example, monkeypatch):
    monkeypatch.chdir(ROOT)  # reviews name the manifest by the path given
    run = hwlint("check", "--format", "markdown", example.relative_to(ROOT))
    assert run.code in (0, 1), run.err
    golden = GOLDEN / (example.name.removesuffix(".hw.yaml") + ".md")
    if os.environ.get("HWLINT_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(run.out, encoding="utf-8")
    assert run.out == golden.read_text(encoding="utf-8")


def test_flawed_example_fails_several_rules_and_the_others_pass(hwlint, monkeypatch):
    monkeypatch.chdir(ROOT)
    codes = {p.name: hwlint("check", p.relative_to(ROOT)).code for p in EXAMPLE_FILES}
    assert codes.pop("flawed-cluster.hw.yaml") == 1
    assert set(codes.values()) == {0}, codes
