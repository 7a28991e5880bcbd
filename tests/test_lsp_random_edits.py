"""The language server survives a session of random edits and keeps answering.

A seeded run of opens, incremental and whole-document changes (some with ranges past the
end of the document), closes and re-opens, hovers and code-lens requests at random
positions; afterwards the server still analyzes a valid document correctly.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from aiscan.robustness import mutate

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SEEDS = [
    FIXTURES / "c" / "daxpy.c",
    FIXTURES / "c" / "stencil_cross9.c",
    FIXTURES / "c" / "indirect.c",
    FIXTURES / "python" / "model_rows.py",
    FIXTURES / "python" / "loops.py",
]
OPERATIONS = 120


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "aiscan", "lsp"]),
)
async def client(lsp_client: LanguageClient, tmp_path: Path):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
        )
    )
    yield
    await lsp_client.shutdown_session()


def _random_range(rng: random.Random, text: str) -> types.Range:
    lines = text.count("\n") + 1

    def position() -> types.Position:
        line = rng.randint(0, lines + 3)  # sometimes past the end
        return types.Position(line=line, character=rng.randint(0, 120))

    start, end = sorted((position(), position()), key=lambda p: (p.line, p.character))
    return types.Range(start=start, end=end)


@pytest.mark.asyncio
async def test_random_edit_session(client: LanguageClient, tmp_path: Path) -> None:
    rng = random.Random(20261122)
    documents: dict[str, tuple[str, int, str]] = {}  # uri -> (language, version, text)
    for operation in range(OPERATIONS):
        choice = rng.random()
        if not documents or choice < 0.1:
            seed = rng.choice(SEEDS)
            uri = (tmp_path / f"doc{operation}{seed.suffix}").as_uri()
            language = "c" if seed.suffix == ".c" else "python"
            text = seed.read_text()
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
                )
            )
            documents[uri] = (language, 1, text)
            continue
        uri = rng.choice(sorted(documents))
        language, version, text = documents[uri]
        if choice < 0.55:
            version += 1
            new_text = mutate(text, rng, rng.randint(1, 3))
            if rng.random() < 0.5:
                change: types.TextDocumentContentChangeEvent = (
                    types.TextDocumentContentChangeWholeDocument(text=new_text)
                )
            else:
                change = types.TextDocumentContentChangePartial(
                    range=_random_range(rng, text), text=rng.choice(["", "(", "x[i]", "}\n"])
                )
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[change],
                )
            )
            documents[uri] = (language, version, new_text)
        elif choice < 0.75:
            await client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=_random_range(rng, text).start,
                )
            )
        elif choice < 0.9:
            await client.text_document_code_lens_async(
                types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
        else:
            client.text_document_did_close(
                types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
            )
            del documents[uri]

    # Still answering, and still right: a fresh daxpy gets its code lens.
    uri = (tmp_path / "final.c").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=uri, language_id="c", version=1, text=(FIXTURES / "c" / "daxpy.c").read_text()
            )
        )
    )
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert lenses and lenses[0].command is not None
    assert lenses[0].command.title.startswith("aiscan: AI 1/12")
    assert not [m for m in client.log_messages if m.type == types.MessageType.Error], [
        m.message for m in client.log_messages
    ]
