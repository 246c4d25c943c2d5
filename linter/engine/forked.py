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
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

TASK = struct.Struct("<qq")  # files[first:end]: 16 bytes, under PIPE_BUF, so written whole
SIZE = struct.Struct("<q")  # the length of the pickled answer that follows


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
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._reap()

    def close(self) -> None:
        """End the workers once they are idle: each reads the end of its task pipe and exits."""
        self._reap()

    def _reap(self) -> None:
        for fd in (*self.tasks, *self.answers):
            os.close(fd)
        for pid in self.pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
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
