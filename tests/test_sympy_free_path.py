"""The one-kernel path imports no sympy: a polynomial kernel placed on a CPU is carried in
`aiscan.algebra` from the C frontend to the report (issue 16: importing sympy took more
than the rest of such a run together). A change that reaches for sympy on that path fails
here, not silently in the benchmark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

_PROBE = """
import contextlib, io, sys
from aiscan.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(code, "sympy" in sys.modules)
print(out.getvalue())
"""


@pytest.mark.parametrize(
    "kernel, arguments",
    [
        ("fixtures/c/daxpy.c", ["--device", "haswell"]),
        ("fixtures/c/daxpy.c", ["--device", "haswell", "--format", "json"]),
    ],
)
def test_a_polynomial_kernel_is_analyzed_without_sympy(kernel: str, arguments: list[str]) -> None:
    command = [sys.executable, "-c", _PROBE, "analyze", kernel, "--no-cache", *arguments]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    status, report = result.stdout.split("\n", 1)
    assert status == "0 False", result.stderr
    assert "1/12" in report
