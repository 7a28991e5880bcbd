"""`aiscan lsp`: diagnostics, hover and code lenses for C and Python kernels over stdio.

Every open or changed document is analyzed in full (files are kernels, small); the
result is kept per URI for hover and code lens. Edits are debounced: a burst of changes
schedules one analysis of the latest text, `DEBOUNCE_S` after the last change; a newer
change cancels the scheduled one and drops a running one's result. Analyses run on one
worker thread, so hover and code lens keep answering from the last good analysis while a
new one runs. Positions are converted between LSP's 0-based lines/characters and aiscan's
1-based spans here, and only here.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from aiscan import __version__
from aiscan.errors import Diagnostic, Severity
from aiscan.lint.checker import help_url
from aiscan.lint.finding import Finding
from aiscan.lsp.document import DocumentAnalysis, ServerSettings, analyze_document, settings_for
from aiscan.lsp.hover import hover_markdown, lens_title
from aiscan.sources import language_of
from aiscan.span import Span

__all__ = ["DEBOUNCE_S", "NEST_COMMAND", "build_server", "serve"]

DEBOUNCE_S = 0.3
"""Quiet time after the last edit before the document is analyzed again."""
NEST_COMMAND = "aiscan.showNest"
"""The code lens's command: shows the nest's hover text (arguments: uri, 0-based line)."""

_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}


class AiscanServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("aiscan", __version__)
        self.results: dict[str, DocumentAnalysis] = {}
        """The last finished analysis: hover and lenses answer from it while a new one runs."""
        self.settings: dict[str, ServerSettings] = {}
        self.extra_devices: tuple[str, ...] = ()
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.analyses = 0
        """Analyses run so far (the debounce test reads it through `aiscan/stats`)."""
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="aiscan-analysis")


def build_server() -> AiscanServer:
    server = AiscanServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: AiscanServer, params: types.InitializeParams) -> None:
        options: Any = params.initialization_options or {}
        devices = options.get("devices", []) if isinstance(options, dict) else []
        ls.extra_devices = tuple(str(d) for d in devices if isinstance(d, str))

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
        ls.results.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: AiscanServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        result = await _result(ls, uri)
        if result is None or result.analysis is None:
            return None
        region = result.nest_at(params.position.line + 1)
        if region is None:
            return None
        text = _nest_text(ls, uri, region, result)
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
            range=_range(region.region.span),
        )

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lens(ls: AiscanServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        result = await _result(ls, params.text_document.uri)
        if result is None or result.analysis is None:
            return []
        lenses = []
        for region in result.nests():
            try:
                title = lens_title(region, result.analysis.write_allocate)
            except Exception as error:  # one nest's failure leaves the other lenses
                title = f"aiscan: no figures for this nest ({type(error).__name__})"
            start = _position(region.region.span.line, 1)
            arguments = [params.text_document.uri, start.line]
            lenses.append(
                types.CodeLens(
                    range=types.Range(start, start),
                    command=types.Command(title, NEST_COMMAND, arguments=arguments),
                )
            )
        return lenses

    @server.command(NEST_COMMAND)
    def show_nest(ls: AiscanServer, uri: str, line: int) -> str | None:
        """The lens's action: the nest's hover text, shown as a message and returned."""
        result = ls.results.get(str(uri))
        if result is None or not isinstance(line, int):
            return None
        region = result.nest_at(line + 1)
        if region is None:
            return None
        text = _nest_text(ls, str(uri), region, result)
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, text))
        return text

    @server.feature("aiscan/stats")
    def stats(ls: AiscanServer, params: Any) -> dict[str, int]:
        """How many analyses ran: lets a test see that a burst of edits made one."""
        return {"analyses": ls.analyses}

    return server


def serve() -> None:
    build_server().start_io()


async def _result(ls: AiscanServer, uri: str) -> DocumentAnalysis | None:
    """The last good analysis; for a document not analyzed yet, the one under way."""
    while uri not in ls.results and (task := ls.pending.get(uri)) is not None:
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if ls.pending.get(uri) is task:
                break  # closed, or this request itself was cancelled
        if ls.pending.get(uri) is task:
            break
    return ls.results.get(uri)


def _nest_text(ls: AiscanServer, uri: str, region: Any, result: DocumentAnalysis) -> str:
    assert result.analysis is not None
    settings = ls.settings[uri]
    try:
        return hover_markdown(
            region, settings.devices, result.analysis.sizes, result.analysis.write_allocate
        )
    except Exception as error:  # this nest's error is this nest's hover text
        span = region.region.span
        return (
            f"**aiscan: loop nest, lines {span.lines()}**\n\n"
            f"aiscan could not describe this nest: {type(error).__name__}: {error}"
        )


def _schedule(ls: AiscanServer, uri: str, delay_s: float) -> None:
    """Analyze `uri` after `delay_s`, replacing (cancelling) any analysis still scheduled."""
    stale = ls.pending.pop(uri, None)
    if stale is not None:
        stale.cancel()
    ls.pending[uri] = asyncio.get_running_loop().create_task(_refresh(ls, uri, delay_s))


async def _refresh(ls: AiscanServer, uri: str, delay_s: float) -> None:
    await asyncio.sleep(delay_s)
    document = ls.workspace.get_text_document(uri)
    path = to_fs_path(uri) or uri
    if language_of(path) is None:
        return
    settings = ls.settings.get(uri)
    if settings is None:
        settings = ls.settings[uri] = settings_for(path, ls.extra_devices)
    version, text = document.version, document.source
    ls.analyses += 1
    loop = asyncio.get_running_loop()
    result = await loop.run_in_executor(ls.worker, analyze_document, text, path, settings)
    if ls.workspace.get_text_document(uri).version != version:
        return  # a newer edit came in while this ran; its own analysis is scheduled
    ls.pending.pop(uri, None)
    ls.results[uri] = result
    diagnostics = [_finding_diagnostic(f, settings.help_url) for f in result.findings]
    diagnostics += [_error_diagnostic(d) for d in result.errors]
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
    )
    # A hover places its nest on every device (a limit and a root solve, up to a tenth of
    # a second a nest); placing them now, on the worker, lets the first hover find them
    # memoized instead of blocking the server while it computes them.
    await loop.run_in_executor(ls.worker, _place_every_nest, ls, uri, result)


def _place_every_nest(ls: AiscanServer, uri: str, result: DocumentAnalysis) -> None:
    for region in result.nests():
        _nest_text(ls, uri, region, result)


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
