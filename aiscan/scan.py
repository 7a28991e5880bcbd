"""Running one per-file task over many files: in parallel, cached, time- and memory-limited,
in order.

Each file is handled by a module-level task function that returns a JSON-able payload
(`{"ok": bool, "content": digest, "output": ..., "dependencies": [...]}`), so payloads
travel cheaply between processes and can be cached as they are: under the `content` digest
of the bytes the task read, so a file edited mid-scan is never cached under its other text.
Output order is the input order whatever the parallelism; a file over the time limit
becomes a located "analysis timed out" error, and one over the memory limit a located "too
large to analyze" error (`aiscan.workers`).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, TextIO

from aiscan.analysis import count_memo
from aiscan.cache import ResultCache
from aiscan.collector import retire_file_garbage
from aiscan.errors import Diagnostic, Severity
from aiscan.limits import DEFAULT_MEMORY_LIMIT_MIB
from aiscan.printable import printable_path
from aiscan.span import Span
from aiscan.workers import Death, can_fork, run_in_workers

__all__ = [
    "AnalysisTimedOut",
    "Payload",
    "Task",
    "default_jobs",
    "run_task",
    "time_limit",
]

Payload = dict[str, Any]


def _succeeded(payload: Payload) -> bool:
    return payload.get("ok") is True


@dataclass(frozen=True)
class Task:
    """What to do with each file. `run` and `failed` must be module-level (picklable)."""

    kind: str
    run: Callable[[str, Any], Payload]
    failed: Callable[[str, Diagnostic, Any], Payload]
    options: Any
    fingerprint: str
    well_formed: Callable[[Payload], bool] = _succeeded
    """Is a cached payload one `run` could have returned? A bad entry is a miss."""


class AnalysisTimedOut(BaseException):
    """Raised inside `time_limit` when the time is up.

    A BaseException, like KeyboardInterrupt, so that the `except Exception` guards which
    turn a library's failure on bad input into a diagnostic cannot swallow it.
    """


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Interrupt the body after `seconds` with `AnalysisTimedOut` (POSIX main thread only;
    elsewhere, or with no limit, the body simply runs)."""
    armed = _arm(seconds)
    try:
        yield
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)


