"""linter.engine.forked.share: forked helpers take some of the work (the sizer's GPU models);
the answers are those of this process alone, in order, and this process never waits on a
helper that is slow or dead."""

from __future__ import annotations

import os
import time

from conftest import hwlint_process
from linter.engine.forked import share

ITEMS = [f"item-{i}" for i in range(9)]


def test_the_answers_are_this_process_alones_in_order():
    parent = os.getpid()

    def work(item: str) -> tuple[str, bool]:
        time.sleep(0.05)  # long enough for the helper's answers to come back before the end
        return item.upper(), os.getpid() != parent

    answers = share(ITEMS, work, 1)
    assert [a for a, _ in answers] == [item.upper() for item in ITEMS]
    seen_in_helper = [item for item, (_, helper) in zip(ITEMS, answers) if helper]
    assert seen_in_helper, "the helper did none of the work"


def test_a_helper_that_dies_leaves_its_items_to_this_process():
    parent = os.getpid()

    def work(item: str) -> str:
        if os.getpid() != parent:
            os._exit(9)  # out of memory, say: killed mid-item
        return item.upper()

    assert share(ITEMS, work, 1) == [item.upper() for item in ITEMS]


def test_a_helper_that_is_stuck_is_not_waited_for():
    """A helper that never answers (a CPU hog took its core) costs this process nothing but
    the fork: once every item is handed out, it does the outstanding ones itself."""
    parent = os.getpid()

    def work(item: str) -> str:
        if os.getpid() != parent:
            time.sleep(60)
        return item.upper()

    start = time.monotonic()
    assert share(ITEMS, work, 1) == [item.upper() for item in ITEMS]
    assert time.monotonic() - start < 20


def test_size_prints_the_same_with_and_without_helpers():
    goals = [["--params", "1000", "--layers", "128", "--hidden", "25600", "--heads", "160", "--seq", "2048",
              "--global-batch", "3072", "--tokens", "450", "--days", "84", "--rack-kw", "60"],
             ["--model", "Llama-3.1-70B", "--method", "qlora", "--tokens", "1", "--days", "5"]]
    for goal in goals:
        alone = hwlint_process("size", *goal, env={"HWLINT_JOBS": "1"})
        helped = hwlint_process("size", *goal, env={"HWLINT_JOBS": "2"})
        assert "Goal:" in alone.out and (helped.code, helped.out, helped.err) == (alone.code, alone.out, alone.err)
