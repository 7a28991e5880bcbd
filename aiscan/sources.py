"""Reading a source file safely: size limit, binary detection, UTF-8, one located diagnostic."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from aiscan.errors import Diagnostic, InputError, Severity
from aiscan.span import Span

__all__ = [
    "LANGUAGES",
    "MAX_SOURCE_BYTES",
    "SourceFile",
    "content_digest",
    "language_of",
    "read_source",
    "read_source_file",
]

MAX_SOURCE_BYTES = 10 * 1024 * 1024
LANGUAGES = {
    ".c": "c",
    ".h": "c",
    ".py": "python",
    ".pyi": "python",
    ".cu": "cuda",
    ".cuh": "cuda",
}


def language_of(path: str) -> str | None:
    return LANGUAGES.get(Path(path).suffix.lower())


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A source's text and the digest of the very bytes it was decoded from."""

    text: str
    digest: str
    """`content_digest` of the bytes read: a cached result of `text` is keyed on it, so a
    file edited while it is analyzed is never cached under the other text."""


def content_digest(data: bytes) -> str:
    """The hash a result cache compares a file's bytes by."""
    return hashlib.sha256(data).hexdigest()


def read_source(path: str) -> str:
    """The text of `path`, or an `InputError` saying in one line why it cannot be analyzed."""
    return read_source_file(path).text


def read_source_file(path: str) -> SourceFile:
    """`read_source` with the digest of the bytes it read."""

    def fail(message: str, line: int = 1, column: int = 1) -> InputError:
        return InputError(Diagnostic(Span(path, line, column), Severity.ERROR, message))

    file = Path(path)
    try:
        size = file.stat().st_size
        if file.is_dir():
            try:
                os.listdir(file)
            except OSError as error:
                raise fail(f"cannot read directory: {error.strerror or error}") from None
            raise fail("is a directory")
        if not file.is_file():
            raise fail("not a regular file")
        if size > MAX_SOURCE_BYTES:
            raise fail(
                f"file is {size / 1e6:.1f} MB, over the {MAX_SOURCE_BYTES // (1024 * 1024)} MiB "
                "limit for one source file"
            )
        data = file.read_bytes()
    except FileNotFoundError:
        raise fail("no such file") from None
    except IsADirectoryError:
        raise fail("is a directory") from None
    except OSError as error:
        raise fail(f"cannot read: {error.strerror or error}") from None
    if b"\0" in data[:8192] or b"\0" in data:
        raise fail("binary file (contains NUL bytes), not source code")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise fail(f"not valid UTF-8 (byte 0x{data[error.start]:02x})", line, column) from None
    return SourceFile(text.removeprefix("\ufeff"), content_digest(data))
