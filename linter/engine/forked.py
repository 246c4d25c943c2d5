"""Worker processes forked from this one, each reviewing the slices of the run's files it is sent.

A worker inherits everything the parent had loaded (the rule pack, the files' list), so a
task is two numbers on a pipe and an answer is the pickled reviews on another. Nothing else
is imported or started: no manager thread, no queue feeders, no shared locks. That makes a
trial of workers cheap to start and to end, which is what lets the timing in
`linter.engine.bulk` try them on a busy machine without costing the run (ProcessPoolExecutor
took about 60 ms to deliver its first chunk on an idle 2-CPU machine, 20 ms of it imports).

A worker ends when its task pipe is closed (the run is over, or the parent died), or when it
is killed (the parent found the workers behind, or was interrupted). A worker that dies or
cannot be started shows as `Broken`; the caller reviews the rest itself.

`share` is the other use: a few items of work (the sizer's GPU models) taken from one queue by
this process and its forked helpers, this process never waiting on a helper.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

TASK = struct.Struct("<qq")  # files[first:end]: 16 bytes, under PIPE_BUF, so written whole
SIZE = struct.Struct("<q")  # the length of the pickled answer that follows


def jobs() -> tuple[int, bool]:
    """(processes to use, whether HWLINT_JOBS asked for them): one per CPU this process may run
    on (its affinity, which a container or `taskset` narrows), or HWLINT_JOBS=N (at most one per
    CPU; 1: this process alone); 1 where fork is not the platform's safe default (only Linux)."""
    if not sys.platform.startswith("linux"):
        return 1, False
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    wanted = os.environ.get("HWLINT_JOBS", "")
    if wanted.isdigit():
        return max(1, min(int(wanted), cpus)), True
    return cpus, False


class Broken(Exception):
    """A worker died or could not be started or reached."""


class Workers:
    """`jobs` forked workers; `review(path)` is what each runs on the paths it is sent."""

    def __init__(self, jobs: int, files: Sequence[str], review: Callable[[str], Any]):
        self.pids: list[int] = []
        self.tasks: list[int] = []  # the write end of each worker's task pipe
        self.answers: list[int] = []  # the read end of each worker's answer pipe
        try:
            for _ in range(jobs):
                self._fork(files, review)
        except OSError as error:
            self.kill()
            raise Broken(str(error)) from error

    def _fork(self, files: Sequence[str], review: Callable[[str], Any]) -> None:
        task_read, task_write = os.pipe()
        answer_read, answer_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            code = 1
            try:
                for fd in (task_write, answer_read, *self.tasks, *self.answers):  # the other workers' pipes
                    os.close(fd)
                # Ctrl-C goes to the parent, which ends the workers (a terminal sends it to every
                # process of the job; a worker's own KeyboardInterrupt would only slow that).
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                _serve(task_read, answer_write, files, review)
                code = 0
            finally:
                os._exit(code)  # no exit hooks, no flushing of the parent's buffers
        os.close(task_read)
        os.close(answer_write)
        self.pids.append(pid)
        self.tasks.append(task_write)
        self.answers.append(answer_read)

    def send(self, worker: int, first: int, end: int) -> None:
        """Ask `worker` for the reviews of files[first:end]."""
        try:
            os.write(self.tasks[worker], TASK.pack(first, end))
        except OSError as error:  # its pipe's reading end is gone: it died
            raise Broken(str(error)) from error

    def receive(self, worker: int, timeout: float | None = None) -> list[Any] | None:
        """The answer to `worker`'s oldest task, or None when it has not begun to come within
        `timeout` seconds (None: wait as long as it takes)."""
        fd = self.answers[worker]
        if timeout is not None and not select.select([fd], [], [], timeout)[0]:
            return None
        (size,) = SIZE.unpack(_read(fd, SIZE.size))
        return pickle.loads(_read(fd, size))

    def kill(self) -> None:
        """End the workers now: what they were doing is dropped."""
        for pid in self.pids:
            _kill(pid)
        self._reap()

    def close(self) -> None:
        """End the workers once they are idle: each reads the end of its task pipe and exits."""
        self._reap()

    def _reap(self) -> None:
        for fd in (*self.tasks, *self.answers):
            os.close(fd)
        for pid in self.pids:
            _wait(pid)
        self.pids, self.tasks, self.answers = [], [], []


