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

import os
import sys
from typing import Any, Callable, Sequence

MIN_PARALLEL = 64  # below this, starting workers costs more than it saves

_work: tuple[Any, ...] = ()  # (pack, tier, selected, config), inherited by the forked workers


def review_files(files: Sequence[str], pack: Any, tier: str | None, selected: Any,
                 progress: Callable[[int], None] | None = None, config: Any = None) -> list[Any]:
    """One review per file, in order; `progress(done)` is called as they complete."""
    from linter.engine.review import review_file

    jobs = _jobs(len(files))
    if jobs > 1:
        reviews = _in_workers(files, jobs, (pack, tier, selected, config), progress)
        if reviews is not None:
            return reviews
    out = []
    for path in files:
        out.append(review_file(path, pack, tier, selected, config))
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
    try:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            out = []
            for review in pool.map(_review_one, files, chunksize=max(1, len(files) // (jobs * 8))):
                out.append(review)
                if progress:
                    progress(len(out))
            return out
    except (BrokenProcessPool, OSError):  # no processes to be had: do it here instead
        return None
    finally:
        _work = ()
        gc.unfreeze()


def _review_one(path: str) -> Any:
    from linter.engine.review import review_file

    pack, tier, selected, config = _work
    return review_file(path, pack, tier, selected, config)
