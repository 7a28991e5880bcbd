"""The language server end to end: pytest-lsp starts `aiscan lsp` and talks to it over stdio."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

DAXPY = """\
#include <stddef.h>

void daxpy(size_t n, double a, const double *restrict x, double *restrict y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a * x[i] / y[i];
}
"""
BROKEN = DAXPY.replace("y[i] = a * x[i] / y[i];", "y[i] = a * x[i] / ;")
FIXED = DAXPY.replace("a * x[i] / y[i]", "a * x[i] + y[i]")


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "aiscan", "lsp"]),
)
async def client(lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "aiscan.toml").write_text('devices = ["h100-sxm"]\n')
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
        )
    )
    yield
    await lsp_client.shutdown_session()


async def _open(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="c", version=1, text=text)
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)


async def _change(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)


@pytest.mark.asyncio
async def test_diagnostics_hover_lens_and_broken_edits(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = (tmp_path / "daxpy.c").as_uri()
    await _open(client, uri, DAXPY)
    codes = {(d.code, d.range.start.line) for d in client.diagnostics[uri]}
    # The loop header is line 5 (0-based 4); the division is on line 6 (0-based 5).
    assert codes == {("AIS001", 4), ("AIS006", 5)}
    memory_bound = next(d for d in client.diagnostics[uri] if d.code == "AIS001")
    assert "ridge 10.15 F/B" in memory_bound.message
    # a placement is information (a note), as in `check`
    assert memory_bound.severity == types.DiagnosticSeverity.Information

    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=4, character=8),
        )
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert "FLOPs: `2*n`" in text
    assert "bytes, compulsory: `24*n`" in text
    assert "AI, compulsory: `1/12` F/B" in text
    assert "h100-sxm fp64: ridge 10.15 F/B, memory-bound" in text

    outside = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=1),
        )
    )
    assert outside is None

    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert lenses is not None and len(lenses) == 1
    assert lenses[0].range.start.line == 4
    assert lenses[0].command is not None
    assert lenses[0].command.title == "aiscan: AI 1/12 ≈ 0.0833 F/B · 2*n FLOPs · 24*n B"

    await _change(client, uri, BROKEN, 2)
    broken = client.diagnostics[uri]
    assert len(broken) == 1
    assert broken[0].severity == types.DiagnosticSeverity.Error
    assert broken[0].range.start.line == 5
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert not lenses

    await _change(client, uri, FIXED, 3)
    assert {(d.code, d.range.start.line) for d in client.diagnostics[uri]} == {("AIS001", 4)}


@pytest.mark.asyncio
async def test_python_file_gets_numpy_findings(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "axpy.py").as_uri()
    source = (
        "import numpy as np\n"
        "from jaxtyping import Float64\n\n\n"
        'def axpy(a: float, x: Float64[np.ndarray, "n"], y: Float64[np.ndarray, "n"]):\n'
        "    return a * x + y\n"
    )
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=source)
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    codes = {(d.code, d.range.start.line) for d in client.diagnostics[uri]}
    assert codes == {("AIS001", 5), ("AIS003", 5)}
    temporaries = next(d for d in client.diagnostics[uri] if d.code == "AIS003")
    assert "40*n bytes instead of 24*n bytes fused" in temporaries.message


def test_settings_take_devices_from_the_client_and_survive_broken_text(tmp_path: Path) -> None:
    from aiscan.lsp.document import analyze_document, settings_for

    path = str(tmp_path / "k.c")
    settings = settings_for(path, ("l4",))
    assert [d.key for d in settings.devices] == ["l4"]
    result = analyze_document("void f(int n) { for (", path, settings)
    assert result.analysis is None and result.findings == ()
    (error,) = result.errors
    assert error.severity.value == "error"


@pytest.mark.asyncio
async def test_a_document_it_does_not_read_is_logged_once(
    client: LanguageClient, tmp_path: Path
) -> None:
    """A `.cpp` copy of a C file gets no diagnostics; the log says why, once."""
    uri = (tmp_path / "daxpy.cpp").as_uri()
    for version in (1, 2):
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="cpp", version=version, text=DAXPY)
            )
        )
    await client.wait_for_notification(types.WINDOW_LOG_MESSAGE)
    await asyncio.sleep(0.5)  # the second open's turn
    logged = [m.message for m in client.log_messages if "not analyzing" in m.message]
    assert logged == [
        f"aiscan: not analyzing {tmp_path / 'daxpy.cpp'}: .cpp is not a language aiscan reads "
        "(.c, .cu, .cuh, .h, .py, .pyi)"
    ]
