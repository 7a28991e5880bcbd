"""How long a slow document holds the language server (a script: timings do not belong in CI).

Generates a C file of `--lines` lines of loop nests whose bounds halve their outer counter
(about a tenth of a second of symbolic sums each, and as much again to place each on the
device), starts `python -m aiscan lsp` (whichever aiscan that imports: set PYTHONPATH to
measure another checkout), opens it, then opens a small daxpy and hovers on it, and prints

1. how long after opening the daxpy its hover answered;
2. how long after opening the large file its diagnostics came, and what they were.

With `--file`, the editor's aims instead, on a file of yours (a fixture): the server started
and given `--warm` seconds (an editor starts it as the first file opens: 0), the file opened
and a hover sent at once on the first line of each loop nest in turn (the nests as aiscan's
frontend lowers the file, library calls included; one fresh server each), and after each,
an edit in place (spaces after that line) and how long its diagnostics took, less the
server's debounce; then a line added at the top (every nest moves) and the same.

With `--reopen` too, the first hover and diagnostics when the file, viewed once as saved,
is opened again in a new server (`aiscan.lsp.view_store`).

Usage: python scripts/lsp_latency.py [--lines 2000] [--time-limit SECONDS] [--device h100-sxm]
       python scripts/lsp_latency.py --file fixtures/python/loops.py [--warm 2] [--device ...]
       python scripts/lsp_latency.py --file fixtures/python/loops.py --reopen
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lsp_wire import Server  # the tests' raw stdio client

DAXPY = """\
void daxpy(int n, double a, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}
"""


def slow_document(lines: int) -> str:
    out: list[str] = []
    while len(out) + 5 <= lines:
        f = len(out) // 5
        out += [
            f"void k{f}(int n, double *restrict a, double *restrict b) {{",
            "  for (int i0 = 0; i0 < n; i0++)",
            "    for (int i1 = i0 / 2; i1 < i0 + 1; i1++)",
            "      a[i0 + i1] += b[i0] * b[i1];",
            "}",
        ]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--device", action="append")
    parser.add_argument("--file", type=Path, help="measure the first hover and an edit on it")
    parser.add_argument("--warm", type=float, default=2.0)
    parser.add_argument(
        "--reopen", action="store_true", help="with --file: the first hover when opened again"
    )
    arguments = parser.parse_args()
    arguments.device = arguments.device or ["h100-sxm"]
    if arguments.file is not None and arguments.reopen:
        reopened(arguments.file, arguments.device, arguments.warm)
        return
    if arguments.file is not None:
        editor_aims(arguments.file, arguments.device, arguments.warm)
        return
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        server = Server(root)
        try:
            options: dict[str, object] = {"devices": arguments.device}
            if arguments.time_limit is not None:
                options["timeLimit"] = arguments.time_limit
            server.initialize(root, options)
            large, small = (root / "large.c").as_uri(), (root / "daxpy.c").as_uri()
            text = slow_document(arguments.lines)
            opened = time.monotonic()
            server.open(large, text)
            server.open(small, DAXPY)
            server.request(1, "textDocument/hover", _at(small, 2))
            hovered = server.arrival(server.response(1, timeout_s=900))
            publication = server.publication(large, timeout_s=900)
            published = server.arrival(publication)
            diagnostics = publication["params"]["diagnostics"]
        finally:
            server.close()
    print(f"large file: {text.count(chr(10))} lines, {text.count('void ')} nests")
    print(f"hover on the small file answered after {hovered - opened:.1f} s")
    print(f"large file's diagnostics after {published - opened:.1f} s: ", end="")
    errors = [d["message"] for d in diagnostics if d.get("severity") == 1]
    print(errors[0] if errors else f"{len(diagnostics)} findings")


def editor_aims(path: Path, devices: list[str], warm_s: float) -> None:
    from aiscan.lsp.server import DEBOUNCE_S

    text = path.read_text()
    language = "python" if path.suffix == ".py" else "c"
    loops = nest_lines(path, text)
    print(f"{path}: {len(loops)} loop nests; devices {', '.join(devices)}; warm {warm_s:g} s")
    for line in loops:
        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory)
            server = Server(root)
            try:
                server.initialize(root, {"devices": devices, "timeLimit": 600})
                time.sleep(warm_s)
                uri = (root / path.name).as_uri()
                opened = time.monotonic()
                server.open(uri, text, language)
                server.request(1, "textDocument/hover", _at(uri, line))
                response = server.response(1, timeout_s=900)
                hovered = server.arrival(response) - opened
                answered = "" if response.get("result") else " (no hover: not a nest's line?)"
                server.publication(uri, timeout_s=900)
                lines = text.splitlines(keepends=True)
                lines[line] = lines[line].rstrip("\n") + "  \n"
                reanalyzed = _edited(server, uri, 2, "".join(lines)) - DEBOUNCE_S
                # A new line at the top: every nest below it moves.
                above = "# a new line\n" if language == "python" else "// a new line\n"
                moved = _edited(server, uri, 3, above + "".join(lines)) - DEBOUNCE_S
            finally:
                server.close()
        print(
            f"  hover on line {line + 1}: {hovered * 1000:.0f} ms after open{answered};"
            f" an edit there re-analyzed in {reanalyzed * 1000:.0f} ms, a line added at the"
            f" top in {moved * 1000:.0f} ms (debounce excluded)"
        )


def reopened(path: Path, devices: list[str], warm_s: float) -> None:
    """The first hover on each nest of `path` in a new server, after another server viewed
    the file as saved (`view_store`: the editor restarted, the file opened again), in a
    cache directory of its own; and how long the analysis behind the kept view took."""
    import os

    text = path.read_text()
    language = "python" if path.suffix == ".py" else "c"
    loops = nest_lines(path, text)
    print(f"{path} opened again: {len(loops)} loop nests; devices {', '.join(devices)}")
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        os.environ["AISCAN_CACHE_DIR"] = str(root / "cache")
        (root / path.name).write_text(text)
        uri = (root / path.name).as_uri()
        for index, line in enumerate([None, *loops]):
            server = Server(root)
            try:
                server.initialize(root, {"devices": devices, "timeLimit": 600})
                time.sleep(warm_s)
                opened = time.monotonic()
                server.open(uri, text, language)
                if line is None:  # the first server: viewed and kept
                    server.publication(uri, timeout_s=900)
                    time.sleep(1.0)  # the child keeps it after its reply
                    continue
                server.request(1, "textDocument/hover", _at(uri, line))
                hovered = server.arrival(server.response(1, timeout_s=900)) - opened
                first = server.arrival(server.publication(uri, timeout_s=900)) - opened
                server.request(2, "aiscan/stats", None)
                kept = server.response(2)["result"]["kept_views"]
            finally:
                server.close()
            print(
                f"  hover on line {line + 1}: {hovered * 1000:.0f} ms after open, diagnostics"
                f" {first * 1000:.0f} ms ({kept} view kept; server {index})"
            )


def _edited(server: Server, uri: str, version: int, text: str) -> float:
    """Seconds from sending `text` as the document's `version` to its diagnostics."""
    changed = {"textDocument": {"uri": uri, "version": version}}
    edited = time.monotonic()
    server.notify("textDocument/didChange", changed | {"contentChanges": [{"text": text}]})
    publication = server.wait_for(
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"].get("version") == version
        ),
        900,
    )
    return float(server.arrival(publication) - edited)


def nest_lines(path: Path, text: str) -> list[int]:
    """The 0-based first line of each of the file's loop nests, as the server sees them."""
    from aiscan.lsp.document import settings_for
    from aiscan.pipeline import lower_source

    module = lower_source(text, str(path), settings_for(str(path)).pipeline)
    spans = (r.span for f in module.functions for r in f.regions if r.kind == "nest")
    return sorted({span.line - 1 for span in spans})


def _at(uri: str, line: int) -> dict[str, object]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": 4}}


if __name__ == "__main__":
    main()
