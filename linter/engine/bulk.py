"""Reviewing many manifests at once: over the CPUs while that is faster.

Each manifest is reviewed on its own, so `hwlint check` of hundreds of files (a
monorepo's CI job, the benchmark) can be split over worker processes. The workers are
forked from the process that already loaded the rule pack, so nothing is loaded twice, and
the reviews come back in the order the files were given, each as soon as it and those
before it are done: the report is exactly what one process writes, and it is written as
the run goes. `check --base` works out each file's changes against its base version the
same way (`each`: any list of items, in order). Below MIN_PARALLEL files, where fork is not
the platform's safe default (only Linux uses it), on one CPU this process may use, or with
HWLINT_JOBS=1, everything runs in this process; HWLINT_JOBS=N (N > 1) asks for N workers
(at most one per CPU) for the whole run, without the timing below.

Whether workers pay is measured on this run, and again as it goes, not guessed from the
machine's load average (a minute old, and counting jobs that may be about to end): each
review travels back pickled, the workers must be forked, and other work may take the CPUs
at any time (on Linux, with autogroup scheduling, another session's busy job leaves this
run the same share however many processes it has: then workers only add their cost). A
pace is wall-clock seconds per file, the writing of the reports included, as the caller
sees it. So:

1. the first PROBE files are reviewed here: one process's pace;
2. workers are tried only when the files left would take one process MIN_SECONDS or more,
   and a trial that fails as badly as the worst one so far (before any has failed: GRACE
   chunks lost) would cost at most TRIAL_COST of their time;
3. on trial, the workers' first TRIAL_CHUNKS rounds (TRIAL_SIZE files a chunk) are timed
   together, their start-up (the fork) included: once they are GRACE chunks behind one
   process, counting the time it takes to end them, no chunk is waited for, and they must be
   clearly ahead (SPEEDUP) at the end;
4. after that, each round (a chunk from each worker) must be clearly ahead of one process;
5. after RECHECK files (doubling while they keep winning, up to RECHECK_MAX), PROBE files are
   reviewed here again, one process's pace now, and the workers go on only if still clearly
   ahead of it;
6. workers found behind are ended at once (what they were doing is done again in its turn),
   and what they cost is measured: their time beyond one process's for the files they
   delivered, and the slower files here right after (this process's memory, shared with
   them, has to become its own again). This process then reviews files until the time lost
   so far, plus a trial failing as the worst did, is at most TRIAL_COST of the run's time,
   and tries them again. So however busy the machine, failed trials cost the run at most
   about TRIAL_COST, and on a long run workers are tried again when the load has gone.

Each decision compares the mean of a pace's last two measurements, since a busy machine's
pace swings from one second to the next.
"""

from __future__ import annotations

import collections
import os
import time

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable, Generator, Iterator, Sequence

MIN_PARALLEL = 64  # below this, starting workers costs more than it saves
PROBE = 16  # files timed in this process before workers are considered, and at each re-check
MIN_SECONDS = 0.5  # one process's estimated time for the files left, below which workers are not tried
CHUNK = 16  # files a worker reviews per round trip: enough to make the trip cheap, few enough to keep little waiting
TRIAL_CHUNKS = 3  # chunks per worker timed before deciding to keep the workers
TRIAL_SIZE = 4  # files in each of those chunks, so that a trial that fails costs little
GRACE = 4  # chunks' worth of one process's time the workers may be behind during the trial (their start-up)
TRIAL_COST = 0.03  # the most the failed trials may cost, as a share of the run's time
SPEEDUP = 1.1  # the workers must deliver at least this much faster than one process to be kept
RECHECK = 256  # files the workers review before one process's pace is measured again (doubling, up to RECHECK_MAX)
RECHECK_MAX = 4096


def review_files(files: Sequence[str], pack: Any, tier: str | None, selected: Any,
                 progress: Callable[[int], None] | None = None, config: Any = None, evidence: bool = False,
                 place_all: bool = True) -> Iterator[Any]:
    """One review per file, in order, each as soon as it and those before it are done (the
    caller writes it and lets it go); `progress(done)` is called as they complete.
    `evidence`: render the passing rules' evidence (for the JSON report); `place_all` false:
    only the failing results are placed (review.review_document). Close the iterator
    when stopping early: that ends the workers."""
    from linter.engine.review import review_file

    return each(files, lambda path: review_file(path, pack, tier, selected, config, evidence, place_all), progress)


def each(items: Sequence[Any], do: Callable[[Any], Any], progress: Callable[[int], None] | None = None) -> Iterator[Any]:
    """do(item) for each item, in order, each as soon as it and those before it are done, in
    this process or in workers while they are measured faster (the module's steps): the
    reviews of a run's files, or (`--base`) each file's changes against its base version."""
    jobs, forced = _jobs(len(items))
    run = _Run(items, jobs, do, progress)
    frozen = _freeze()
    try:
        if jobs == 1:
            yield from run.here(len(items))
        elif forced:
            yield from run.workers(None, len(items))
            yield from run.here(len(items))  # what a broken pool left
        else:
            yield from run.timed()
    finally:
        run.close()
        if frozen:
            _unfreeze()


