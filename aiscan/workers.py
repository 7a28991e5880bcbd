"""Forked worker processes, one file at a time each, under a memory and a time limit.

A file can exhaust memory where Python cannot catch it (libcst's native parser aborts the
process), or hold a worker in native code where its own time limit cannot interrupt it.
So every file runs in a worker forked from this process: its address space is limited
(`RLIMIT_AS`), the parent kills it when the file's time is well past, and a worker that
dies takes nothing with it but the file it was on. That file is retried alone in a fresh
worker (a worker grown by earlier files may have died of their leftovers); if it kills that
one too, it becomes the file's located error, and every other file's result stands.
POSIX only (`can_fork`); the parent imports little before it forks, so the worker pays
for the analysis's imports, as a one-file run always did.
"""

from __future__ import annotations

import os
import pickle
import selectors
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, BinaryIO

from aiscan import dataclass_code

__all__ = ["Death", "can_fork", "run_in_workers"]

Payload = dict[str, Any]

KILL_GRACE_S = 1.0
"""How long past its time limit a file may run before its worker is killed: the worker's
own timer normally ends it first, with the same message."""


@dataclass(frozen=True)
class Death:
    """How a worker ended while a file was in it."""

    status: int
    """The wait status (`os.waitpid`)."""
    timed_out: bool
    """Killed by the parent for running past the time limit."""


@dataclass
class _Worker:
    pid: int
    requests: BinaryIO
    replies: BinaryIO
    solo: bool
    """A retry: serves its one file, then goes."""
    errors: BinaryIO
    """Its standard error, passed on when it ends, less what the file it died on wrote
    (a native crash's report: the file's error says it in one line)."""
    index: int | None = None
    deadline: float | None = None
    errors_before: int = 0
    """The size of `errors` when the current file was sent."""


def can_fork() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32"


def run_in_workers(
    files: Sequence[str],
    run: Callable[[str], Payload],
    died: Callable[[str, Death], Payload],
    *,
    jobs: int,
    memory_limit_bytes: int | None,
    timeout_s: float | None,
    started: Callable[[], None] | None = None,
) -> Iterator[Payload]:
    """`run(path)` for every file, in up to `jobs` workers, yielded in the order given.
    A file whose worker dies twice, or that its worker holds past the time limit, gets
    `died(path, death)` instead. `started` runs once, here, when the first workers have
    their files (forked before it: it may import what they need not inherit)."""
    pending = deque(range(len(files)))
    retries: deque[int] = deque()
    retried: set[int] = set()
    results: dict[int, Payload] = {}
    workers: list[_Worker] = []
    selector = selectors.DefaultSelector()

    def start(index: int, solo: bool = False, worker: _Worker | None = None) -> None:
        if worker is None:
            worker = _spawn(run, memory_limit_bytes, workers, solo)
            workers.append(worker)
            selector.register(worker.replies, selectors.EVENT_READ, worker)
        worker.index = index
        worker.errors_before = os.fstat(worker.errors.fileno()).st_size
        worker.deadline = time.monotonic() + timeout_s + KILL_GRACE_S if timeout_s else None
        with suppress(OSError):  # one that died already says so on its reply pipe next
            pickle.dump(files[index], worker.requests)
            worker.requests.flush()

    def stop(worker: _Worker, kill: bool = False, fatal: bool = False) -> int:
        selector.unregister(worker.replies)
        workers.remove(worker)
        return _reap(worker, kill, fatal)

    def lost(worker: _Worker, death: Death) -> None:
        index = worker.index
        assert index is not None
        if death.timed_out or index in retried:
            results[index] = died(files[index], death)
        else:
            retried.add(index)
            retries.append(index)

    following = 0
    try:
        while following < len(files):
            for worker in [w for w in workers if w.index is None]:
                if pending:
                    start(pending.popleft(), worker=worker)
                else:
                    stop(worker)
            while retries and len(workers) < jobs:
                start(retries.popleft(), solo=True)
            while pending and len(workers) < jobs:
                start(pending.popleft())
            if started is not None:
                started()
                started = None
            assert workers, "a file is unfinished, so some worker has it"
            for key, _ in selector.select(_wait(workers)):
                worker = key.data
                try:
                    payload = pickle.load(worker.replies)
                except (EOFError, OSError, pickle.UnpicklingError):
                    lost(worker, Death(stop(worker, fatal=True), timed_out=False))
                    continue
                assert worker.index is not None
                results[worker.index] = payload
                worker.index = worker.deadline = None
                if worker.solo:
                    stop(worker)
            now = time.monotonic()
            for worker in [w for w in workers if w.deadline is not None and w.deadline < now]:
                lost(worker, Death(stop(worker, kill=True, fatal=True), timed_out=True))
            while following in results:
                yield results.pop(following)
                following += 1
    finally:  # idle workers end when their requests close; busy ones (an interrupt) are killed
        for worker in list(workers):
            stop(worker, kill=worker.index is not None)
        selector.close()


