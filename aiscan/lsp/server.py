"""`aiscan lsp`: diagnostics, hover and code lenses for C and Python kernels over stdio.

Every open or changed document is analyzed in full (files are kernels, small); the
result is kept per URI for hover and code lens. Positions are converted between LSP's
0-based lines/characters and aiscan's 1-based spans here, and only here.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from aiscan import __version__
from aiscan.errors import Diagnostic, Severity
from aiscan.lint.finding import Finding
from aiscan.lsp.document import DocumentAnalysis, ServerSettings, analyze_document, settings_for
from aiscan.lsp.hover import hover_markdown, lens_title
from aiscan.sources import language_of
from aiscan.span import Span

__all__ = ["build_server", "serve"]

_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}


class AiscanServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("aiscan", __version__)
        self.results: dict[str, DocumentAnalysis] = {}
        self.settings: dict[str, ServerSettings] = {}
        self.extra_devices: tuple[str, ...] = ()


def build_server() -> AiscanServer:
    server = AiscanServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: AiscanServer, params: types.InitializeParams) -> None:
        options: Any = params.initialization_options or {}
        devices = options.get("devices", []) if isinstance(options, dict) else []
        ls.extra_devices = tuple(str(d) for d in devices if isinstance(d, str))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AiscanServer, params: types.DidOpenTextDocumentParams) -> None:
        _refresh(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AiscanServer, params: types.DidChangeTextDocumentParams) -> None:
        _refresh(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AiscanServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.settings.pop(params.text_document.uri, None)  # the configuration may have changed
        _refresh(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AiscanServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.results.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: AiscanServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        result = ls.results.get(uri)
        if result is None or result.analysis is None:
            return None
        region = result.nest_at(params.position.line + 1)
        if region is None:
            return None
        settings = ls.settings[uri]
        text = hover_markdown(
            region, settings.devices, result.analysis.sizes, result.analysis.write_allocate
        )
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
            range=_range(region.region.span),
        )

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: AiscanServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        result = ls.results.get(params.text_document.uri)
        if result is None or result.analysis is None:
            return []
        lenses = []
        for function in result.analysis.functions:
            for region in function.regions:
                if region.region.kind != "nest":
                    continue
                start = _position(region.region.span.line, 1)
                lenses.append(
                    types.CodeLens(
                        range=types.Range(start, start),
                        command=types.Command(
                            lens_title(region, result.analysis.write_allocate), ""
                        ),
                    )
                )
        return lenses

    return server


def serve() -> None:
    build_server().start_io()


def _refresh(ls: AiscanServer, uri: str) -> None:
    document = ls.workspace.get_text_document(uri)
    path = to_fs_path(uri) or uri
    if language_of(path) is None:
        return
    settings = ls.settings.get(uri)
    if settings is None:
        settings = ls.settings[uri] = settings_for(path, ls.extra_devices)
    result = analyze_document(document.source, path, settings)
    ls.results[uri] = result
    diagnostics = [_finding_diagnostic(f) for f in result.findings]
    diagnostics += [_error_diagnostic(d) for d in result.errors]
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=document.version)
    )


def _finding_diagnostic(finding: Finding) -> types.Diagnostic:
    details = "\n".join(f"{label}: {value}" for label, value in finding.details)
    return types.Diagnostic(
        range=_range(finding.span),
        message=finding.message + (f"\n{details}" if details else ""),
        severity=_SEVERITIES[finding.severity],
        code=finding.code,
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
