"""Ctrl-C during a bulk run: hwlint stops promptly, says so, and leaves no worker behind.

A terminal sends SIGINT to every process of the job, a CI runner often to the command alone;
the test does both to a `hwlint check` reviewing many files in worker processes
(HWLINT_JOBS=2). Measured on a busy 2-CPU machine: 0.2-0.3 s to exit, where letting the pool
drain took 2.8 s (group) and 7.5 s (hwlint alone). No timing is asserted beyond the wait."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, TODAY


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker processes are forked on Linux only")
@pytest.mark.parametrize("to", ["the process group (Ctrl-C in a terminal)", "hwlint alone (a CI runner cancelling)"])
def test_sigint_ends_a_bulk_run_with_workers_and_no_worker_outlives_it(tmp_path, to):
    text = (EXAMPLES / "multi-node-pretrain.hw.yaml").read_text()
    for i in range(3000):
        (tmp_path / f"m{i:04d}.hw.yaml").write_text(text)
    env = {**os.environ, "HWLINT_TODAY": TODAY, "HWLINT_JOBS": "2", "HWLINT_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "linter.cli", "check", "--quiet", str(tmp_path)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        workers: list[int] = []
        for _ in range(600):  # the workers start once the pack is loaded; wait for them (generously)
            workers = _children(proc.pid)
            if len(workers) >= 2 or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert len(workers) >= 2 and proc.poll() is None, "the run never started its workers"
        time.sleep(0.5)  # into the reviews
        assert proc.poll() is None, "the run finished before it could be interrupted: give it more files"
        if to.startswith("the process group"):
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err and err.strip().splitlines() == ["hwlint: aborted"], err
    assert not [w for w in workers if _alive(w)], "a worker outlived the run"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker processes are forked on Linux only")
def test_workers_end_when_hwlint_is_killed(tmp_path):
    """SIGKILL leaves hwlint no time to end its workers: each sees its task pipe close and
    exits after the files in hand, instead of being left running."""
    text = (EXAMPLES / "multi-node-pretrain.hw.yaml").read_text()
    for i in range(3000):
        (tmp_path / f"m{i:04d}.hw.yaml").write_text(text)
    env = {**os.environ, "HWLINT_TODAY": TODAY, "HWLINT_JOBS": "2", "HWLINT_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "linter.cli", "check", "--quiet", str(tmp_path)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        workers: list[int] = []
        for _ in range(600):
            workers = _children(proc.pid)
            if len(workers) >= 2 or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert len(workers) >= 2 and proc.poll() is None, "the run never started its workers"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        for _ in range(300):  # a chunk in hand is at most 16 files
            if not [w for w in workers if _alive(w)]:
                break
            time.sleep(0.1)
        assert not [w for w in workers if _alive(w)], "a worker outlived hwlint"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
