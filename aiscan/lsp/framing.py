"""LSP's framed messages read from a byte stream that may be hostile.

Each JSON body follows a header block (`Content-Length: N`, perhaps other headers, a blank
line). pygls trusts the length it reads: a huge one asks for that much memory at once, and
one it cannot read (`-5`) leaves it out of step with the stream for good. Here a length
that is missing, not a number, zero or over `MAX_BODY_BYTES` makes the frame `Malformed`:
the body after it is taken to be one JSON value, read to where that value ends, so the
stream is back in step at the next header and a request in that body can still get its
error response.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["MAX_BODY_BYTES", "Body", "FrameReader", "Malformed", "encode"]

MAX_BODY_BYTES = 64 * 2**20
"""No editor sends a larger message to a kernel analyzer; a larger length is malformed."""
_MAX_HEADER_BYTES = 8192
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_NEXT_HEADER = re.compile(rb"content-length\s*:", re.IGNORECASE)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Body:
    """A well-framed message body (not yet parsed)."""

    data: bytes


@dataclass(frozen=True)
class Malformed:
    """A header block that does not frame a body; `body` is the JSON value read after it
    (empty when none could be read), so its request can be answered with an error."""

    reason: str
    body: bytes


def encode(message: object) -> bytes:
    """`message` as JSON with its header, as the server writes it."""
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class FrameReader:
    """Bytes in (`feed`), frames out, in order; incomplete input waits for more bytes."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._length: int | None = None
        """The body length of the header block just read, when it was valid."""
        self._malformed: str | None = None
        """Why the header block just read frames no body: the body is read as JSON."""

    def feed(self, data: bytes) -> list[Body | Malformed]:
        self._buffer += data
        frames: list[Body | Malformed] = []
        while (frame := self._next()) is not None:
            frames.append(frame)
        return frames

    def _next(self) -> Body | Malformed | None:
        if self._length is not None:
            if len(self._buffer) < self._length:
                return None
            body = bytes(self._buffer[: self._length])
            del self._buffer[: self._length]
            self._length = None
            return Body(body)
        if self._malformed is not None:
            return self._orphan_body(self._malformed)
        return self._header()

    def _header(self) -> Body | Malformed | None:
        end = _HEADER_END.search(self._buffer)
        if end is None:
            if len(self._buffer) <= _MAX_HEADER_BYTES:
                return None
            return self._skip_to_next_header("a header block over 8 KiB")
        block = bytes(self._buffer[: end.start()])
        del self._buffer[: end.end()]
        lengths = [
            value.strip()
            for name, _, value in (line.partition(b":") for line in block.splitlines())
            if name.strip().lower() == b"content-length"
        ]
        if len(lengths) != 1:
            self._malformed = "no Content-Length header" if not lengths else "two Content-Lengths"
        elif not lengths[0].isdigit():
            self._malformed = f"Content-Length {_shown(lengths[0])} is not a byte count"
        elif len(lengths[0]) > 12 or not 0 < int(lengths[0]) <= MAX_BODY_BYTES:
            self._malformed = (
                f"Content-Length {_shown(lengths[0])} is outside 1 to {MAX_BODY_BYTES} bytes"
            )
        else:
            self._length = int(lengths[0])
        return self._next()

    def _orphan_body(self, reason: str) -> Malformed | None:
        """After a bad header: one JSON value as the body, or, when none can be read, the
        bytes up to the next header (dropped)."""
        text = self._buffer.decode("utf-8", errors="surrogateescape")
        start = len(text) - len(text.lstrip())
        try:
            _, end = _DECODER.raw_decode(text, start)
        except ValueError:
            following = _NEXT_HEADER.search(self._buffer)
            if following is None and len(self._buffer) <= MAX_BODY_BYTES:
                return None  # perhaps an incomplete value: wait for more bytes
            return self._skip_to_next_header(reason, following.start() if following else None)
        size = len(text[:end].encode("utf-8", errors="surrogateescape"))
        body = bytes(self._buffer[:size])
        del self._buffer[:size]
        self._malformed = None
        return Malformed(reason, body)

    def _skip_to_next_header(self, reason: str, at: int | None = None) -> Malformed:
        if at is None:
            following = _NEXT_HEADER.search(self._buffer, 1)
            at = following.start() if following else len(self._buffer)
        del self._buffer[:at]
        self._malformed = None
        return Malformed(reason, b"")


def _shown(value: bytes) -> str:
    text = value.decode("utf-8", errors="replace")
    return repr(text if len(text) <= 20 else text[:20] + "...")
