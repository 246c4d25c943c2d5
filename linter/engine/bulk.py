"""Reviewing many manifests at once: over the CPUs when there are enough of them.

Each manifest is reviewed on its own, so `hwlint check` of hundreds of files (a
monorepo's CI job, the benchmark) is split over worker processes. The workers are forked
from the process that already loaded the rule pack, so nothing is loaded twice, and the
reviews come back in the order the files were given: the report is exactly what one
process writes. Below MIN_PARALLEL files, where fork is not the platform's safe default
(only Linux uses it), on one CPU, or with HWLINT_JOBS=1, everything runs in this process;
HWLINT_JOBS=N caps the workers.

Workers only pay when CPUs are idle: each review travels back pickled (about a quarter of
its own cost), so on a machine whose other jobs already keep the CPUs busy, workers make
the run slower, not faster. Without HWLINT_JOBS, the workers are as many as the CPUs the
one-minute load average leaves idle, and none below two.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Callable, Sequence

MIN_PARALLEL = 64  # below this, starting workers costs more than it saves

_work: tuple[Any, ...] = ()  # (pack, tier, selected, config, evidence), inherited by the forked workers


def review_files(files: Sequence[str], pack: Any, tier: str | None, selected: Any,
                 progress: Callable[[int], None] | None = None, config: Any = None, evidence: bool = False) -> list[Any]:
    """One review per file, in order; `progress(done)` is called as they complete. `evidence`:
    render the passing rules' evidence (for the JSON report)."""
    from linter.engine.review import review_file

    jobs = _jobs(len(files))
    if jobs > 1:
        reviews = _in_workers(files, jobs, (pack, tier, selected, config, evidence), progress)
        if reviews is not None:
            return reviews
    out = []
    for path in files:
        out.append(review_file(path, pack, tier, selected, config, evidence))
        if progress:
            progress(len(out))
    return out


def _jobs(count: int) -> int:
    if count < MIN_PARALLEL or not sys.platform.startswith("linux"):
        return 1
    wanted = os.environ.get("HWLINT_JOBS", "")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if wanted.isdigit():
        return max(1, min(int(wanted), cpus))
    try:
        idle = int(cpus - os.getloadavg()[0] + 0.5)
    except OSError:
        idle = cpus
    return min(cpus, idle) if idle >= 2 else 1


def _in_workers(files: Sequence[str], jobs: int, work: tuple[Any, ...], progress: Callable[[int], None] | None = None) -> list[Any] | None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    import gc

    global _work
    _work = work
    gc.freeze()  # the pack and the rest stay shared with the workers, not copied by their collector
    pool = None
    try:
        pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=_worker_start)
        out = []
        for review in pool.map(_review_one, files, chunksize=max(1, len(files) // (jobs * 8))):
            out.append(review)
            if progress:
                progress(len(out))
        pool.shutdown()
        return out
    except KeyboardInterrupt:  # Ctrl-C: stop the workers now rather than let them finish their chunks
        _stop(pool)
        raise
    except (BrokenProcessPool, OSError):  # no processes to be had: do it here instead
        _stop(pool)
        return None
    finally:
        if pool is not None:
            with contextlib.suppress(OSError):  # a pipe the manager closed as it ended
                pool.shutdown(wait=False, cancel_futures=True)  # idempotent; after an error, nothing is left queued
        _work = ()
        gc.unfreeze()


def _worker_start() -> None:
    """A worker leaves SIGINT to the parent, which ends the pool (a terminal sends Ctrl-C to
    every process of the job, and a worker's own KeyboardInterrupt would only slow that)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop(pool: Any) -> None:
    """End the pool's workers at once: queued work is dropped, running reviews are killed."""
    if pool is None:
        return
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
    for worker in workers:
        worker.join(1)
    # CPython 3.11's exit hook, a second shutdown and the executor's weakref callback all wake
    # the manager thread through a pipe it closes as it ends; a wake-up that races that close
    # prints "Bad file descriptor" after "aborted". With its workers gone the manager ends in
    # milliseconds: wait for it (within reason, the machine may be busy), then take its
    # wake-up off the hook's list.
    import concurrent.futures.process as futures_process

    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(5)
        getattr(futures_process, "_threads_wakeups", {}).pop(manager, None)


def _review_one(path: str) -> Any:
    from linter.engine.review import review_file

    pack, tier, selected, config, evidence = _work
    return review_file(path, pack, tier, selected, config, evidence)
