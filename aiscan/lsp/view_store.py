"""The editor's finished views kept on disk, so that a document opened again shows at once.

What the editor shows of a document (its diagnostics, each nest's hover text and lens
title) follows from its text, its settings and aiscan's own code. A class of model code
that builds on others takes a second and more to lower, count and place the first time a
process meets it, and a new server meets every file for the first time. So each view
the server finishes of a text as it is saved (the document opened, or saved), with
nothing cut short by the time limit, is kept here; when a document is opened (or edited
back) to a text that has one, the server publishes it at once, and the analysis runs as
before behind it: its child process keeps what the next edit reuses, and its view, the
same, replaces the kept one.

The entries are `ResultCache`'s: JSON written atomically, keyed on aiscan's code, the
settings, the file's place and the text's digest; a header the analysis read that has
changed since makes the entry a miss. They are read back field by field, never unpickled:
an entry of any other shape is a miss.

Where: `AISCAN_CACHE_DIR`, as for the command line, else the user's cache directory
(`$XDG_CACHE_HOME/aiscan`, `~/.cache/aiscan`; `%LOCALAPPDATA%\\aiscan` on Windows), never
a project's configured `cache-dir`: a tree opened in the editor may be untrusted, and its
configuration must not point the server at entries the tree holds. `AISCAN_NO_CACHE`
turns it off.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from aiscan.cache import ResultCache, fingerprint
from aiscan.errors import Diagnostic, Severity
from aiscan.lint.finding import Finding
from aiscan.lsp.view import DocumentView, NestView
from aiscan.sources import FileRefused, content_digest, read_regular_file
from aiscan.span import Span

if TYPE_CHECKING:
    from aiscan.lsp.document import ServerSettings

__all__ = ["KIND", "ViewStore", "editor_store", "view_from_json", "view_json"]

KIND = "editor-view"
"""The result cache's kind for a document's view."""

_Item = TypeVar("_Item")


class ViewStore:
    """Views by (settings, place, text) in a result cache."""

    def __init__(self, cache: ResultCache) -> None:
        self.cache = cache

    def key(self, text: str, path: str, settings: ServerSettings) -> str | None:
        """Where the view of `text` at `path` under `settings` is kept."""
        # The settings' hash is a tenth of a millisecond: no memo to keep in step.
        return self.cache.key(KIND, fingerprint(repr(settings)), path, _digest(text))

    def get(self, key: str | None) -> DocumentView | None:
        """The view kept under `key`; None where there is none, or it is not a view."""
        payload = self.cache.get(key)
        return None if payload is None else view_from_json(payload.get("view"))

    def put(self, key: str | None, view: DocumentView, text: str, path: str) -> None:
        """Keep `view` of `text` where it is whole and `text` is the file as saved: the
        text a document is opened with again (an entry for every edit would fill the
        disk with texts that never come back)."""
        if key is None or not view.complete or not _is_saved(text, path):
            return
        self.cache.put(key, {"view": view_json(view)}, view.dependencies)


@lru_cache(maxsize=1)
def editor_store() -> ViewStore | None:
    """The store the editor's server and its children use; None when turned off."""
    if os.environ.get("AISCAN_NO_CACHE"):
        return None
    configured = os.environ.get("AISCAN_CACHE_DIR")
    return ViewStore(ResultCache(Path(configured) if configured else _user_cache()))


def _user_cache() -> Path:
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "aiscan"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "aiscan"


def _digest(text: str) -> str:
    return content_digest(_bytes(text))


def _bytes(text: str) -> bytes:
    # An editor's text may hold lone surrogates (JSON allows them); they hash as they are.
    return text.encode("utf-8", "surrogatepass")


def _is_saved(text: str, path: str) -> bool:
    """Whether the file holds `text`'s bytes (its size first: an edit's text seldom has
    the file's, and then the file is not read)."""
    data = _bytes(text)
    try:
        return os.path.getsize(path) == len(data) and read_regular_file(path) == data
    except (OSError, FileRefused):
        return False


def view_json(view: DocumentView) -> dict[str, Any]:
    """`view` as JSON-able lists (`view_from_json` reads it back)."""
    return {
        "findings": [
            [f.code, f.name, f.severity.value, _span_json(f.span), f.message, f.details]
            for f in view.findings
        ],
        "errors": [[d.severity.value, _span_json(d.span), d.message] for d in view.errors],
        "nests": [[_span_json(n.span), n.hover, n.lens] for n in view.nests],
    }


def view_from_json(value: Any) -> DocumentView | None:
    """The view `view_json` wrote; None for anything else (whoever wrote it)."""
    if not isinstance(value, dict) or value.keys() != {"findings", "errors", "nests"}:
        return None
    try:
        findings = _each(value["findings"], _finding)
        errors = _each(value["errors"], _diagnostic)
        nests = _each(value["nests"], _nest)
    except (TypeError, ValueError):
        return None
    return DocumentView(findings, errors, nests)


def _each(value: Any, read: Callable[[Any], _Item]) -> tuple[_Item, ...]:
    if not isinstance(value, list):
        raise TypeError("not a list")
    return tuple(read(item) for item in value)


def _span_json(span: Span) -> list[Any]:
    return [span.file, span.line, span.column, span.end_line, span.end_column]


def _span(value: Any) -> Span:
    file, *numbers = _fields(value, (str, int, int, int, int))
    if any(number < 0 for number in numbers):
        raise ValueError("a negative position")
    return Span(file, *numbers)


def _finding(value: Any) -> Finding:
    code, name, severity, span, message, details = _fields(value, (str, str, str, list, str, list))
    pairs = tuple(_pair(item) for item in details)
    return Finding(code, name, Severity(severity), _span(span), message, pairs)


def _pair(value: Any) -> tuple[str, str]:
    label, text = _fields(value, (str, str))
    return label, text


def _diagnostic(value: Any) -> Diagnostic:
    severity, span, message = _fields(value, (str, list, str))
    return Diagnostic(_span(span), Severity(severity), message)


def _nest(value: Any) -> NestView:
    span, hover, lens = _fields(value, (list, str, str))
    return NestView(_span(span), hover, lens)


def _fields(value: Any, types: tuple[type, ...]) -> list[Any]:
    """`value`, a list of one value of each of `types` in turn (no bool for an int)."""
    if not isinstance(value, list) or len(value) != len(types):
        raise TypeError("not a record of its fields")
    for item, kind in zip(value, types, strict=True):
        if not isinstance(item, kind) or (kind is int and isinstance(item, bool)):
            raise TypeError(f"not a {kind.__name__}")
    return value
