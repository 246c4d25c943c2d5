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
from typing import Any, Callable, Iterator, Sequence

MIN_PARALLEL = 64  # below this, starting workers costs more than it saves

_work: tuple[Any, ...] = ()  # (pack, tier, selected, config, evidence), inherited by the forked workers


def review_files(files: Sequence[str], pack: Any, tier: str | None, selected: Any,
                 progress: Callable[[int], None] | None = None, config: Any = None, evidence: bool = False) -> Iterator[Any]:
    """One review per file, in order, each as soon as it and those before it are done (the
    caller writes it and lets it go); `progress(done)` is called as they complete.
    `evidence`: render the passing rules' evidence (for the JSON report). Close the iterator
    when stopping early: that ends the workers."""
    from linter.engine.review import review_file

    done = 0
    jobs = _jobs(len(files))
    if jobs > 1:
        for review in _in_workers(files, jobs, (pack, tier, selected, config, evidence)):
            if review is None:  # no processes to be had: the rest here instead
                break
            done += 1
            if progress:
                progress(done)
            yield review
    for path in files[done:]:
        review = review_file(path, pack, tier, selected, config, evidence)
        done += 1
        if progress:
            progress(done)
        yield review


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


CHUNK = 16  # files a worker reviews per round trip: enough to make the trip cheap, few enough to keep little waiting


def _in_workers(files: Sequence[str], jobs: int, work: tuple[Any, ...]) -> Iterator[Any]:
    """The reviews of `files` from `jobs` forked workers, in order; None once no more can be
    had from them (the pool broke, or could not start): the caller does the rest. At most a
    few chunks per worker are queued or finished ahead of the caller, so reviews that wait
    to be written stay few."""
    import collections
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    import gc

    global _work
    _work = work
    gc.freeze()  # the pack and the rest stay shared with the workers, not copied by their collector
    pool = None
    size = max(1, min(CHUNK, len(files) // (jobs * 8)))
    chunks = [files[i:i + size] for i in range(0, len(files), size)]
    queued: collections.deque = collections.deque()
    try:
        pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=_worker_start)
        sent = 0
        while chunks[sent:] or queued:
            while sent < len(chunks) and len(queued) < jobs * 3:
                queued.append(pool.submit(_review_chunk, chunks[sent]))
                sent += 1
            reviews = queued.popleft().result()
            yield from reviews
        pool.shutdown()
    except (KeyboardInterrupt, GeneratorExit):  # Ctrl-C, or the caller stopped: stop the workers now
        _stop(pool)
        raise
    except (BrokenProcessPool, OSError):  # no processes to be had: the caller does the rest
        _stop(pool)
        yield None
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
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it
    results = getattr(pool, "_result_queue", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
    for worker in workers:
        worker.join(1)
    # A worker killed while sending its reviews leaves half a message in the result pipe, and
    # the manager thread waits for the rest forever (the exit hook then waits for it): this
    # process's own copy of the pipe's writing end is the last one, and closing it ends that
    # read. Nothing here writes to that pipe.
    with contextlib.suppress(Exception):
        results._writer.close()
    # CPython 3.11's exit hook, a second shutdown and the executor's weakref callback all wake
    # the manager thread through a pipe it closes as it ends; a wake-up that races that close
    # prints "Bad file descriptor" after "aborted". With its workers gone the manager ends in
    # milliseconds: wait for it (within reason, the machine may be busy), then take its
    # wake-up off the hook's list.
    import concurrent.futures.process as futures_process

    if manager is not None:
        manager.join(5)
        getattr(futures_process, "_threads_wakeups", {}).pop(manager, None)


def _review_chunk(paths: Sequence[str]) -> list[Any]:
    from linter.engine.review import review_file

    pack, tier, selected, config, evidence = _work
    return [review_file(path, pack, tier, selected, config, evidence) for path in paths]
