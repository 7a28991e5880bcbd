"""The protocol promise between diagnostics and requests: once the client has a document's
diagnostics for version V, every request answers from V. The server runs in this process
(its analysis in a real child), so the moment of each publication can be looked at."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pygls.workspace import Workspace

from aiscan.lsp import server as server_module

DAXPY = """\
void daxpy(int n, double a, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] / y[i];
}
"""
BROKEN = DAXPY.replace("a * x[i] / y[i];", "a * x[i] / ;")


def test_diagnostics_go_out_only_once_their_version_answers_requests(tmp_path: Path) -> None:
    """What a code lens or hover would answer from (`views`) at the moment each version's
    diagnostics are sent. A previous version's view there is the bug a code lens showed
    right after a broken edit's diagnostics: the lenses of the text before it."""
    (tmp_path / "aiscan.toml").write_text('devices = ["h100-sxm"]\n')
    uri = (tmp_path / "daxpy.c").as_uri()
    ls = server_module.build_server()
    # What pygls's initialize handler makes; the test drives the document handlers itself.
    ls.protocol._workspace = Workspace(tmp_path.as_uri())
    seen: list[tuple[int | None, list[str], tuple[int, ...] | None]] = []

    def publish(params: types.PublishDiagnosticsParams) -> None:
        stored = ls.views.get(params.uri)
        nests = tuple(n.span.line for n in stored.nests) if stored is not None else None
        messages = [d.message for d in params.diagnostics]
        seen.append((params.version, messages, nests))

    ls.text_document_publish_diagnostics = publish  # type: ignore[method-assign]

    async def edit(version: int, text: str) -> None:
        document = types.TextDocumentItem(uri=uri, language_id="c", version=version, text=text)
        ls.workspace.put_text_document(document)
        server_module._schedule(ls, uri, 0.0)
        await ls.pending[uri]

    async def session() -> None:
        await edit(1, DAXPY)
        await edit(2, BROKEN)
        await edit(3, DAXPY)

    try:
        asyncio.run(session())
    finally:
        ls.pool.close()
    versions = [version for version, _, _ in seen]
    assert versions == [1, 2, 3]
    (daxpy, broken, fixed) = seen
    assert daxpy[2] == (3,) and fixed[2] == (3,)  # the loop on line 3 has its lens
    assert any("ridge 10.15 F/B" in message for message in daxpy[1])
    (error,) = broken[1]
    assert "syntax error" in error
    assert broken[2] == ()  # no lens from the text before the broken edit
