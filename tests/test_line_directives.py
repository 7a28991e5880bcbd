"""Regression (issue 35, item 8): a file or directory name with `"` or `\\` in it, and a
`#line` directive or linemarker in the source, once made every function vanish ("no
functions", exit 0, "All checks passed"): the name the preprocessor wrote into `#line`
came back from the parser as another file's, and the functions were dropped as a
header's. Functions are now found under any name, and reported at the physical lines of
the file analyzed (docs/model.md, "Where counts are reported")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aiscan.cli import main

DIVIDE = """\
void divide(int n, double h, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        y[i] = x[i] / h;
}
"""
WITH_A_MACRO = "#define H 2.0\n" + DIVIDE.replace("/ h", "/ (h * H)")
ODD_NAMES = ['we"ird.c', "back\\slash.c", 'q"uote\\d.c', 'd"ir/k.c', "d\\ir/k.c", "tab\tname.c"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--no-cache"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def only_function(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, object]:
    code, out, err = run(capsys, "analyze", str(path), "--format", "json")
    assert code == 0, err
    [file] = json.loads(out)["files"]
    assert file["path"] == str(path)
    [function] = file["functions"]
    assert isinstance(function, dict)
    return function


@pytest.mark.parametrize("name", ODD_NAMES)
@pytest.mark.parametrize("source", [DIVIDE, WITH_A_MACRO], ids=["fast path", "preprocessor"])
def test_a_file_named_with_quotes_or_backslashes_is_analyzed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, source: str
) -> None:
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(source)
    function = only_function(capsys, path)
    assert function["name"] == "divide"
    nest = function["nests"][0]  # type: ignore[index]
    assert nest["flops"]["total"] == ("n" if source is DIVIDE else "2*n")
    code, out, _ = run(capsys, "check", str(path), "--select", "AIS006")
    assert code == 1
    line = 4 if source is DIVIDE else 5
    assert out.startswith(f"{path}:{line}:")
    assert "AIS006" in out


@pytest.mark.parametrize("name", ['we"ird.c', "back\\slash.c"])
def test_an_error_in_a_header_beside_an_odd_name_names_the_header(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    directory = tmp_path / name.replace(".c", "")
    directory.mkdir()
    (directory / "h.h").write_text("#define TWICE(x) ((x) * 2.0)\nint broken(;\n")
    path = directory / "k.c"
    path.write_text('#include "h.h"\n' + DIVIDE)
    code, _, err = run(capsys, "analyze", str(path))
    assert code == 2
    assert err.startswith(f"{directory / 'h.h'}:2:"), err


@pytest.mark.parametrize("source", [DIVIDE, WITH_A_MACRO], ids=["fast path", "preprocessor"])
@pytest.mark.parametrize(
    "directive",
    ['#line 100 "other.c"', '# 100 "other.c" 1', "#line 100", '#line 7 "k.c"'],
)
def test_line_directives_keep_the_functions_at_their_physical_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: str, directive: str
) -> None:
    """A `#line` (or `cpp`'s linemarker) in the analyzed file is not followed: reports
    and diagnostics point at the line an editor shows, in the file analyzed."""
    path = tmp_path / "k.c"
    path.write_text(f"{directive}\n{source}")
    function = only_function(capsys, path)
    assert function["name"] == "divide"
    first = 2 if source is DIVIDE else 3  # the `void divide(` line
    assert (function["line"], function["end_line"]) == (first, first + 3)
    nest = function["nests"][0]  # type: ignore[index]
    assert nest["line"] == first + 2  # the `for`
    code, out, _ = run(capsys, "check", str(path), "--select", "AIS006")
    assert code == 1
    assert out.startswith(f"{path}:{first + 3}:")


def test_a_line_directive_in_a_header_keeps_the_file_s_functions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "h.h").write_text('#line 1 "k.c"\nstatic int in_header(void) { return 1; }\n')
    path = tmp_path / "k.c"
    path.write_text('#include "h.h"\n' + DIVIDE)
    function = only_function(capsys, path)
    assert (function["name"], function["line"]) == ("divide", 2)


@pytest.mark.parametrize("name", ['we"ird.py', "back\\slash.py", 'd"ir/k.py'])
def test_a_python_file_named_with_quotes_or_backslashes_is_analyzed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        "def divide(x, y, h: float):\n    for i in range(x.shape[0]):\n        y[i] = x[i] / h\n"
    )
    function = only_function(capsys, path)
    assert function["name"] == "divide"
    code, out, _ = run(capsys, "check", str(path), "--select", "AIS006")
    assert code == 1
    assert out.startswith(f"{path}:3:")
