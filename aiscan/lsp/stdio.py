"""Serving a pygls server over stdin/stdout with `framing`'s reader instead of pygls's own.

Whatever arrives, a request gets a response: a frame with a bad header, a body that is not
JSON and params that do not fit the method's types (a negative position) are answered
with JSON-RPC errors (for the request's id where it can be read, else `null`), and the
loop goes on with the next message.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, default_converter

from aiscan.lsp.framing import Body, FrameReader, Malformed, encode

__all__ = ["serve_stdio", "warm_messages"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
_READ_BYTES = 1 << 16

logger = logging.getLogger(__name__)
_CONVERTER = default_converter()  # type: ignore[no-untyped-call]


def serve_stdio(server: LanguageServer, stdin: BinaryIO | None = None) -> None:
    """Run `server` on stdin/stdout until the client exits or closes stdin."""
    stdin = stdin or sys.stdin.buffer
    writer = StdoutWriter(sys.stdout.buffer)
    server.protocol.set_writer(writer)
    try:
        asyncio.run(_serve(server, stdin.fileno(), writer))
    except BrokenPipeError:
        logger.error("the client's end of the pipe closed; stopping")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]


async def _serve(server: LanguageServer, fd: int, writer: StdoutWriter) -> None:
    loop = asyncio.get_running_loop()
    reader = FrameReader()
    while data := await loop.run_in_executor(None, os.read, fd, _READ_BYTES):
        for frame in reader.feed(data):
            if isinstance(frame, Malformed):
                _answer_malformed(frame, writer)
            else:
                _dispatch(server, frame, writer)


def _answer_malformed(frame: Malformed, writer: StdoutWriter) -> None:
    message = _json(frame.body)
    logger.warning("skipped a message with a bad header: %s", frame.reason)
    if isinstance(message, dict) and ("method" in message) != ("id" in message):
        return  # a notification, or the client's response to a request: nothing to answer
    _error(writer, _id(message), INVALID_REQUEST, f"bad message header: {frame.reason}")


def _dispatch(server: LanguageServer, frame: Body, writer: StdoutWriter) -> None:
    raw = _json(frame.data)
    if raw is None:
        _error(writer, None, PARSE_ERROR, "the message body is not JSON")
        return
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
        _error(writer, _id(raw), INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        return
    try:
        message = _structure(server, raw)
    except Exception as error:  # params that do not fit the method's types
        if "method" in raw and "id" in raw:
            detail = str(error).splitlines()[0] if str(error) else type(error).__name__
            message = f"invalid params for {raw['method']}: {detail}"
            _error(writer, _id(raw), INVALID_PARAMS, message)
        return  # a notification (or a response) that does not fit its type: dropped
    try:
        server.protocol.handle_message(message)
    except Exception:  # pygls answers a failing handler itself; this is its own failure
        logger.exception("could not handle a message")


def _structure(server: LanguageServer, raw: dict[str, Any]) -> Any:
    """The message as pygls's typed object. Requests and notifications are structured
    here, so that params of the wrong type are this module's error to answer rather than
    a traceback in pygls's log; responses go to pygls, which knows their result types."""
    method = raw.get("method")
    if not isinstance(method, str):
        return server.protocol.structure_message(raw)
    message_type = server.protocol.get_message_type(method)
    if message_type is None:
        message_type = JsonRPCRequestMessage if "id" in raw else JsonRPCNotification
    return _CONVERTER.structure(raw, message_type)


_URI = "file:///aiscan-warm-up.c"
_FIRST_MESSAGES: tuple[dict[str, Any], ...] = (
    {
        "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": _URI, "languageId": "c", "version": 1, "text": ""}},
    },
    {
        "id": 0,
        "method": "textDocument/hover",
        "params": {"textDocument": {"uri": _URI}, "position": {"line": 0, "character": 0}},
    },
    {
        "method": "textDocument/didChange",
        "params": {
            "textDocument": {"uri": _URI, "version": 2},
            "contentChanges": [{"text": ""}],
        },
    },
    {"id": 0, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": _URI}}},
)
"""What an editor sends as a file opens and is edited: each method's params read once."""


def warm_messages(server: LanguageServer) -> None:
    """The converters' first use, paid before the first file opens: cattrs writes and
    compiles a function per message type the first time it reads or writes one (about 1 ms
    each), and a file's first open and hover read two and write two."""
    for message in _FIRST_MESSAGES:
        _structure(server, {"jsonrpc": "2.0", **message})
    protocol = server.protocol  # the replies: the types pygls writes them as
    where = types.Range(types.Position(0, 0), types.Position(0, 1))
    hover = types.Hover(types.MarkupContent(types.MarkupKind.Markdown, ""), where)
    diagnostic = types.Diagnostic(where, "", types.DiagnosticSeverity.Warning, "AIS001")
    published = types.PublishDiagnosticsParams(_URI, [diagnostic], 1)
    replies = (
        types.PublishDiagnosticsNotification(params=published),
        types.HoverResponse(id=0, result=hover),
    )
    # Twice: a converter made for a new type can drop those made before it from the cache.
    for reply in (*replies, *replies):
        protocol._converter.unstructure(reply)


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _id(raw: Any) -> int | str | None:
    id_ = raw.get("id") if isinstance(raw, dict) else None
    return id_ if isinstance(id_, int | str) and not isinstance(id_, bool) else None


def _error(writer: StdoutWriter, id_: int | str | None, code: int, message: str) -> None:
    writer.write(encode({"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}))
