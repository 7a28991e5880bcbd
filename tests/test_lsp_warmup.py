"""An analysis child warms up while idle before its first request, one step at a time: the
request waits for the step under way only, and no step comes after it (it would stand
before the next edit). Children start with islpy imported."""

from __future__ import annotations

import gc
import signal
import sys
import threading
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from aiscan.lsp import warmup, worker
from aiscan.lsp.document import settings_for
from aiscan.lsp.view import DocumentView

DAXPY = """\
void daxpy(int n, double a, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}
"""


def test_an_idle_child_warms_up_between_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Step 1 runs while nothing is asked; a request sent during it is served next, and
    step 2 never runs (the child stays idle a while before its connection closes)."""
    events: list[str] = []
    started, sent = threading.Event(), threading.Event()
    second = threading.Event()  # set if step 2 runs

    def first() -> None:  # the request is sent while this step runs
        events.append("step 1")
        started.set()
        assert sent.wait(30)

    def then() -> None:
        events.append("step 2")
        second.set()

    monkeypatch.setattr(worker, "STEPS", (first, then))
    ours, theirs = Pipe()
    path = str(tmp_path / "daxpy.c")

    def client(connection: Connection) -> None:
        assert started.wait(30)  # the child is idle and warming up
        connection.send(("analyze", DAXPY, path, settings_for(path), 30.0, {}, None))
        sent.set()
        while (reply := connection.recv())[0] != "view":
            pass
        assert isinstance(reply[1], DocumentView)
        events.append(f"view, {len(reply[1].nests)} nest")
        second.wait(1.0)  # time for a step 2 that would wrongly run while idle
        connection.close()  # the child's loop ends

    reading = threading.Thread(target=client, args=(ours,))
    reading.start()
    interrupt = signal.getsignal(signal.SIGINT)
    try:
        worker._serve_requests(theirs)  # on this main thread: its time limit is armed
    finally:
        signal.signal(signal.SIGINT, interrupt)
        gc.unfreeze()  # the child froze what it imported: this is the tests' process
        reading.join(30)
    assert events == ["step 1", "view, 1 nest"]


def _imported(connection: Connection) -> None:
    connection.send([name for name in ("islpy", "aiscan.lsp.view") if name in sys.modules])


def test_children_start_with_islpy_imported() -> None:
    """An analysis that the time limit stops inside `import islpy` left nanobind's types
    half registered, and the child's next import of it aborted the process."""
    ours, theirs = Pipe()
    process = worker._context().Process(target=_imported, args=(theirs,))  # type: ignore[attr-defined]
    process.start()
    try:
        assert ours.recv() == ["islpy", "aiscan.lsp.view"]
    finally:
        process.join(30)


def test_the_warm_up_ends_by_taking_what_survives_out_of_later_collections() -> None:
    """A full collection scanned the child's imported modules and caches, about 90 ms of
    each edit's analysis: the last step collects the warm-up's garbage and freezes the
    rest."""
    assert worker.STEPS[-1] is warmup.STEPS[-1]
    gc.unfreeze()
    try:
        worker.STEPS[-1]()
        assert gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()
