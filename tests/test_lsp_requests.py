"""Every language-server request answers on a file mixing resolved and unresolved nests;
devices named twice show once; edits are debounced; diagnostics link to the rule's page."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from aiscan.lint.checker import DEFAULT_HELP_URL
from aiscan.lsp.hover import LENS_MAX_CHARS, expression_text

# With `sizes = { n = 1000 }` the first nest resolves to numbers; the second still has `m`.
MIXED = """\
void mixed(int n, int m, double a, const double *restrict x, double *restrict y,
           double *restrict z)
{
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            z[i] += x[i] * y[j];
}
"""


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "aiscan", "lsp"]),
)
async def client(lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    # `h100` is an alias of h100-sxm: named in the configuration and by the client, it is one device
    (tmp_path / "aiscan.toml").write_text('devices = ["h100-sxm"]\nsizes = { n = 1000 }\n')
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
            initialization_options={"devices": ["h100"]},
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


async def _hover(client: LanguageClient, uri: str, line: int) -> str:
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=8),
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


@pytest.mark.asyncio
async def test_every_request_answers_on_mixed_nests(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "mixed.c").as_uri()
    await _open(client, uri, MIXED)

    resolved = await _hover(client, uri, 3)
    assert "AI, compulsory: `1/12` F/B" in resolved
    assert resolved.count("h100-sxm fp64: ridge") == 1  # one device, named twice

    unresolved = await _hover(client, uri, 5)
    assert "`250*m/(m + 3000)` at the configured sizes (m not set)" in unresolved
    assert "→ `∞` as sizes grow" in unresolved and "`oo`" not in unresolved

    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert lenses is not None
    assert [lens.range.start.line for lens in lenses] == [3, 5]
    for lens in lenses:
        assert lens.command is not None and lens.command.command == "aiscan.showNest"
        assert len(lens.command.title) <= LENS_MAX_CHARS
    assert lenses[0].command is not None
    assert lenses[0].command.title == "aiscan: AI 1/12 ≈ 0.0833 F/B · 2*n FLOPs · 24*n B"
    assert lenses[1].command is not None
    assert "(needs m)" in lenses[1].command.title

    shown = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=lenses[1].command.command, arguments=list(lenses[1].command.arguments or [])
        )
    )
    assert isinstance(shown, str) and "(m not set)" in shown

    diagnostics = client.diagnostics[uri]
    assert diagnostics
    for diagnostic in diagnostics:
        assert diagnostic.code_description is not None
        code = str(diagnostic.code)
        assert diagnostic.code_description.href.startswith(
            DEFAULT_HELP_URL.split("#")[0] + f"#{code.lower()}-"
        )


@pytest.mark.asyncio
async def test_a_burst_of_edits_is_one_analysis_of_the_latest_text(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = (tmp_path / "burst.c").as_uri()
    await _open(client, uri, MIXED)
    before = _analyses(await client.protocol.send_request_async("aiscan/stats", {}))
    last = MIXED.replace("a * x[i] + y[i]", "a * x[i] / y[i]")  # adds an AIS006
    for version, text in enumerate([MIXED + "\n", MIXED + "\n\n", MIXED, last], start=2):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
    published = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert published.version == 5
    assert "AIS006" in {d.code for d in published.diagnostics}
    await asyncio.sleep(1.0)  # nothing else is analyzed or published afterwards
    after = _analyses(await client.protocol.send_request_async("aiscan/stats", {}))
    assert after - before == 1


def _analyses(stats: Any) -> int:
    """`aiscan/stats`'s count, whichever way the client library decoded the object."""
    value = stats["analyses"] if isinstance(stats, dict) else stats.analyses
    return int(value)


def test_expression_text_prints_infinity() -> None:
    import sympy

    assert expression_text(sympy.oo) == "∞"
    assert expression_text(-sympy.oo) == "-∞"
    assert expression_text(sympy.Symbol("zoom") + 1) == "zoom + 1"


def test_hover_and_lens_of_every_nest_without_the_server(tmp_path: Path) -> None:
    from aiscan.lsp.document import analyze_document, settings_for
    from aiscan.lsp.hover import hover_markdown, lens_title

    (tmp_path / "aiscan.toml").write_text('devices = ["h100-sxm", "h100"]\nsizes = { n = 1000 }\n')
    path = str(tmp_path / "mixed.c")
    settings = settings_for(path, ("h100-sxm",))
    assert [d.key for d in settings.devices] == ["h100-sxm"]
    result = analyze_document(MIXED, path, settings)
    assert result.analysis is not None
    regions = [r for f in result.analysis.functions for r in f.regions]
    assert len(regions) == 2
    for region in regions:
        assert lens_title(region, False).startswith("aiscan: AI ")
        assert "**aiscan: loop nest" in hover_markdown(
            region, settings.devices, result.analysis.sizes, False
        )
