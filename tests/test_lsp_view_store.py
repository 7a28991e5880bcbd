"""The editor's kept views: a document opened again shows its view at once, the same one
its analysis then gives; only whole views of saved texts are kept, and an entry that is
not a view, or whose header changed, is a miss."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from lsp_wire import Server

from aiscan.cache import ResultCache
from aiscan.lsp.document import settings_for
from aiscan.lsp.view import DocumentView, view_document
from aiscan.lsp.view_store import ViewStore, view_from_json, view_json

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DEVICES = ("h100-sxm", "epyc-9654")
HEADER_KERNEL = """\
#include "sizes.h"
void scale(double *restrict x)
{
    for (int i = 0; i < N; i++)
        x[i] = 2.0 * x[i];
}
"""


def _viewed(path: Path) -> DocumentView:
    text = path.read_text()
    return view_document(text, str(path), settings_for(str(path), DEVICES), 600)


@pytest.mark.parametrize(
    "name", ["python/torch_llama.py", "c/dgemm_ijk.c", "python/unannotated.py"]
)
def test_a_view_reads_back_as_it_was_written(name: str) -> None:
    view = _viewed(FIXTURES / name)
    assert view.complete and view.nests
    written = json.loads(json.dumps(view_json(view)))  # as the file holds it
    read = view_from_json(written)
    assert read == view
    assert read is not None and [n.hover for n in read.nests] == [n.hover for n in view.nests]


def test_a_view_cut_short_by_the_time_limit_is_not_whole(tmp_path: Path) -> None:
    path = tmp_path / "llama.py"  # a path this process has not viewed: nothing kept
    text = (FIXTURES / "python" / "torch_llama.py").read_text()
    view = view_document(text, str(path), settings_for(str(path), DEVICES), 0.05)
    assert not view.complete
    assert "time limit" in view.errors[0].message


def _mutations() -> list[tuple[str, Any]]:
    """(what is wrong, how to make it wrong) of a view's JSON."""

    def nest_field(index: int, value: Any) -> Any:
        def mutate(entry: dict[str, Any]) -> None:
            entry["nests"][0][index] = value

        return mutate

    def span_field(index: int, value: Any) -> Any:
        def mutate(entry: dict[str, Any]) -> None:
            entry["nests"][0][0][index] = value

        return mutate

    def finding_severity(entry: dict[str, Any]) -> None:
        entry["findings"][0][2] = "fatal"

    def finding_details(entry: dict[str, Any]) -> None:
        entry["findings"][0][5] = [["AI", 1]]

    def extra_key(entry: dict[str, Any]) -> None:
        entry["more"] = []

    def errors_not_a_list(entry: dict[str, Any]) -> None:
        entry["errors"] = {"0": []}

    return [
        ("hover not text", nest_field(1, 3)),
        ("a nest missing its lens", lambda e: e["nests"][0].pop()),
        ("a line as text", span_field(1, "12")),
        ("a line as a bool", span_field(1, True)),
        ("a negative column", span_field(2, -1)),
        ("an unknown severity", finding_severity),
        ("a detail not text", finding_details),
        ("another key", extra_key),
        ("errors not a list", errors_not_a_list),
    ]


@pytest.mark.parametrize(("wrong", "mutate"), _mutations(), ids=[m[0] for m in _mutations()])
def test_an_entry_that_is_not_a_view_is_a_miss(wrong: str, mutate: Any) -> None:
    view = _viewed(FIXTURES / "python" / "torch_llama.py")
    assert view.findings and view.nests
    entry = json.loads(json.dumps(view_json(view)))
    assert view_from_json(entry) == view
    mutate(entry)
    assert view_from_json(entry) is None


def test_only_whole_views_of_saved_texts_are_kept(tmp_path: Path) -> None:
    store = ViewStore(ResultCache(tmp_path / "cache"))
    path = tmp_path / "kernel.c"
    text = (FIXTURES / "c" / "daxpy.c").read_text()
    path.write_text(text)
    settings = settings_for(str(path), DEVICES)
    view = view_document(text, str(path), settings, 600)
    edited = text + "\n"
    store.put(store.key(edited, str(path), settings), view, edited, str(path))  # unsaved
    assert store.get(store.key(edited, str(path), settings)) is None
    key = store.key(text, str(path), settings)
    cut = DocumentView(view.findings, view.errors, view.nests, complete=False)
    store.put(key, cut, text, str(path))
    assert store.get(key) is None
    store.put(key, view, text, str(path))
    assert store.get(key) == view
    other = settings_for(str(path), ("a100-sxm",))
    assert store.get(store.key(text, str(path), other)) is None  # other devices


