"""Reviewing many manifests at once: over the CPUs when that is faster.

Each manifest is reviewed on its own, so `hwlint check` of hundreds of files (a
monorepo's CI job, the benchmark) can be split over worker processes. The workers are
forked from the process that already loaded the rule pack, so nothing is loaded twice, and
the reviews come back in the order the files were given, each as soon as it and those
before it are done: the report is exactly what one process writes, and it is written as
the run goes. Below MIN_PARALLEL files, where fork is not the platform's safe default
(only Linux uses it), on one CPU this process may use, or with HWLINT_JOBS=1, everything
runs in this process; HWLINT_JOBS=N (N > 1) asks for N workers (at most one per CPU) without
the trial below.

Whether workers pay is measured on this run, not guessed from the machine's load average
(which is a minute old and counts jobs that may be about to end): each review travels back
pickled, the workers must be forked, and the CPUs may be busy with other work. So:

1. the first PROBE files are reviewed here, timed on the wall clock together with the
   writing of their reports (the per-manifest cost of one process, as this run sees it);
2. workers are tried only when the files left would take one process long enough to pay
   for the trial several times over (MIN_SECONDS);
3. the workers' first TRIAL_CHUNKS rounds are timed the same way, their start-up included;
   unless they came in clearly faster than one process did (SPEEDUP), the workers are
   stopped and the rest is reviewed here, as if they had never started. The most a failed
   trial costs is those rounds at the workers' pace.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Sequence

MIN_PARALLEL = 64  # below this, starting workers costs more than it saves
PROBE = 16  # files timed in this process before workers are considered
MIN_SECONDS = 0.5  # one process's estimated time for the files left, below which workers are not tried
CHUNK = 16  # files a worker reviews per round trip: enough to make the trip cheap, few enough to keep little waiting
TRIAL_CHUNKS = 3  # chunks per worker timed before deciding to keep the workers
TRIAL_SIZE = 4  # files in each of those chunks, so that a trial that fails costs little
GRACE = 2  # chunks' worth of one process's time the workers may be behind during the trial (their start-up)
SPEEDUP = 1.15  # the workers must deliver at least this much faster than one process to be kept

_work: tuple[Any, ...] = ()  # (pack, tier, selected, config, evidence), inherited by the forked workers


def review_files(files: Sequence[str], pack: Any, tier: str | None, selected: Any,
                 progress: Callable[[int], None] | None = None, config: Any = None, evidence: bool = False) -> Iterator[Any]:
    """One review per file, in order, each as soon as it and those before it are done (the
    caller writes it and lets it go); `progress(done)` is called as they complete.
    `evidence`: render the passing rules' evidence (for the JSON report). Close the iterator
    when stopping early: that ends the workers."""
    from linter.engine.review import review_file

    done = 0
    jobs, forced = _jobs(len(files))

    def here(upto: int) -> Iterator[Any]:
        nonlocal done
        for path in files[done:upto]:
            review = review_file(path, pack, tier, selected, config, evidence)
            done += 1
            if progress:
                progress(done)
            yield review

    baseline = None  # seconds a file in one process, writing included
    if jobs > 1 and not forced:
        start = time.perf_counter()
        yield from here(PROBE)
        baseline = (time.perf_counter() - start) / PROBE
        if baseline * (len(files) - done) < MIN_SECONDS:
            jobs = 1
    if jobs > 1:
        for review in _in_workers(files[done:], jobs, (pack, tier, selected, config, evidence), baseline):
            if review is None:  # the workers were slower, or no processes were to be had: the rest here
                break
            done += 1
            if progress:
                progress(done)
            yield review
    yield from here(len(files))


def _jobs(count: int) -> tuple[int, bool]:
    """(workers to use, whether HWLINT_JOBS asked for them): one per CPU this process may run
    on (its affinity, which a container or `taskset` narrows), subject to the trial."""
    if count < MIN_PARALLEL or not sys.platform.startswith("linux"):
        return 1, False
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    wanted = os.environ.get("HWLINT_JOBS", "")
    if wanted.isdigit():
        return max(1, min(int(wanted), cpus)), True
    return cpus, False


def _in_workers(files: Sequence[str], jobs: int, work: tuple[Any, ...], baseline: float | None = None) -> Iterator[Any]:
    """The reviews of `files` from `jobs` forked workers, in order; None when no more should
    be had from them: the pool broke or could not start, or (with `baseline`, one process's
    seconds per file) the trial found them no faster. The caller does the rest. At most a
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
    trial = jobs * TRIAL_CHUNKS if baseline is not None else 0  # the first chunks, small, are the trial
    small = min(size, TRIAL_SIZE)
    cut = min(len(files), trial * small)
    chunks = [files[i:i + small] for i in range(0, cut, small)] + [files[i:i + size] for i in range(cut, len(files), size)]
    queued: collections.deque = collections.deque()
    start = time.perf_counter()
    try:
        pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=_worker_start)
        sent = received = delivered = 0
        while chunks[sent:] or queued:
            while sent < len(chunks) and len(queued) < jobs * 3:
                queued.append(pool.submit(_review_chunk, chunks[sent]))
                sent += 1
            reviews = queued.popleft().result()
            received += 1
            yield from reviews
            delivered += len(reviews)
            if received <= trial and received < len(chunks):
                took, alone = time.perf_counter() - start, delivered * baseline  # baseline: not None in a trial
                # Behind one process by more than the start-up allows: stop now. At the end
                # of the trial: keep them only if clearly ahead.
                if took > alone + GRACE * small * baseline or (received == trial and took * SPEEDUP > alone):
                    for future in queued:
                        future.cancel()
                    _stop(pool)
                    pool = None
                    yield None
                    return
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
