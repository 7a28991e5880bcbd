"""An analysis child warms up while idle before its first request, one step at a time: the
request waits for the step under way only, and no step comes after it (it would stand
before the next edit). Children start with islpy imported."""

from __future__ import annotations

import gc
import signal
import sys
import threading
from collections.abc import Callable
from functools import partial
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

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


def _compiles(action: Callable[[], object], monkeypatch: pytest.MonkeyPatch) -> int:
    """How many times `action` compiles code (cattrs compiles a converter per type)."""
    import builtins

    calls = [0]
    compile_ = builtins.compile

    def counting(*arguments: Any, **keywords: Any) -> Any:
        calls[0] += 1
        return compile_(*arguments, **keywords)

    monkeypatch.setattr(builtins, "compile", counting)
    action()
    monkeypatch.undo()
    return calls[0]


def test_the_first_opens_messages_are_read_and_written_before_it_comes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`warm_messages` at `initialized`: a file's open and hover, and their replies, find
    their converters made (each made at first use took about a millisecond)."""
    from lsprotocol import types
    from pygls.protocol import default_converter

    from aiscan.lsp import stdio
    from aiscan.lsp.server import build_server

    uri = "file:///k.c"
    item = {"uri": uri, "languageId": "c", "version": 1, "text": DAXPY}
    opened = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}}
    hovered = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "textDocument/hover",
        "params": {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 4}},
    }
    where = types.Range(types.Position(2, 4), types.Position(3, 30))
    reply = types.HoverResponse(
        7, types.Hover(types.MarkupContent(types.MarkupKind.Markdown, "x"), where)
    )

    def first_open(server: Any) -> None:
        stdio._structure(server, opened)
        stdio._structure(server, hovered)
        server.protocol._converter.unstructure(reply)

    for warmed in (False, True):
        monkeypatch.setattr(stdio, "_CONVERTER", default_converter())  # type: ignore[no-untyped-call]
        server = build_server()  # its converters: none made yet
        if warmed:
            stdio.warm_messages(server)
        with monkeypatch.context() as inner:
            compiled = _compiles(partial(first_open, server), inner)
        assert (compiled == 0) == warmed, compiled


def test_a_documents_settings_read_only_its_devices_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aiscan.roofline import devices

    read: list[str] = []
    load = devices.load_device_file

    def reading(path: Path) -> devices.Device:
        read.append(path.name)
        return load(path)

    monkeypatch.setattr(devices, "load_device_file", reading)
    settings = settings_for(str(tmp_path / "k.c"), ("l4", "h100-sxm"))
    assert [d.key for d in settings.devices] == ["l4", "h100-sxm"]
    assert read == ["l4.toml", "h100-sxm.toml"]
    read.clear()
    settings = settings_for(str(tmp_path / "k.c"), ("h100", "h100-sxm"))  # an alias: all
    assert [d.key for d in settings.devices] == ["h100-sxm"]
    assert len(read) > 2