YOUNG_OBJECTS = 5000  # container objects alive beyond those freed before the young generation is collected:
# one review keeps between 700 (Python's default, so one collection per manifest) and 2,000 alive at its peak

_collector: list[Any] = []  # (the thresholds before, whether this froze) while review_files runs, one per run


def _freeze() -> bool:
    """The cyclic garbage collector for the run: what exists before the reviews (the rule pack,
    its catalog, the compiled rules, the modules), built once and alive all along, out of its
    passes (it was traversed by every full collection, and a forked worker's pages stay shared);
    and the young generation collected once YOUNG_OBJECTS containers are alive beyond those
    freed, not at every review's peak (most of a review's objects are freed by their reference
    counts as it ends). `_unfreeze` puts both back when the last such run ends."""
    import gc

    if not gc.isenabled():
        return False
    if not _collector:
        froze = gc.get_freeze_count() == 0  # a host program's own frozen objects stay as it left them
        if froze:
            gc.freeze()
        before = gc.get_threshold()
        gc.set_threshold(max(before[0], YOUNG_OBJECTS), *before[1:])
        _collector.append((before, froze))
    else:
        _collector.append(_collector[-1])
    return True


def _unfreeze() -> None:
    import gc

    before, froze = _collector.pop()
    if not _collector:
        gc.set_threshold(*before)
        if froze:
            gc.unfreeze()


def _jobs(count: int) -> tuple[int, bool]:
    """(workers to use, whether HWLINT_JOBS asked for them): `forked.jobs()`, subject to the timing."""
    if count < MIN_PARALLEL:
        return 1, False
    from linter.engine.forked import jobs

    return jobs()


def _ahead(took: float, files: int, one: float) -> bool:
    """Whether `files` delivered in `took` seconds are clearly ahead of one process's pace
    `one` (seconds per file)."""
    return took * SPEEDUP < files * one


