"""A real editor end to end: headless Neovim's built-in LSP client on `aiscan lsp`.

Opens a C file and reads back, from the editor, the diagnostics, the hover on the loop and
the code lenses. Skips where Neovim is not installed (Debian: `apt-get install neovim`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(__file__).resolve().parent / "data" / "nvim_lsp.lua"
DAXPY = """\
#include <stddef.h>

void daxpy(size_t n, double a, const double *restrict x, double *restrict y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a * x[i] / y[i];
}
"""

pytestmark = pytest.mark.skipif(shutil.which("nvim") is None, reason="Neovim is not installed")


def test_neovim_shows_diagnostics_hover_and_code_lenses(tmp_path: Path) -> None:
    (tmp_path / "aiscan.toml").write_text('devices = ["h100-sxm"]\n')
    source = tmp_path / "daxpy.c"
    source.write_text(DAXPY)
    out = tmp_path / "editor.json"
    environ = {
        **os.environ,
        "AISCAN_PYTHON": sys.executable,
        "AISCAN_ROOT": str(ROOT),
        "AISCAN_FILE": str(source),
        "AISCAN_OUT": str(out),
        "AISCAN_LOOP_LINE": "4",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    subprocess.run(
        ["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {SCRIPT}"],
        env=environ,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=False,
    )
    editor = json.loads(out.read_text())
    assert editor.get("error") is None
    found = {(d["code"], d["line"]) for d in editor["diagnostics"]}
    assert found == {("AIS001", 4), ("AIS006", 5)}
    hover = editor["hover"]["contents"]["value"]
    assert "FLOPs: `2*n`" in hover and "AI, compulsory: `1/12` F/B" in hover
    assert "h100-sxm fp64: ridge 10.15 F/B, memory-bound" in hover
    (lens,) = editor["lenses"]
    assert lens["range"]["start"]["line"] == 4
    assert lens["command"]["title"] == "aiscan: AI 1/12 ≈ 0.0833 F/B · 2*n FLOPs · 24*n B"
    assert lens["command"]["command"] == "aiscan.showNest"
