"""A hover that comes while a document's first analysis runs is answered as soon as its
nest is described, and that nest is described first: not after every nest and the lint."""

from __future__ import annotations

from pathlib import Path

from lsp_wire import Server

# Strided nests (a floor in every trip count) are the slow ones to place; the last is not.
STRIDED = "\n".join(
    f"""void strided{s}(int n, double *restrict a, const double *restrict b)
{{
    for (int i = 1; i < n - 1; i += {s})
        a[i] = b[i] / {s}.0 + b[i - 1];
}}
"""
    for s in (3, 5)
)
DAXPY = """
void daxpy(int n, double a, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}
"""


def test_a_hover_during_the_first_analysis_does_not_wait_for_the_others(tmp_path: Path) -> None:
    (tmp_path / "aiscan.toml").write_text('devices = ["epyc-9654", "h100-sxm"]\n')
    text = STRIDED + DAXPY
    line = text.splitlines().index("    for (int i = 0; i < n; i++)")
    server = Server(tmp_path)
    try:
        server.initialize(tmp_path, {"timeLimit": 120})  # a loaded machine's pace
        uri = (tmp_path / "kernels.c").as_uri()
        server.open(uri, text)
        position = {"line": line, "character": 4}
        server.request(
            1, "textDocument/hover", {"textDocument": {"uri": uri}, "position": position}
        )
        hover = server.response(1, timeout_s=120)["result"]["contents"]["value"]
        assert "FLOPs: `2*n` (add n, mul n)" in hover
        assert "**Roofline**" in hover and "epyc-9654" in hover and "h100-sxm" in hover
        assert not server.published(uri)  # the other nests and the lint were still to come
        diagnostics = server.diagnostics(uri, timeout_s=120)
        assert all(d["severity"] != 1 for d in diagnostics)  # findings, not an error
        # Once the analysis is over, every nest answers from it.
        server.request(2, "textDocument/codeLens", {"textDocument": {"uri": uri}})
        assert len(server.response(2)["result"]) == 3
    finally:
        server.close()
    assert "Traceback" not in server.errors()
