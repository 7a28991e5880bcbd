"""Documents analyzed in child processes, each analysis under a wall-clock limit.

On a thread the analysis could not be interrupted (the time limit is a signal, delivered
to the main thread only), so one slow document held the only worker for as long as it
took and every other document's first analysis, and so its hover, queued behind it. In a
child process the limit is armed (the child's own main thread runs the analysis), a child
that overruns it anyway (stuck inside C code) is killed, and `PROCESSES` children let one
slow document leave the others answering. A newer edit kills the analysis it replaces.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing
import signal
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from typing import Any

from aiscan.analysis import count_memo
from aiscan.lsp.document import ServerSettings, time_limit_message
from aiscan.lsp.view import (
    DocumentView,
    NestView,
    failed_view,
    place_described_early,
    view_document,
)
from aiscan.lsp.view_store import editor_store
from aiscan.lsp.warmup import STEPS

__all__ = ["PRELOAD", "PROCESSES", "AnalysisPool", "Demand"]

PRELOAD = ("aiscan.lsp.warmup", "islpy")
"""What the fork server imports, so each child starts with it. islpy, which the analysis
imports at its first exact count, in particular: an import that the time limit
interrupts leaves its extension half registered, and importing it again in that child
aborts the process (nanobind: 'refusing to add duplicate key')."""
PROCESSES = 2
"""Analyses at once: one slow document leaves a process for the others."""
GRACE_S = 5.0
"""How long past its own limit a child may take before it is killed: the limit's alarm
waits for the call under way to return, and isl's calls hold the interpreter for seconds
on a loaded machine. Either way the document gets the same error (`time_limit_message`)."""


class Demand:
    """The line the editor hovers on while a document's first analysis runs: the child
    describes the nest holding it next (`view_document`'s `wanted_line`). Used on the
    event loop's thread only, the one thread that writes to the children."""

    def __init__(self) -> None:
        self.line: int | None = None
        self._connection: Connection | None = None

    def ask(self, line: int) -> None:
        if line != self.line:
            self.line = line
            self._send()

    def attach(self, connection: Connection | None) -> None:
        self._connection = connection
        self._send()

    def _send(self) -> None:
        if self._connection is not None and self.line is not None:
            try:
                self._connection.send(("line", self.line))
            except OSError:  # the child is gone: its reply says so
                self._connection = None


class AnalysisPool:
    """Child processes started on demand, at most `processes`, reused between analyses.
    It keeps the exact counts each analysis learned (`count_memo`) and hands each child
    those it has not seen: a child killed by an edit, or forked fresh, starts with them,
    and a nest the edit left as it was is not counted by isl again."""

    def __init__(self, processes: int = PROCESSES) -> None:
        self._context = _context()
        self._idle: list[_Child] = []
        self._all: set[_Child] = set()
        self._counts: list[count_memo.Entries] = []
        """What the analyses learned, oldest first; each child has seen a prefix."""
        self._slots = asyncio.Semaphore(processes)
        self._threads = ThreadPoolExecutor(processes + 1, thread_name_prefix="aiscan-analysis")

    async def view(
        self,
        text: str,
        path: str,
        settings: ServerSettings,
        limit_s: float,
        on_nest: Callable[[NestView], None] = lambda nest: None,
        demand: Demand | None = None,
        keep_as: str | None = None,
    ) -> DocumentView:
        """The document's view. `on_nest` gets each nest as soon as it is described (the
        one `demand` asks for first); cancelling kills the child. `keep_as`: the key the
        child keeps the view under once it has sent it (`view_store`)."""
        loop = asyncio.get_running_loop()

        def early(nest: NestView) -> None:  # on the reading thread
            loop.call_soon_threadsafe(on_nest, nest)

        async with self._slots:
            # Starting a child waits for the fork server's imports the first time: off the loop.
            child = (
                self._idle.pop()
                if self._idle
                else await loop.run_in_executor(self._threads, self._start)
            )
            news = count_memo.merged(self._counts[child.seen :])
            child.seen = len(self._counts)
            try:
                request = ("analyze", text, path, settings, limit_s, news, keep_as)
                child.connection.send(request)
            except OSError as error:  # the idle child died
                self._kill(child)
                return failed_view(path, f"the analysis process ended ({error})")
            if demand is not None:
                demand.attach(child.connection)
            reply = loop.run_in_executor(self._threads, child.replies, early)
            try:
                view = await asyncio.wait_for(reply, limit_s + GRACE_S)
            except TimeoutError:
                self._kill(child)
                return failed_view(path, time_limit_message(limit_s, GRACE_S))
            except asyncio.CancelledError:
                self._kill(child)
                raise
            except (EOFError, OSError) as error:  # the child died: killed for its memory?
                self._kill(child)
                return failed_view(path, f"the analysis process ended ({error or 'no reply'})")
            finally:
                if demand is not None:
                    demand.attach(None)
            self._learn(child)
            self._idle.append(child)
            return view

    async def warm(self) -> None:
        """Start the fork server and one child before the first document needs them."""
        if not self._all:
            child = await asyncio.get_running_loop().run_in_executor(self._threads, self._start)
            self._idle.append(child)

    def close(self) -> None:
        for child in list(self._all):
            self._kill(child)
        self._threads.shutdown(wait=False, cancel_futures=True)

    def _learn(self, child: _Child) -> None:
        """Keep what `child`'s analysis counted, within `count_memo.LIMIT` nests (the
        oldest go; each child's count of what it has seen moves with them). The child has
        its own counts: where it had seen every batch before, it has seen this one too."""
        if not child.learned:
            return
        current = child.seen == len(self._counts)
        self._counts.append(child.learned)
        if current:
            child.seen += 1
        dropped = 0
        while len(self._counts) > 1 and sum(map(len, self._counts)) > count_memo.LIMIT:
            self._counts.pop(0)
            dropped += 1
        for child in self._all:
            child.seen = max(0, child.seen - dropped)

    def _start(self) -> _Child:
        child = _Child(self._context)
        self._all.add(child)
        return child

    def _kill(self, child: _Child) -> None:
        child.kill()
        self._all.discard(child)


class _Child:
    def __init__(self, context: BaseContext) -> None:
        self.connection, theirs = context.Pipe()
        self.process: Any = context.Process(  # type: ignore[attr-defined]
            target=_serve_requests, args=(theirs,), name="aiscan-analysis", daemon=True
        )
        self.process.start()
        theirs.close()
        self.seen = 0
        """How many of the pool's batches of counts this child has been sent."""
        self.learned: count_memo.Entries = {}
        """The counts its last analysis made."""

    def replies(self, on_nest: Callable[[NestView], None]) -> DocumentView:
        """The replies to the request just sent: each nest as described to `on_nest`, the
        counts the analysis made (kept in `learned`), then the whole view (its diagnostics
        with it: they are published once it is stored)."""
        self.learned = {}
        while True:
            kind, part = self.connection.recv()
            if kind == "counts":
                self.learned = part
                continue
            if kind == "view":
                assert isinstance(part, DocumentView)
                return part
            assert kind == "nest" and isinstance(part, NestView)
            on_nest(part)

    def kill(self) -> None:
        # The connection is left to the thread reading it: the child's death ends its read.
        if self.process.is_alive():
            self.process.kill()
        self.process.join()


def _context() -> BaseContext:
    """A fork server that has imported the analysis: children start in milliseconds, and
    none is forked from the server's own threads."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(PRELOAD))
        return context
    return multiprocessing.get_context("spawn")


def _quietly(step: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):  # a failed warm-up costs its head start, no more
        step()


def _serve_requests(connection: Connection) -> None:
    """A child's loop: a request in, its view out, until the server goes away; while none
    has come yet, the warm-up's steps (`aiscan.lsp.warmup`). While it analyzes, the server
    may send the line the editor hovers on (`Demand`); one that comes after the analysis
    is over is left unread until here, and skipped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the editor's ^C is the server's to take
    gc.freeze()  # what the fork server imported: never garbage, never scanned again
    wanted: list[int] = []

    def wanted_line() -> int | None:
        while connection.poll():
            kind, line = connection.recv()
            if kind == "line":
                wanted.append(line)
        return wanted[-1] if wanted else None

    warm_up = list(STEPS)
    while True:
        try:
            while warm_up and not connection.poll():
                _quietly(warm_up.pop(0))  # idle: a first-use cost, one step at a time
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message[0] != "analyze":
            continue
        warm_up.clear()
        _, text, path, settings, limit_s, counts, keep_as = message
        count_memo.adopt(counts)
        count_memo.learned()  # what the warm-up counted is no news to hand on
        wanted.clear()
        try:
            view = view_document(
                text,
                path,
                settings,
                limit_s,
                lambda nest: connection.send(("nest", nest)),
                wanted_line,
            )
        except BaseException as error:  # a reply, whatever happened
            view = failed_view(path, f"aiscan could not analyze this text ({error!r})")
        connection.send(("counts", count_memo.learned()))
        connection.send(("view", view))
        if keep_as is not None and (store := editor_store()) is not None:
            store.put(keep_as, view, text, path)  # after the reply: off the editor's wait
        if not connection.poll():
            place_described_early(limit_s)  # for the next analysis, off the editor's wait
        if not connection.poll():
            # The collection an analysis would otherwise meet midway (a full one took 26-29
            # ms of a moved file's 172-179), made while the editor reads the reply: the next
            # request comes a debounce (0.3 s) after a keystroke, and this takes 50-70 ms.
            gc.collect()
