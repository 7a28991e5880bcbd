"""`aiscan lsp`: diagnostics, hover and code lenses for C and Python kernels over stdio.

Every open or changed document is analyzed in full (files are kernels, small); what the
editor shows of it (diagnostics, each nest's hover text and lens title) is kept per URI.
Edits are debounced: a burst of changes schedules one analysis of the latest text,
`DEBOUNCE_S` after the last change; a newer change cancels the scheduled one and kills a
running one. Analyses run in child processes under a time limit per edit (`worker`), so
hover and code lens keep answering from the last good analysis while a new one runs, and
one slow document never holds up another. A document's first analysis sends each nest as
it is described: a hover that comes before the analysis is over is answered as soon as
its nest is, and the child describes that nest next (`Demand`). Diagnostics are
published in the step that stores their analysis's view: a client that has a version's
diagnostics gets every answer from that version. Positions are converted between LSP's
0-based lines/characters and aiscan's 1-based spans here, and only here.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import PurePath
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from aiscan import __version__
from aiscan.cache import code_identity
from aiscan.errors import Diagnostic, Severity
from aiscan.lint.checker import DEFAULT_HELP_URL, help_url
from aiscan.lint.finding import Finding
from aiscan.lsp.document import EDIT_TIME_LIMIT_S, ServerSettings, settings_for
from aiscan.lsp.stdio import serve_stdio, warm_messages
from aiscan.lsp.view import DocumentView, NestView, failed_view
from aiscan.lsp.view_store import editor_store
from aiscan.lsp.worker import AnalysisPool, Demand
from aiscan.roofline.devices import load_devices
from aiscan.sources import LANGUAGES, language_of
from aiscan.span import Span

__all__ = ["DEBOUNCE_S", "NEST_COMMAND", "build_server", "serve"]

DEBOUNCE_S = 0.3
"""Quiet time after the last edit before the document is analyzed again."""
MAX_TIME_LIMIT_S = 600.0
"""The largest time limit per edit a client may ask for (`timeLimit`)."""
NEST_COMMAND = "aiscan.showNest"
"""The code lens's command: shows the nest's hover text (arguments: uri, 0-based line)."""

_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}


class _Progress:
    """The nests an analysis has described so far, for hovers that come before its end."""

    def __init__(self) -> None:
        self.nests: list[NestView] = []
        self.demand = Demand()
        self._arrival: asyncio.Future[None] | None = None

    def add(self, nest: NestView) -> None:
        self.nests.append(nest)
        if self._arrival is not None and not self._arrival.done():
            self._arrival.set_result(None)

    def nest_at(self, line: int) -> NestView | None:
        return next((n for n in self.nests if n.span.line <= line <= n.span.end_line), None)

    def next_arrival(self) -> asyncio.Future[None]:
        """Done when the next nest comes."""
        if self._arrival is None or self._arrival.done():
            self._arrival = asyncio.get_running_loop().create_future()
        return self._arrival


class AiscanServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("aiscan", __version__)
        self.views: dict[str, DocumentView] = {}
        """The last finished analysis: hover and lenses answer from it while a new one runs."""
        self.settings: dict[str, ServerSettings] = {}
        self.extra_devices: tuple[str, ...] = ()
        self.time_limit_s = EDIT_TIME_LIMIT_S
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.described: dict[str, _Progress] = {}
        """The analysis under way of each document, as `pending` has it."""
        self.analyses = 0
        """Analyses run so far (the debounce test reads it through `aiscan/stats`)."""
        self.pool = AnalysisPool()
        self.ignored: set[str] = set()
        """Documents already logged as not read (by their extension): one line each."""
        self.store = editor_store()
        self.kept_views = 0
        """Views published from the store (`aiscan/stats`)."""
        self.confirmed_views = 0
        """Of those, the ones their analysis then gave again, the same."""

    def shutdown(self) -> None:
        self.pool.close()
        super().shutdown()  # type: ignore[no-untyped-call]


def build_server() -> AiscanServer:
    server = AiscanServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: AiscanServer, params: types.InitializeParams) -> None:
        options: Any = params.initialization_options or {}
        if not isinstance(options, dict):
            return
        devices = options.get("devices")
        if isinstance(devices, list):
            ls.extra_devices = tuple(d for d in devices if isinstance(d, str))
        limit = options.get("timeLimit")
        if isinstance(limit, int | float) and 0 < limit <= MAX_TIME_LIMIT_S:
            ls.time_limit_s = float(limit)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: AiscanServer, params: types.InitializedParams) -> None:
        read = asyncio.get_running_loop().run_in_executor(None, _read_ahead)
        warm_messages(ls)  # here, on the loop: the converters are the loop's
        await ls.pool.warm()
        await read

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AiscanServer, params: types.DidOpenTextDocumentParams) -> None:
        _schedule(ls, params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AiscanServer, params: types.DidChangeTextDocumentParams) -> None:
        _schedule(ls, params.text_document.uri, DEBOUNCE_S)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AiscanServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.settings.pop(params.text_document.uri, None)  # the configuration may have changed
        _schedule(ls, params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AiscanServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        stale = ls.pending.pop(uri, None)
        if stale is not None:
            stale.cancel()
        ls.described.pop(uri, None)
        ls.views.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: AiscanServer, params: types.HoverParams) -> types.Hover | None:
        nest = await _nest(ls, params.text_document.uri, params.position.line + 1)
        if nest is None:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=nest.hover),
            range=_range(nest.span),
        )

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lens(ls: AiscanServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        view = await _view(ls, params.text_document.uri)
        lenses = []
        for nest in view.nests if view is not None else ():
            start = _position(nest.span.line, 1)
            arguments = [params.text_document.uri, start.line]
            lenses.append(
                types.CodeLens(
                    range=types.Range(start, start),
                    command=types.Command(nest.lens, NEST_COMMAND, arguments=arguments),
                )
            )
        return lenses

    @server.command(NEST_COMMAND)
    def show_nest(ls: AiscanServer, uri: str, line: int) -> str | None:
        """The lens's action: the nest's hover text, shown as a message and returned."""
        view = ls.views.get(str(uri))
        if view is None or not isinstance(line, int):
            return None
        nest = view.nest_at(line + 1)
        if nest is None:
            return None
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, nest.hover))
        return nest.hover

    @server.feature("aiscan/stats")
    def stats(ls: AiscanServer, params: Any) -> dict[str, int]:
        """How many analyses ran (a test sees that a burst of edits made one), and how
        many views the store gave before their analysis was over."""
        return {
            "analyses": ls.analyses,
            "kept_views": ls.kept_views,
            "confirmed_views": ls.confirmed_views,
        }

    return server


def serve() -> None:
    serve_stdio(build_server())


def _read_ahead() -> None:
    """What opening the first file reads, read before it is opened: the device files
    (all parsed, 7 ms, each kept by `devices`; a document's settings then read only the
    ones it names, already parsed) and the identity of aiscan's code that the key of a
    kept view holds (5 ms)."""
    with contextlib.suppress(Exception):  # the first file then reads them itself
        load_devices()
        if editor_store() is not None:
            code_identity()


async def _view(ls: AiscanServer, uri: str) -> DocumentView | None:
    """The last good analysis; for a document not analyzed yet, the one under way."""
    while uri not in ls.views and (task := ls.pending.get(uri)) is not None:
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if ls.pending.get(uri) is task:
                break  # closed, or this request itself was cancelled
        if ls.pending.get(uri) is task:
            break
    return ls.views.get(uri)


async def _nest(ls: AiscanServer, uri: str, line: int) -> NestView | None:
    """The nest at `line` in the last good analysis; for a document not analyzed yet, in
    the one under way, as soon as that nest is described (it is asked for next)."""
    while uri not in ls.views and (task := ls.pending.get(uri)) is not None:
        progress = ls.described.get(uri)
        if progress is None:
            break
        if (nest := progress.nest_at(line)) is not None:
            return nest
        progress.demand.ask(line)
        await asyncio.wait((task, progress.next_arrival()), return_when=asyncio.FIRST_COMPLETED)
        if task.done() and ls.pending.get(uri) is task:
            break  # over without a view (a newer version came in): as `_view` does
    view = await _view(ls, uri)
    return view.nest_at(line) if view is not None else None


def _schedule(ls: AiscanServer, uri: str, delay_s: float) -> None:
    """Analyze `uri` after `delay_s`, replacing (cancelling) any analysis still scheduled."""
    stale = ls.pending.pop(uri, None)
    if stale is not None:
        stale.cancel()
    ls.described[uri] = progress = _Progress()
    ls.pending[uri] = asyncio.get_running_loop().create_task(_refresh(ls, uri, delay_s, progress))


async def _refresh(ls: AiscanServer, uri: str, delay_s: float, progress: _Progress) -> None:
    await asyncio.sleep(delay_s)
    document = ls.workspace.get_text_document(uri)
    path = _path(uri)
    if language_of(path) is None:
        if uri not in ls.ignored:
            ls.ignored.add(uri)
            suffix = PurePath(path).suffix or "no extension"
            ls.window_log_message(
                types.LogMessageParams(
                    types.MessageType.Info,
                    f"aiscan: not analyzing {path}: {suffix} is not a language aiscan reads "
                    f"({', '.join(sorted(LANGUAGES))})",
                )
            )
        return
    version, text = document.version, document.source
    ls.analyses += 1
    settings = ls.settings.get(uri)
    kept = None
    try:
        if settings is None:
            settings = ls.settings[uri] = settings_for(path, ls.extra_devices)
        store = ls.store
        key = store.key(text, path, settings) if store is not None else None
        if store is not None and (kept := store.get(key)) is not None:
            ls.kept_views += 1
            _publish(ls, uri, version, kept, settings)  # the analysis runs behind it
        view = await ls.pool.view(
            text, path, settings, ls.time_limit_s, progress.add, progress.demand, key
        )
    except Exception as error:  # whatever failed, the document gets its diagnostic
        view = failed_view(path, f"aiscan could not analyze this text ({error!r})")
    if ls.workspace.get_text_document(uri).version != version:
        return  # a newer edit came in while this ran; its own analysis is scheduled
    ls.pending.pop(uri, None)
    if ls.described.get(uri) is progress:
        del ls.described[uri]
    if kept is not None and view == kept:
        ls.views[uri] = view  # shown already: published again, it would only flicker
        ls.confirmed_views += 1
        return
    _publish(ls, uri, version, view, settings)


def _publish(
    ls: AiscanServer,
    uri: str,
    version: int | None,
    view: DocumentView,
    settings: ServerSettings | None,
) -> None:
    """Store `view` as the document's and publish its diagnostics, in one step of the
    loop: a client that has this version's diagnostics gets every answer from it (a
    request between the two would see the last)."""
    ls.views[uri] = view
    template = settings.help_url if settings is not None else DEFAULT_HELP_URL
    diagnostics = [_finding_diagnostic(f, template) for f in view.findings]
    diagnostics += [_error_diagnostic(d) for d in view.errors]
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
    )


def _path(uri: str) -> str:
    """The document's file path; a NUL, which no path may hold, shown as U+FFFD."""
    return (to_fs_path(uri) or uri).replace("\x00", "\ufffd")


def _finding_diagnostic(finding: Finding, template: str) -> types.Diagnostic:
    details = "\n".join(f"{label}: {value}" for label, value in finding.details)
    return types.Diagnostic(
        range=_range(finding.span),
        message=finding.message + (f"\n{details}" if details else ""),
        severity=_SEVERITIES[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=help_url(template, finding.code, finding.name)),
        source="aiscan",
    )


def _error_diagnostic(diagnostic: Diagnostic) -> types.Diagnostic:
    return types.Diagnostic(
        range=_range(diagnostic.span),
        message=diagnostic.message,
        severity=_SEVERITIES[diagnostic.severity],
        source="aiscan",
    )


def _position(line: int, column: int) -> types.Position:
    """aiscan's 1-based line and column to LSP's 0-based position."""
    return types.Position(line=max(line - 1, 0), character=max(column - 1, 0))


def _range(span: Span) -> types.Range:
    start = _position(span.line, span.column)
    if span.end_line > span.line:
        end = _position(span.end_line, max(span.end_column, 1))
    elif span.end_column > span.column:
        end = _position(span.line, span.end_column)
    else:
        end = types.Position(line=start.line, character=start.character + 1)
    return types.Range(start=start, end=end)
