"""Hostile bytes on the server's stdin: every request gets an answer or an error response,
and the server stays alive and keeps answering the next message (issue 35, item 14)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsp_wire import Server, frame

DAXPY = """\
void daxpy(int n, double a, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] / y[i];
}
"""
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = Server(tmp_path)
    running.initialize(tmp_path, {"devices": ["h100-sxm"]})
    yield running
    running.close()
    assert "Traceback" not in running.errors()


def _stats(id_: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": "aiscan/stats", "params": {}}


def _hover_params(uri: str, line: int, character: int) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def _still_answers(server: Server, id_: int) -> None:
    server.send(frame(_stats(id_)))
    assert set(server.response(id_)["result"]) == {"analyses", "kept_views", "confirmed_views"}
    assert server.process.poll() is None


@pytest.mark.parametrize("length", ["99999999999999", "-5", "12abc", ""])
def test_a_bad_content_length_is_an_error_response_and_the_server_goes_on(
    server: Server, length: str
) -> None:
    server.send(frame(_stats(1), length=length))
    server.send(frame(_stats(2)))
    error = server.response(1)["error"]
    assert error["code"] == INVALID_REQUEST
    assert "Content-Length" in error["message"]
    assert server.response(2)["result"] == {"analyses": 0, "kept_views": 0, "confirmed_views": 0}
    _still_answers(server, 3)


def test_a_header_without_a_json_body_is_skipped(server: Server) -> None:
    server.send(b"Content-Length: -1\r\n\r\nnot json at all")
    server.send(frame(_stats(4)))
    error = server.wait_for(lambda m: m.get("id") is None and "error" in m)
    assert error["error"]["code"] == INVALID_REQUEST
    assert server.response(4)["result"] == {"analyses": 0, "kept_views": 0, "confirmed_views": 0}


def test_a_negative_position_is_an_invalid_params_error(server: Server, tmp_path: Path) -> None:
    uri = (tmp_path / "daxpy.c").as_uri()
    server.open(uri, DAXPY)
    server.diagnostics(uri)
    document = {"uri": uri}
    server.request(
        5,
        "textDocument/hover",
        {"textDocument": document, "position": {"line": -1, "character": 0}},
    )
    assert server.response(5)["error"]["code"] == INVALID_PARAMS
    server.request(
        6, "textDocument/hover", {"textDocument": document, "position": {"line": 2, "character": 4}}
    )
    hover = server.response(6)["result"]
    assert "FLOPs: `2*n` (mul n, div n)" in hover["contents"]["value"]


def test_a_nul_in_the_uri_still_gets_diagnostics(server: Server, tmp_path: Path) -> None:
    plain = (tmp_path / "daxpy.c").as_uri()
    server.open(plain, DAXPY)
    expected = {(d["code"], d["range"]["start"]["line"]) for d in server.diagnostics(plain)}
    assert expected == {("AIS001", 2), ("AIS006", 3)}
    nul = (tmp_path / "dax%00py.c").as_uri().replace("%2500", "%00")
    server.open(nul, DAXPY)
    assert {(d["code"], d["range"]["start"]["line"]) for d in server.diagnostics(nul)} == expected
    _still_answers(server, 7)