def _wait(workers: Sequence[_Worker]) -> float | None:
    """Seconds until the first deadline of a busy worker (None: no deadline)."""
    deadlines = [w.deadline for w in workers if w.deadline is not None]
    return max(0.0, min(deadlines) - time.monotonic()) if deadlines else None


def _spawn(
    run: Callable[[str], Payload],
    memory_limit_bytes: int | None,
    others: Sequence[_Worker],
    solo: bool,
) -> _Worker:
    request_read, request_write = os.pipe()
    reply_read, reply_write = os.pipe()
    errors = _scratch_file()
    pid = os.fork()
    if pid == 0:  # the worker: it never returns into the caller's code
        code = 1
        try:
            os.close(request_write)
            os.close(reply_read)
            for other in others:  # so that only the parent holds their pipes
                os.close(other.requests.fileno())
                os.close(other.replies.fileno())
            os.dup2(errors.fileno(), 2)
            sys.stderr = open(2, "w", errors="backslashreplace", closefd=False)  # noqa: SIM115
            _limit_memory(memory_limit_bytes)
            _serve(os.fdopen(request_read, "rb"), os.fdopen(reply_write, "wb"), run)
            code = 0
        finally:
            sys.stderr.flush()
            dataclass_code.save()  # `os._exit` runs no `atexit` function
            os._exit(code)
    os.close(request_read)
    os.close(reply_write)
    requests, replies = os.fdopen(request_write, "wb"), os.fdopen(reply_read, "rb")
    return _Worker(pid, requests, replies, solo, errors)


def _scratch_file() -> BinaryIO:
    """An anonymous file for a worker's standard error: in memory where Linux offers it
    (no import of `tempfile`, a sixth of a one-file run's overhead), else a temporary file."""
    if hasattr(os, "memfd_create"):
        return os.fdopen(os.memfd_create("aiscan-worker-stderr"), "w+b")
    import tempfile

    return tempfile.TemporaryFile()


def _limit_memory(limit_bytes: int | None) -> None:
    if limit_bytes is None:
        return
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit_bytes = min(limit_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, hard))


def _serve(requests: BinaryIO, replies: BinaryIO, run: Callable[[str], Payload]) -> None:
    while True:
        try:
            path = pickle.load(requests)
        except EOFError:
            return
        payload = run(path)
        sys.stderr.flush()  # what the file wrote is in `errors` before its reply
        pickle.dump(payload, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


def _reap(worker: _Worker, kill: bool, fatal: bool) -> int:
    """Close a worker's pipes (an idle worker then ends), wait for it, and pass on its
    standard error (less the part its current file wrote, when that file was fatal to it);
    its wait status."""
    if kill:
        with suppress(ProcessLookupError):
            os.kill(worker.pid, signal.SIGKILL)
    for stream in (worker.requests, worker.replies):
        with suppress(OSError):
            stream.close()
    _, status = os.waitpid(worker.pid, 0)
    with worker.errors:
        descriptor = worker.errors.fileno()
        size = worker.errors_before if fatal else os.fstat(descriptor).st_size
        if size:
            sys.stderr.write(os.pread(descriptor, size, 0).decode(errors="replace"))
    return status