def test_a_changed_header_makes_the_kept_view_a_miss(tmp_path: Path) -> None:
    store = ViewStore(ResultCache(tmp_path / "cache"))
    (tmp_path / "sizes.h").write_text("#define N 1024\n")
    path = tmp_path / "scale.c"
    path.write_text(HEADER_KERNEL)
    settings = settings_for(str(path), DEVICES)
    view = view_document(HEADER_KERNEL, str(path), settings, 600)
    assert str(tmp_path / "sizes.h") in dict(view.dependencies)
    key = store.key(HEADER_KERNEL, str(path), settings)
    store.put(key, view, HEADER_KERNEL, str(path))
    assert store.get(key) == view
    (tmp_path / "sizes.h").write_text("#define N 2048\n")
    assert store.get(key) is None


def _hover(server: Server, id_: int, uri: str, line: int) -> str:
    position = {"line": line, "character": 8}
    server.request(id_, "textDocument/hover", {"textDocument": {"uri": uri}, "position": position})
    return str(server.response(id_, timeout_s=300)["result"]["contents"]["value"])


def _stats(server: Server, id_: int) -> dict[str, int]:
    server.request(id_, "aiscan/stats", {})
    return dict(server.response(id_)["result"])


def test_a_document_opened_again_shows_its_kept_view_which_its_analysis_confirms(
    tmp_path: Path,
) -> None:
    cache = Path(os.environ["AISCAN_CACHE_DIR"])  # the tests' own (conftest)
    # A tree's configured cache directory is the command line's, never the editor's.
    (tmp_path / "aiscan.toml").write_text(
        f'devices = {json.dumps(list(DEVICES))}\ncache-dir = "tree_cache"\n'
    )
    source = FIXTURES / "python" / "torch_layers.py"
    text = source.read_text()
    path = tmp_path / source.name
    path.write_text(text)
    uri = path.as_uri()
    line = _viewed(source).nests[-1].span.line - 1  # 0-based, as LSP counts
    hovers, diagnostics = [], []
    for run in range(2):
        server = Server(tmp_path)
        try:
            server.initialize(tmp_path, {"timeLimit": 300})
            server.open(uri, text, "python")
            diagnostics.append(server.diagnostics(uri, timeout_s=300))
            hovers.append(_hover(server, 1, uri, line))
            if run == 0:
                deadline = time.monotonic() + 60
                while not list(cache.rglob("*.json")) and time.monotonic() < deadline:
                    time.sleep(0.05)  # the child keeps it after its reply
                assert _stats(server, 2)["kept_views"] == 0
                continue
            assert _stats(server, 2)["kept_views"] == 1
            deadline = time.monotonic() + 300
            while _stats(server, 3)["confirmed_views"] == 0 and time.monotonic() < deadline:
                time.sleep(0.1)
            # Its analysis gave the same view, so it was not published again.
            assert _stats(server, 4)["confirmed_views"] == 1
        finally:
            server.close()
        assert "Traceback" not in server.errors()
    assert hovers[0] == hovers[1] and "**aiscan: loop nest" in hovers[0]
    assert diagnostics[0] == diagnostics[1]
    assert not (tmp_path / "tree_cache").exists()


def test_with_the_cache_off_nothing_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AISCAN_NO_CACHE", "1")
    cache = Path(os.environ["AISCAN_CACHE_DIR"])
    path = tmp_path / "daxpy.c"
    path.write_text((FIXTURES / "c" / "daxpy.c").read_text())
    server = Server(tmp_path)
    try:
        server.initialize(tmp_path, {"devices": list(DEVICES)})
        server.open(path.as_uri(), path.read_text())
        server.diagnostics(path.as_uri(), timeout_s=120)
        time.sleep(0.5)
    finally:
        server.close()
    assert not list(cache.rglob("*.json"))