class _Run:
    """One run's files, delivered in order from this process or from the workers."""

    def __init__(self, files: Sequence[Any], jobs: int, do: Callable[[Any], Any], progress: Callable[[int], None] | None):
        self.files, self.jobs, self.do, self.progress = files, jobs, do, progress
        self.done = 0  # files delivered
        self.sent = 0  # files handed to the workers, `done` and those queued
        self.pool: Any = None
        self.broken = False  # the workers could not start or died: this process does the rest
        self.queued: collections.deque = collections.deque()  # the worker each chunk went to, in the order sent
        self.ending = 0.0  # the longest that ending the workers took in this run (seconds)
        self.phases: list[tuple[str, int, float]] = []  # ("here" or "workers", files delivered, seconds)

    def here(self, upto: int) -> Iterator[Any]:
        """The reviews of files[done:upto], made in this process."""
        for path in self.files[self.done:upto]:
            yield self._delivered(self.do(path))

    def _delivered(self, review: Any) -> Any:
        self.done += 1
        if self.progress:
            self.progress(self.done)
        return review

    def _paced_here(self, upto: int) -> Generator[Any, None, float]:
        """`here`, returning its pace."""
        start, first = time.perf_counter(), self.done
        try:
            yield from self.here(upto)
        finally:  # noted also when the caller stops early
            pace = self._phase("here", start, first)
        return pace

    def _phase(self, kind: str, start: float, first: int) -> float:
        """Note a phase that began at `start` with `first` files done; its pace."""
        took = time.perf_counter() - start
        self.phases.append((kind, self.done - first, took))
        return took / max(1, self.done - first)

    def timed(self) -> Iterator[Any]:
        """The run with workers only while they are measured to be faster (the module's steps)."""
        total = len(self.files)
        one = yield from self._paced_here(PROBE)
        worst = GRACE * TRIAL_SIZE * one  # what a failed trial costs at most, by design, until one has failed
        lost = 0.0  # what the workers cost when they lost, against one process's pace
        pool = None  # the workers' pace
        span, trial = RECHECK, True
        while self.done < total and not self.broken:
            left, upto = total - self.done, min(total, self.done + span)
            if trial and (one * left < MIN_SECONDS or one * left * TRIAL_COST < worst):
                break  # too little left to pay for workers, or for a trial that fails as the worst did
            start, first = time.perf_counter(), self.done
            try:
                pace = yield from self.workers(one, upto, trial)
            finally:  # noted also when the caller stops early
                self._phase("workers", start, first)
            _, sent, took = self.phases[-1]
            pool = None if pace is None else pace if pool is None else (pool + pace) / 2
            if self.done >= total or self.broken:
                break
            before, now = one, (yield from self._paced_here(self.done + PROBE))
            one = (one + now) / 2
            if pool is not None and _ahead(pool, 1, one):  # clearly ahead of one process now: on
                span, trial = min(2 * span, RECHECK_MAX) if self.done >= upto else span, self.pool is None
                continue
            # Behind: their time beyond one process's for what they delivered, and the slower
            # files here right after (this process's pages, shared with them, are its own again).
            cost = max(0.0, took - sent * before) + max(0.0, (now - before) * PROBE)
            lost, worst = lost + cost, max(worst, cost)
            # Tried again once the failed trials, the next one failing as the worst did, come to
            # at most TRIAL_COST of the run's time so far.
            wait = (lost + worst) / TRIAL_COST - sum(phase[2] for phase in self.phases)
            one = (one + (yield from self._paced_here(min(total, self.done + max(PROBE, int(wait / one)))))) / 2
            pool, span, trial = None, RECHECK, True
        yield from self._paced_here(total)

    def workers(self, one: float | None, upto: int, trial: bool = False) -> Generator[Any, None, float | None]:
        """The reviews of files[done:upto] from the workers, in order. With `one` (one
        process's pace), each round of chunks (one from each worker) is timed against it, and
        the workers are ended when not clearly ahead (they are forked again when next tried);
        on `trial`, the first TRIAL_CHUNKS rounds are timed together, their start-up
        included, and no chunk is waited for once they are GRACE chunks behind one process. Returns their pace (of the round that ended them, if one did), or None
        when a chunk was not waited for, or they broke or could not start; the caller does
        the rest."""
        start, first = time.perf_counter(), self.done  # the fork is part of their cost
        from linter.engine.forked import Broken

        if self.pool is None and not self._start():
            return None
        self.sent = self.done  # nothing is queued between calls
        trial_chunks = self.jobs * TRIAL_CHUNKS if trial and one is not None else 0
        size = max(1, min(CHUNK, (len(self.files) - self.done) // (self.jobs * 8)))
        received, since, since_done = 0, start, first  # the round being timed: its start, files done before it
        try:
            while self.done < upto:
                while self.sent < upto and len(self.queued) < self.jobs * 2:
                    step = TRIAL_SIZE if len(self.queued) + received < trial_chunks else size
                    end = min(upto, self.sent + step)
                    worker = (received + len(self.queued)) % self.jobs  # in turn, so each answers in order
                    self.pool.send(worker, self.sent, end)
                    self.queued.append(worker)
                    self.sent = end
                timeout = None
                if received < trial_chunks:  # on trial, not waited for once they would be GRACE chunks behind,
                    # ending them included (as long as it took last time)
                    behind = start + (self.done - first + GRACE * TRIAL_SIZE) * one - self.ending
                    timeout = max(0.0, behind - time.perf_counter())
                reviews = self.pool.receive(self.queued[0], timeout)
                if reviews is None:
                    self._end()
                    return None
                self.queued.popleft()
                for review in reviews:
                    yield self._delivered(review)
                received += 1
                if one is None or (received < trial_chunks):
                    continue
                now = time.perf_counter()
                # The end of the trial, or of a round (a chunk from each worker): go on only if
                # clearly ahead, then time the next round.
                if received == trial_chunks or received % self.jobs == 0:
                    if not _ahead(now - since, self.done - since_done, one):
                        self._end()
                        return (now - since) / (self.done - since_done)
                    since, since_done = now, self.done
        except Broken:  # no processes to be had, or one died: the caller does the rest
            self._end()
            self.broken = True
            return None
        return (time.perf_counter() - start) / max(1, self.done - first)

    def _start(self) -> bool:
        from linter.engine.forked import Broken, Workers

        try:
            self.pool = Workers(self.jobs, self.files, self.do)
        except Broken:
            self.broken = True
            return False
        return True

    def _end(self) -> None:
        """End the workers now, dropping what they were doing (its files go back in turn)."""
        start = time.perf_counter()
        self.pool.kill()
        self.ending = max(self.ending, time.perf_counter() - start)
        self.pool, self.sent = None, self.done
        self.queued.clear()

    def close(self) -> None:
        """End the workers (at once when the run stopped early: Ctrl-C, or the caller), and
        add the run's phases to the file HWLINT_BULK_TRACE names, if it does (one JSON line
        a run: what bench/ reads to tell what the timing cost)."""
        trace = os.environ.get("HWLINT_BULK_TRACE")
        if trace and self.phases:
            import contextlib
            import json

            with contextlib.suppress(OSError), open(trace, "a", encoding="utf-8") as handle:  # a diagnostic only
                handle.write(json.dumps({"files": len(self.files), "jobs": self.jobs, "phases": self.phases}) + "\n")
        if self.pool is not None:
            if self.queued or self.done < len(self.files):
                self.pool.kill()
            else:
                self.pool.close()
            self.pool = None
