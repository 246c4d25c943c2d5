"""Work a run of many manifests does not do, because nothing it writes reads it (issue 31,
items 4 and 6): the outputs stay the same, the work counted through the command line goes."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES

CLEAN = EXAMPLES / "multi-node-pretrain.hw.yaml"  # 58 rules pass, one fails and is waived
FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"


@pytest.fixture
def placed(monkeypatch):
    """The results given a place (path, line, the values their rule read) in a run."""
    import linter.engine.review as review

    seen = {"count": 0}
    real = review.read_values

    def counted(recorder):
        seen["count"] += 1
        return real(recorder)

    monkeypatch.setattr(review, "read_values", counted)
    return seen


def test_the_text_report_places_only_what_fails(hwlint, placed, monkeypatch):
    monkeypatch.setenv("HWLINT_JOBS", "1")
    run = hwlint("check", CLEAN, FLAWED)
    failing = run.out.count(" error ") + run.out.count(" warning ") + run.out.count(" info ") + run.out.count(" waived ")
    assert run.code == 1 and failing > 0
    assert 0 < placed["count"] <= failing, (placed["count"], run.out)


@pytest.mark.parametrize("options", [("--format", "json"), ("--verbose",), ("--format", "sarif")])
def test_every_other_report_still_places_every_result(hwlint, placed, monkeypatch, options):
    monkeypatch.setenv("HWLINT_JOBS", "1")
    hwlint("check", *options, CLEAN)
    assert placed["count"] >= 58


def test_the_text_report_is_the_same_as_where_every_result_is_placed(hwlint, tmp_path, monkeypatch):
    """The text report written beside a JSON one (every result placed) is the text report
    written alone (only failures placed), byte for byte, and exits the same."""
    monkeypatch.setenv("HWLINT_JOBS", "1")
    files = sorted(str(p) for p in EXAMPLES.glob("*.hw.yaml"))
    alone = hwlint("check", *files)
    both = hwlint("check", "--format", "text", "--format", f"json:{tmp_path / 'r.json'}", *files)
    assert (alone.code, alone.out) == (both.code, both.out)
    assert alone.out.count("\n") > len(files)  # findings, not only the summaries
