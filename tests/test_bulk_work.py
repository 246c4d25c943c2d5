"""Work a run of many manifests does not do, because nothing it writes reads it (issue 31,
items 4 and 6): the outputs stay the same, the work counted through the command line goes."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES, ROOT

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


def git(cwd, *args: str) -> None:
    import subprocess

    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def edited_repo(tmp_path):
    """A repository with two manifests committed, both edited since: the clean one grows, the
    flawed one fixes a finding and gains one."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "clean.hw.yaml").write_text(CLEAN.read_text())
    (root / "flawed.hw.yaml").write_text(FLAWED.read_text())
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    (root / "clean.hw.yaml").write_text(CLEAN.read_text().replace("count: 32", "count: 36", 1))
    flawed = FLAWED.read_text().replace("precision: bf16", "precision: fp16", 1)
    (root / "flawed.hw.yaml").write_text(flawed)
    return root


def test_base_compares_the_failures_and_places_nothing_else(hwlint, placed, monkeypatch, edited_repo):
    monkeypatch.setenv("HWLINT_JOBS", "1")
    monkeypatch.chdir(edited_repo)
    run = hwlint("check", "--base", "HEAD", "clean.hw.yaml", "flawed.hw.yaml")
    assert "against HEAD" in run.out and " resolved" in run.out, run.out
    import re

    shown = len(re.findall(r"^[a-z]+\.hw\.yaml:\d+:\d+: ", run.out, re.M))  # the new versions' failures
    resolved = run.out.count("  resolved: ")
    # each version's failures only: the new ones, and at the base those still open and those resolved
    assert 0 < placed["count"] <= 2 * shown + resolved, (placed["count"], shown, resolved, run.out)


def test_base_text_report_is_the_same_as_where_every_result_is_placed(hwlint, monkeypatch, edited_repo, tmp_path):
    monkeypatch.setenv("HWLINT_JOBS", "1")
    monkeypatch.chdir(edited_repo)
    alone = hwlint("check", "--base", "HEAD", "clean.hw.yaml", "flawed.hw.yaml")
    both = hwlint("check", "--base", "HEAD", "--format", "text", "--format", f"json:{tmp_path / 'r.json'}",
                  "clean.hw.yaml", "flawed.hw.yaml")
    assert (alone.code, alone.out) == (both.code, both.out)
    assert "introduced" in alone.out and "resolved" in alone.out


def test_an_at_that_could_run_long_still_runs_for_a_passing_rule(hwlint, tmp_path, monkeypatch):
    """A result the text report does not place still runs an `at` that loops: its timeout is the
    rule's error in every report, as when every result is placed."""
    monkeypatch.setenv("HWLINT_JOBS", "1")
    monkeypatch.setenv("HWLINT_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "rules"
    folder.mkdir()
    hostile = (ROOT / "tests" / "hostile_rule_folders" / "at-template-timeout" / "hostile.yaml").read_text()
    (folder / "hostile.yaml").write_text(hostile.replace("manifest.tier == 'x'", "manifest.plan.goal is defined"))
    for options in ((), ("--format", "json")):
        run = hwlint("check", "--rules", folder, *options, CLEAN)
        assert run.code == 2, run.out[-2000:]
        assert "rule GPU900: rule error: RuleTimeout" in run.out, run.out[-2000:]


def test_the_collector_does_not_pass_over_every_review(hwlint, tmp_path, monkeypatch):
    """Most of a review's objects go with their reference counts: the cyclic collector, which
    ran about once a manifest, runs a few times in a run of a hundred, and the settings it had
    are back once the run ends."""
    import gc

    monkeypatch.setenv("HWLINT_JOBS", "1")
    text = CLEAN.read_text()
    files = []
    for i in range(100):
        files.append(tmp_path / f"c{i:03d}.hw.yaml")
        files[-1].write_text(text.replace("name: atlas-70b pretraining cluster", f"name: cluster {i}", 1))
    before = gc.get_threshold(), gc.get_freeze_count()
    passes = []
    collecting = lambda phase, info: passes.append(info["generation"]) if phase == "start" else None  # noqa: E731
    gc.callbacks.append(collecting)
    try:
        run = hwlint("check", *files)
    finally:
        gc.callbacks.remove(collecting)
    assert run.code == 0 and run.out.count(" 0 failing") == 100
    assert len(passes) < 25 and 2 not in passes, passes
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_a_rule_does_not_read_the_cpu_clock(hwlint, monkeypatch):
    """Each rule runs under its budget without reading the CPU clock (a system call, about
    as long as a simple rule): the pack's periodic timer counts them. Its own limits still
    hold: tests/test_sandbox_limits.py and tests/test_hostile_rules.py."""
    import linter.engine.sandbox as sandbox

    monkeypatch.setenv("HWLINT_JOBS", "1")
    reads = [0]
    clock = sandbox.cpu_time

    def counted() -> float:
        reads[0] += 1
        return clock()

    monkeypatch.setattr(sandbox, "cpu_time", counted)
    run = hwlint("check", CLEAN, FLAWED)
    assert run.code == 1 and " passed" in run.out
    assert reads[0] <= 2 * 3, reads[0]  # about 70 rules a manifest ran: one reading each before


def test_each_keeps_the_order_and_shares_the_work(monkeypatch):
    """bulk.each: with HWLINT_JOBS=2 workers take some of the items and the answers come back
    in the items' order; with HWLINT_JOBS=1 this process does them all."""
    import os
    import time

    from linter.engine.bulk import MIN_PARALLEL, each

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: no worker is forked")
    parent = os.getpid()

    def work(item: int) -> tuple[int, bool]:
        time.sleep(0.002)
        return item, os.getpid() != parent

    items = list(range(MIN_PARALLEL + 6))
    monkeypatch.setenv("HWLINT_JOBS", "2")
    shared = list(each(items, work))
    assert [item for item, _ in shared] == items
    assert any(in_worker for _, in_worker in shared), "the workers did none of them"
    monkeypatch.setenv("HWLINT_JOBS", "1")
    assert list(each(items, work)) == [(item, False) for item in items]


def test_base_changes_made_in_workers_give_the_same_report(tmp_path):
    """`check --base` works out each file's changes in workers once there are enough files
    (bulk.MIN_PARALLEL): every report is the same bytes as one process alone writes."""
    from conftest import hwlint_process
    from linter.engine.bulk import MIN_PARALLEL

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    names = [f"m{i:02d}.hw.yaml" for i in range(MIN_PARALLEL + 6)]
    for i, name in enumerate(names):
        (root / name).write_text((FLAWED if i % 3 == 0 else CLEAN).read_text())
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    for i, name in enumerate(names[:-2]):  # the last two unchanged; every third fixes a finding, the others grow
        text = (root / name).read_text()
        (root / name).write_text(text.replace("precision: bf16", "precision: fp16", 1) if i % 3 == 0
                                 else text.replace("count: 32", f"count: {33 + i % 8}", 1))
    (root / "new.hw.yaml").write_text(CLEAN.read_text())  # not at the base: every finding introduced
    files = [*names, "new.hw.yaml"]
    for options in ((), ("--format", "json"), ("--format", "markdown")):
        alone = hwlint_process("check", "--base", "HEAD", *options, *files, cwd=root, env={"HWLINT_JOBS": "1"})
        shared = hwlint_process("check", "--base", "HEAD", *options, *files, cwd=root, env={"HWLINT_JOBS": "2"})
        assert "HEAD" in alone.out and (shared.code, shared.out, shared.err) == (alone.code, alone.out, alone.err)
    assert "resolved" in alone.out