def _serve(tasks: int, answers: int, files: Sequence[str], review: Callable[[str], Any]) -> None:
    """A worker's life: review each slice asked for, answer, until the task pipe ends."""
    while True:
        try:
            task = _read(tasks, TASK.size)
        except Broken:  # the parent closed the pipe, or died
            return
        first, end = TASK.unpack(task)
        answer = pickle.dumps([review(path) for path in files[first:end]], pickle.HIGHEST_PROTOCOL)
        _write(answers, SIZE.pack(len(answer)) + answer)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _wait(pid: int) -> None:
    """Reap `pid` (a child that ended, or is ending: no zombie is left)."""
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _read(fd: int, size: int) -> bytes:
    """Exactly `size` bytes from `fd`; Broken if it ends first."""
    parts, left = [], size
    while left:
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            raise Broken("a worker's pipe ended")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


_NOT_YET = object()
INDEX = struct.Struct("<q")  # an item's place in the shared queue
MAX_SHARED = 65536 // INDEX.size  # the queue is written whole before anyone reads it


def share(items: Sequence[str], work: Callable[[str], Any], helpers: int) -> list[Any]:
    """[work(item) for item in items], this process and up to `helpers` forked workers taking
    the items in turn from one queue (a pipe holding their indexes, closed for writing, so an
    empty queue reads as its end). This process never waits on a helper: once the queue is
    empty it does the items still out itself, the last taken first, and keeps whichever answer
    comes first. So a helper slowed by a busy machine costs at most its fork and the one item
    it held, and a helper that dies costs only what it held."""
    if helpers < 1 or not 1 < len(items) <= MAX_SHARED:
        return [work(item) for item in items]
    results: list[Any] = [_NOT_YET] * len(items)
    queue, fill = os.pipe()
    try:
        os.write(fill, b"".join(INDEX.pack(i) for i in range(len(items))))  # whole: within a pipe's 64 KiB
    finally:
        os.close(fill)
    answers: dict[int, int] = {}  # a helper's answer pipe -> its pid
    try:
        for _ in range(helpers):
            try:
                fd, pid = _helper(queue, items, work, answers)
            except OSError:
                break
            answers[fd] = pid
        while True:
            _collect(answers, results)
            taken = os.read(queue, INDEX.size)
            if taken:
                (index,) = INDEX.unpack(taken)
            else:
                left = [i for i, result in enumerate(results) if result is _NOT_YET]
                if not left:
                    return results
                index = left[-1]
            if results[index] is _NOT_YET:
                results[index] = work(items[index])
    finally:
        os.close(queue)
        for fd, pid in answers.items():
            os.close(fd)
            _kill(pid)
            _wait(pid)


def _helper(queue: int, items: Sequence[str], work: Callable[[str], Any], others: dict[int, int]) -> tuple[int, int]:
    """Fork a helper that answers (index, work(item)) for each item it takes from `queue`;
    (its answer pipe, its pid)."""
    answer_read, answer_write = os.pipe()
    try:
        import fcntl

        fcntl.fcntl(answer_write, fcntl.F_SETPIPE_SZ, 1 << 20)  # an answer (~80 kB) is written whole, not waited on
    except (ImportError, AttributeError, OSError):
        pass
    pid = os.fork()
    if pid == 0:  # the helper: never returns
        code = 1
        try:
            for fd in (answer_read, *others):
                os.close(fd)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
            while taken := os.read(queue, INDEX.size):
                (index,) = INDEX.unpack(taken)
                answer = pickle.dumps((index, work(items[index])), pickle.HIGHEST_PROTOCOL)
                _write(answer_write, SIZE.pack(len(answer)) + answer)
            code = 0
        finally:
            os._exit(code)
    os.close(answer_write)
    return answer_read, pid


def _collect(answers: dict[int, int], results: list[Any]) -> None:
    """The answers the helpers have sent, without waiting; a helper whose pipe ended (it died,
    or finished) is dropped, its items left to this process."""
    while answers:
        ready = select.select(list(answers), [], [], 0)[0]
        if not ready:
            return
        for fd in ready:
            try:
                (size,) = SIZE.unpack(_read(fd, SIZE.size))
                index, result = pickle.loads(_read(fd, size))
            except Broken:
                os.close(fd)
                _wait(answers.pop(fd))
                continue
            if results[index] is _NOT_YET:
                results[index] = result
