"""Reading a source file safely: regular files only, a size limit, binary detection, UTF-8,
one located diagnostic.

Every file aiscan reads on a user's say-so (a source, a header it includes, a cached
dependency, stdin, a device or configuration file) goes through `read_regular_file` or
`read_stream`, so that `/dev/zero`, a FIFO or a sparse 2 GB file is refused instead of read
until memory runs out or waited on forever.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from aiscan.errors import Diagnostic, InputError, Severity
from aiscan.limits import MAX_SOURCE_BYTES
from aiscan.span import Span

__all__ = [
    "LANGUAGES",
    "MAX_SOURCE_BYTES",
    "FileRefused",
    "SourceFile",
    "content_digest",
    "decode_source",
    "language_of",
    "languages_text",
    "read_regular_file",
    "read_source",
    "read_source_file",
    "read_stream",
]

LANGUAGES = {
    ".c": "c",
    ".h": "c",
    ".py": "python",
    ".pyi": "python",
    ".cu": "cuda",
    ".cuh": "cuda",
}

_LANGUAGE_NAMES = {"c": "C", "python": "Python", "cuda": "CUDA"}


def languages_text() -> str:
    """What aiscan reads, for help and errors, from `LANGUAGES` so neither falls behind a
    new frontend: `C (.c, .h), Python (.py, .pyi) or CUDA (.cu, .cuh)`."""
    suffixes: dict[str, list[str]] = {}
    for suffix, language in LANGUAGES.items():
        suffixes.setdefault(language, []).append(suffix)
    named = [f"{_LANGUAGE_NAMES[lang]} ({', '.join(found)})" for lang, found in suffixes.items()]
    return ", ".join(named[:-1]) + " or " + named[-1]


_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


class FileRefused(Exception):
    """A file that is not read: not a regular file, or over the size limit. The message is
    the reason, to follow the file's name."""


def language_of(path: str) -> str | None:
    return LANGUAGES.get(Path(path).suffix.lower())


def read_regular_file(path: str | Path, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes.

    Devices, FIFOs and sockets are refused from `stat`, before any `open` (which would block
    on a FIFO); the file is then opened without blocking and checked again, and never more
    than `limit` bytes are read, should it change in between. Raises `FileRefused`, or
    `OSError` when the file cannot be read at all.
    """
    status = os.stat(path)
    _check_kind(status.st_mode)
    if status.st_size > limit:
        raise FileRefused(_too_large(status.st_size, limit))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "rb") as handle:
        _check_kind(os.fstat(descriptor).st_mode)
        return read_stream(handle, limit)


def read_stream(stream: BinaryIO, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """At most `limit` bytes of `stream` (stdin), or `FileRefused` when it holds more."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"over the {limit // (1024 * 1024)} MiB limit for one source file")
    return data


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
    if os.path.isdir(path):
        try:
            os.listdir(path)
        except OSError as error:  # an unreadable directory in a scan says why
            raise _located(path, f"cannot read directory: {error.strerror or error}") from None
        raise _located(path, "is a directory")
    try:
        data = read_regular_file(path)
    except FileRefused as refused:
        raise _located(path, str(refused)) from None
    except FileNotFoundError:
        raise _located(path, "no such file") from None
    except OSError as error:
        raise _located(path, f"cannot read: {error.strerror or error}") from None
    return SourceFile(decode_source(data, path), content_digest(data))


def decode_source(data: bytes, path: str) -> str:
    """`data` as source text: UTF-8 without NUL bytes, or an `InputError` located at the
    first byte that is not."""
    if b"\0" in data:
        raise _located(path, "binary file (contains NUL bytes), not source code")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise _located(
            path, f"not valid UTF-8 (byte 0x{data[error.start]:02x})", line, column
        ) from None
    return text.removeprefix("\ufeff")


def _check_kind(mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a plain file")
    raise FileRefused(f"not a regular file ({kind})")


def _too_large(size: int, limit: int) -> str:
    return (
        f"file is {size / 1e6:.1f} MB, over the {limit // (1024 * 1024)} MiB "
        "limit for one source file"
    )


def _located(path: str, message: str, line: int = 1, column: int = 1) -> InputError:
    return InputError(Diagnostic(Span(path, line, column), Severity.ERROR, message))