def default_jobs() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def run_task(
    files: Sequence[str],
    task: Task,
    *,
    jobs: int | None = None,
    cache: ResultCache | None = None,
    timeout_s: float | None = None,
    memory_limit_mib: int | None = DEFAULT_MEMORY_LIMIT_MIB,
    progress: TextIO | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> list[Payload]:
    """The task's payload for every file, in the order given. Files run in forked workers
    (`aiscan.workers`) where the system can fork, else in this process or a pool without
    the memory limit; `memory_limit_mib` None or 0 is no limit. `meanwhile` is this
    process's own work for after the run, done once the workers have started (the plot's
    imports), or first where nothing runs beside it."""
    cache = cache or ResultCache(None)
    keys = [cache.lookup_key(task.kind, task.fingerprint, path) for path in files]
    results = [_served(cache.get(key), task) for key in keys]
    # The largest files first: a long file started last keeps one worker busy while the
    # others idle (on 8 cores the fixtures' roofline took 8.0 s in the given order, 5.4 s
    # this way, by their measured times). Payloads still come back in the given order.
    missing = sorted(
        (i for i, result in enumerate(results) if result is None),
        key=lambda i: -_size_of(files[i]),
    )
    bar = _Progress(progress, len(files), len(files) - len(missing))
    jobs = min(jobs or default_jobs(), max(1, len(missing)))
    limits = _Limits(timeout_s, memory_limit_mib or None)
    with count_memo.stored_in(cache):  # the workers forked below keep isl's counts there too
        for index, payload in zip(
            missing,
            _execute([files[i] for i in missing], task, jobs, limits, meanwhile),
            strict=True,
        ):
            results[index] = payload
            if payload.get("ok"):
                key = cache.key(task.kind, task.fingerprint, files[index], payload.get("content"))
                cache.put(key, payload, payload.get("dependencies", ()))
            bar.advance(files[index])
    bar.close()
    return [r for r in results if r is not None]


def _size_of(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:  # reported when the file is read
        return 0


def _served(payload: Payload | None, task: Task) -> Payload | None:
    return payload if payload is not None and task.well_formed(payload) else None


@dataclass(frozen=True)
class _Limits:
    timeout_s: float | None
    memory_mib: int | None


def _execute(
    files: Sequence[str],
    task: Task,
    jobs: int,
    limits: _Limits,
    meanwhile: Callable[[], None] | None = None,
) -> Iterator[Payload]:
    if not files or not can_fork():
        if meanwhile is not None:
            meanwhile()
        meanwhile = None
    if not files:
        return
    # A file's garbage is retired for the files after it; after the only one, the run ends.
    retire = len(files) > 1
    if can_fork():
        yield from run_in_workers(
            files,
            partial(_guarded, task=task, limits=limits, retire=retire),
            partial(_died, task=task, limits=limits),
            jobs=jobs,
            memory_limit_bytes=limits.memory_mib * 1024 * 1024 if limits.memory_mib else None,
            timeout_s=limits.timeout_s,
            started=meanwhile,
        )
        return
    if jobs <= 1 or len(files) <= 1:
        for path in files:
            yield _guarded(path, task, limits, retire)
        return
    # Imported here: a one-file run (pre-commit, the editor) never starts workers.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    chunk = max(1, min(16, len(files) // (jobs * 8)))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        yield from pool.map(
            _guarded, files, [task] * len(files), [limits] * len(files), chunksize=chunk
        )


def _guarded(path: str, task: Task, limits: _Limits, retire: bool = True) -> Payload:
    """Run the task on one file; a time-out or a crash becomes that file's located error.
    `retire`: collect its garbage afterwards (a one-file run skips that collection, 5 ms)."""
    try:
        return _run_guarded(path, task, limits)
    finally:
        if retire:
            retire_file_garbage()


def _run_guarded(path: str, task: Task, limits: _Limits) -> Payload:
    try:
        with time_limit(limits.timeout_s):
            return task.run(path, task.options)
    except AnalysisTimedOut:
        return _failed(path, task, _timed_out(limits))
    except RecursionError:
        return _failed(path, task, "input nested too deeply to analyze")
    except MemoryError:
        return _failed(path, task, _too_large(limits))
    except Exception as error:  # one bad file must not stop the scan
        if os.environ.get("AISCAN_DEBUG"):  # as for the CLI's own internal errors
            import traceback  # here: a file that fails imports it, not every run

            traceback.print_exc()
        return _failed(
            path, task, f"internal error while analyzing: {type(error).__name__}: {error}"
        )


def _died(path: str, death: Death, task: Task, limits: _Limits) -> Payload:
    """The error of a file whose worker died on it twice, or was killed for its time."""
    if death.timed_out:
        return _failed(path, task, _timed_out(limits))
    signal_number = os.WTERMSIG(death.status) if os.WIFSIGNALED(death.status) else None
    if signal_number in (signal.SIGABRT, signal.SIGKILL) and limits.memory_mib:
        # An allocation the limit refused where Python could not raise MemoryError
        # (libcst's native parser aborts), or the system's out-of-memory killer.
        return _failed(path, task, _too_large(limits))
    if signal_number is not None:
        how = f"died of {signal.Signals(signal_number).name}"
    else:
        how = f"exited with status {os.waitstatus_to_exitcode(death.status)}"
    return _failed(path, task, f"analysis crashed: its worker process {how}")


def _failed(path: str, task: Task, message: str) -> Payload:
    return task.failed(path, Diagnostic(Span(path, 1, 1), Severity.ERROR, message), task.options)


def _timed_out(limits: _Limits) -> str:
    return f"analysis timed out after {limits.timeout_s:g} s (--timeout)"


def _too_large(limits: _Limits) -> str:
    if limits.memory_mib:
        return f"too large to analyze (memory limit {limits.memory_mib} MiB, --memory-limit)"
    return "too large to analyze (out of memory)"


def _arm(timeout_s: float | None) -> bool:
    """Interrupt the analysis after `timeout_s` (main thread of a POSIX process only)."""
    if not timeout_s or not hasattr(signal, "setitimer"):
        return False
    if threading.current_thread() is not threading.main_thread():
        return False

    def expire(signum: int, frame: object) -> None:
        raise AnalysisTimedOut

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    return True


class _Progress:
    """A one-line progress bar on a terminal; silent when piped or under CI."""

    def __init__(self, stream: TextIO | None, total: int, done: int) -> None:
        self.enabled = bool(
            stream is not None and stream.isatty() and total >= 20 and not os.environ.get("CI")
        )
        self.stream = stream
        self.total = total
        self.done = done
        self.started = time.monotonic()

    def advance(self, path: str) -> None:
        self.done += 1
        if self.enabled and self.stream is not None:
            width = len(str(self.total))
            # The scanned tree's name, escaped: an ESC in it must not drive the terminal.
            shown = printable_path(path)
            name = shown if len(shown) <= 50 else "..." + shown[-47:]
            self.stream.write(f"\r\033[K[{self.done:>{width}}/{self.total}] {name}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.stream is not None:
            elapsed = time.monotonic() - self.started
            self.stream.write(f"\r\033[K{self.total} files in {elapsed:.1f} s\n")
            self.stream.flush()
