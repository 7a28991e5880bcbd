"""The server's frame reader on byte streams split anywhere, with bad headers among good
frames: good frames come out whole and in order, a bad header yields one `Malformed`
carrying the JSON body after it, and the stream is back in step at the next header."""

from __future__ import annotations

import json

import pytest

from aiscan.lsp.framing import MAX_BODY_BYTES, Body, FrameReader, Malformed, encode

FIRST = {"jsonrpc": "2.0", "id": 1, "method": "a", "params": {"text": "é\n{}"}}
SECOND = {"jsonrpc": "2.0", "method": "b"}


def _frames(*chunks: bytes) -> list[Body | Malformed]:
    reader = FrameReader()
    return [frame for chunk in chunks for frame in reader.feed(chunk)]


def _header(value: str) -> bytes:
    return f"Content-Length: {value}\r\n\r\n".encode()


def test_frames_split_at_every_byte_come_out_whole() -> None:
    stream = encode(FIRST) + b"Content-Type: application/vscode-jsonrpc\r\n" + encode(SECOND)
    frames = _frames(*(stream[i : i + 1] for i in range(len(stream))))
    assert [json.loads(f.data) for f in frames if isinstance(f, Body)] == [FIRST, SECOND]
    assert len(frames) == 2


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("99999999999999", "Content-Length '99999999999999' is outside 1 to 67108864 bytes"),
        (str(MAX_BODY_BYTES + 1), "Content-Length '67108865' is outside 1 to 67108864 bytes"),
        ("9" * 5000, "Content-Length '99999999999999999999...' is outside 1 to 67108864 bytes"),
        ("0", "Content-Length '0' is outside 1 to 67108864 bytes"),
        ("-5", "Content-Length '-5' is not a byte count"),
        ("12abc", "Content-Length '12abc' is not a byte count"),
        ("", "Content-Length '' is not a byte count"),
    ],
)
def test_a_bad_length_is_malformed_with_its_body_and_the_next_frame_is_read(
    value: str, reason: str
) -> None:
    body = json.dumps(FIRST).encode()
    frames = _frames(_header(value) + body[:10], body[10:] + encode(SECOND))
    assert frames == [Malformed(reason, body), Body(json.dumps(SECOND).encode())]


def test_no_length_at_all() -> None:
    frames = _frames(b"Content-Type: x\r\n\r\n" + json.dumps(SECOND).encode() + encode(FIRST))
    assert frames[0] == Malformed("no Content-Length header", json.dumps(SECOND).encode())
    assert frames[1] == Body(json.dumps(FIRST).encode())


def test_garbage_after_a_bad_header_is_skipped_to_the_next_header() -> None:
    reader = FrameReader()
    assert reader.feed(_header("-1") + b"not json") == []  # perhaps more is coming
    frames = reader.feed(encode(SECOND))
    assert frames == [
        Malformed("Content-Length '-1' is not a byte count", b""),
        Body(json.dumps(SECOND).encode()),
    ]


def test_an_endless_header_is_dropped() -> None:
    frames = _frames(b"X" * 9000, encode(SECOND))
    assert frames == [
        Malformed("a header block over 8 KiB", b""),
        Body(json.dumps(SECOND).encode()),
    ]
