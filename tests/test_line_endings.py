"""Regression (issue 35, item 9): C sources saved with Windows (CRLF) or old Mac (CR) line
endings give the very report of the LF file, on the macro-free fast path and through the
preprocessor, for the analyzed file and for a header it includes."""

from __future__ import annotations

from pathlib import Path

import pytest

from aiscan.cli import main
from aiscan.frontends.c.preprocess import preprocess

ROOT = Path(__file__).resolve().parent.parent
DGEMM = (ROOT / "fixtures" / "c" / "dgemm_ijk.c").read_text()
WITH_A_MACRO = "#define N 64\n" + DGEMM.replace("size_t n,", "").replace("< n", "< N")
HEADER = "#define SCALED(v) \\\n    (2.0 * (v))\n"  # a continued line, too
USES_HEADER = (
    '#include "scale.h"\n'
    "void f(int n, const double *restrict x, double *restrict y) {\n"
    "    for (int i = 0; i < n; i++)\n"
    "        y[i] = SCALED(x[i]) + x[i];\n"
    "}\n"
)


def report(capsys: pytest.CaptureFixture[str], path: Path, *flags: str) -> str:
    code = main(["analyze", str(path), "--no-cache", *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out.replace(str(path), "<file>")


@pytest.mark.parametrize("ending", ["\r\n", "\r"], ids=["crlf", "cr"])
@pytest.mark.parametrize("source", [DGEMM, WITH_A_MACRO], ids=["fast path", "preprocessor"])
@pytest.mark.parametrize("form", ["text", "json"])
def test_line_endings_give_the_lf_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, ending: str, source: str, form: str
) -> None:
    lf, other = tmp_path / "lf.c", tmp_path / "other.c"
    lf.write_bytes(source.encode())
    other.write_bytes(source.replace("\n", ending).encode())
    expected = report(capsys, lf, "--format", form, "--size", "n=100")
    assert "2*n**3" in expected or "2*N**3" in expected
    assert report(capsys, other, "--format", form, "--size", "n=100") == expected


def test_the_fast_path_takes_a_crlf_file() -> None:
    """CRLF alone is no reason to leave the fast path (it once failed there on `\\r`)."""
    source = preprocess(DGEMM.replace("\n", "\r\n"), "k.c")
    assert source.used_fast_path and not source.diagnostics
    assert "\r" not in source.text


@pytest.mark.parametrize("ending", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_a_crlf_header_gives_the_lf_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, ending: str
) -> None:
    (tmp_path / "scale.h").write_bytes(HEADER.encode())
    kernel = tmp_path / "k.c"
    kernel.write_bytes(USES_HEADER.encode())
    expected = report(capsys, kernel)
    assert "FLOPs       2*n" in expected
    (tmp_path / "scale.h").write_bytes(HEADER.replace("\n", ending).encode())
    kernel.write_bytes(USES_HEADER.replace("\n", ending).encode())
    assert report(capsys, kernel) == expected
