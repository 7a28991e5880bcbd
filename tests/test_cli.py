"""The command line as a user runs it: exit codes, text and JSON output, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from aiscan.cli import main
from aiscan.report.json_report import load_schema

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "c"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_analyze_text_shows_counts_and_lines(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "analyze", str(FIXTURES / "daxpy.c"))
    assert code == 0
    assert "function daxpy (lines 4-7, fp64)" in out
    assert "loop nest, lines 6-7" in out
    assert "i (line 6): trip n" in out
    assert "FLOPs       2*n   [add n, mul n]" in out
    assert "compulsory 24*n   read 16*n, write 8*n" in out
    assert "compulsory 1/12 ≈ 0.08333 F/B" in out


def test_sizes_evaluate_the_intensity(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "analyze", str(FIXTURES / "dgemm_ijk.c"), "--size", "n=4096")
    assert code == 0
    assert "n/12 F/B   (→ ∞ as sizes grow; 341.3 at the given sizes)" in out


def test_define_binds_a_size_and_keeps_the_name(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "analyze", str(FIXTURES / "dgemm_ijk.c"), "-Dn=64", "--format", "json"
    )
    assert code == 0
    report = json.loads(out)
    function = report["files"][0]["functions"][0]
    assert function["intensity"]["compulsory"]["expr"] == "n/12"
    assert function["intensity"]["compulsory"]["value"] == "16/3"
    assert report["files"][0]["sizes"] == {"n": 64}


def test_write_allocate_switch(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "analyze", str(FIXTURES / "triad.c"), "--write-allocate", "--format", "json"
    )
    assert code == 0
    nest = json.loads(out)["files"][0]["functions"][0]["nests"][0]
    assert nest["bytes"]["compulsory"]["total"] == "40*n"
    assert nest["intensity"]["compulsory"]["expr"] == "1/20"
    assert nest["intensity"]["compulsory"]["decimal"] == pytest.approx(0.05)


def test_json_report_validates_against_the_shipped_schema(
    capsys: pytest.CaptureFixture[str],
) -> None:
    files = sorted(str(p) for p in FIXTURES.glob("*.c"))
    code, out, _ = run(
        capsys,
        "analyze",
        *files,
        str(FIXTURES / "errors" / "syntax_error.c"),
        "--format",
        "json",
        "--size",
        "n=1000",
        "-I",
        str(FIXTURES / "polybench"),
    )
    assert code == 2  # one input error
    report = json.loads(out)
    jsonschema.validate(report, load_schema())
    assert report["summary"] == {"files": len(files) + 1, "analyzed": len(files), "errors": 1}
    scalar = next(f for f in report["files"] if f["path"].endswith("scalar_recurrence.c"))
    intensity = scalar["functions"][0]["intensity"]["compulsory"]
    assert intensity == {
        "expr": None,
        "limit": None,
        "value": None,
        "decimal": None,
        "no_traffic": True,
    }


def test_schema_rejects_a_broken_report(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "analyze", str(FIXTURES / "daxpy.c"), "--format", "json")
    report = json.loads(out)
    del report["files"][0]["functions"][0]["nests"][0]["flops"]["mul"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, load_schema())


def test_other_files_are_analyzed_after_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    binary = tmp_path / "blob.c"
    binary.write_bytes(b"void f(void) {}\n\x00\x01\x02")
    latin1 = tmp_path / "latin1.c"
    latin1.write_bytes(b"void f(int n, double *x) { /* caf\xe9 */ }\n")
    code, out, err = run(
        capsys,
        "analyze",
        str(binary),
        str(latin1),
        str(tmp_path / "missing.c"),
        str(FIXTURES / "daxpy.c"),
    )
    assert code == 2
    assert f"{binary}:1:1: error: binary file (contains NUL bytes), not source code" in err
    assert f"{latin1}:1:34: error: not valid UTF-8 (byte 0xe9)" in err
    assert f"{tmp_path / 'missing.c'}:1:1: error: no such file" in err
    assert "function daxpy" in out


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("syntax_error.c", "syntax_error.c:4:22: error: C syntax error: invalid expression"),
        ("unterminated_comment.c", "unterminated_comment.c:2:3: error: unterminated /* comment"),
        (
            "missing_include.c",
            "missing_include.c:1:1: error: #include 'no_such_header.h' not found",
        ),
        (
            "absolute_include.c",
            "absolute_include.c:1:1: error: #include '/etc/passwd' refused: "
            "outside the include paths (-I)",
        ),
        (
            "include_cycle.c",
            "include_cycle.h:1:1: error: #include 'include_cycle.h' nested more than 40 deep",
        ),
    ],
)
def test_bad_c_input_gives_one_located_line(
    capsys: pytest.CaptureFixture[str], name: str, expected: str
) -> None:
    code, out, err = run(capsys, "analyze", str(FIXTURES / "errors" / name))
    assert code == 2
    assert expected in err and out == ""  # errors go to stderr
    assert "Traceback" not in out + err


@pytest.mark.parametrize("relative", [True, False])
def test_an_error_in_a_header_names_it_as_the_user_named_the_file(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    relative: bool,
) -> None:
    """As compilers do: `sub/bad.h:1:13` for `kernel.c`, absolute for an absolute path."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.h").write_text("int broken( {\n")
    (tmp_path / "kernel.c").write_text('#include "sub/bad.h"\nint x;\n')
    monkeypatch.chdir(tmp_path)
    path = "kernel.c" if relative else str(tmp_path / "kernel.c")
    code, out, err = run(capsys, "analyze", path, "--no-cache")
    header = "sub/bad.h" if relative else str(tmp_path / "sub" / "bad.h")
    assert code == 2
    assert (out, err) == ("", f"{header}:1:13: error: C syntax error before `{{`\n")
    assert len([line for line in err.splitlines() if ": error: " in line]) == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "double f(double x){ return " + "(" * 3000 + "x" + ")" * 3000 + "; }\n",
            "error: nesting too deep",
        ),
        ("int x;\n" * 2_000_000, "error: file is 14.0 MB, over the 10 MiB limit"),
    ],
    ids=["deep-expression", "huge-file"],
)
def test_pathological_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "input.c"
    path.write_text(content)
    code, out, err = run(capsys, "analyze", str(path))
    assert code == 2
    assert message in err
    assert "Traceback" not in out + err


def test_deeply_nested_loops_are_counted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    depth = 60
    body = "".join(f"for (int i{k} = 0; i{k} < n; i{k}++)\n" for k in range(depth))
    path = tmp_path / "deep.c"
    path.write_text(f"void g(int n, double *a) {{\n{body} a[i0] += 1.0;\n}}\n")
    code, out, _ = run(capsys, "analyze", str(path), "--format", "json")
    assert code == 0
    function = json.loads(out)["files"][0]["functions"][0]
    assert function["flops"]["total"] == f"n**{depth}"
    assert function["bytes"]["compulsory"]["total"] == "16*n"


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "analyze", str(FIXTURES / "daxpy.c"), "--size", "n=big")
    assert code == 2
    assert "--size n=big: expected NAME=INTEGER" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze"])
    assert exit_info.value.code == 2


def test_graph_dot_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "graph", str(FIXTURES / "dgemm_ijk.c"))
    assert code == 0
    assert out.startswith("digraph")
    assert 'label="for k: trip n\\nline 10"' in out
    assert "read A[i*n + k]" in out
    code, out, _ = run(capsys, "graph", str(FIXTURES / "dgemm_ijk.c"), "--format", "json")
    data = json.loads(out)
    kinds = sorted(node["kind"] for node in data["nodes"])
    assert kinds.count("loop") == 3
    assert kinds.count("read") == 2 and kinds.count("write") == 1


def test_graph_text_dump_is_canonical(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "graph", str(FIXTURES / "daxpy.c"), "--format", "text")
    assert code == 0
    assert out == (
        "module c\n"
        "function daxpy L4\n"
        "  nest L6-7\n"
        "    loop i start=0 step=1 trip=n L6\n"
        "      stmt L7 flops(add=1 mul=1) read x[i]:8 read y[i]:8 write y[i]:8\n"
    )


def test_console_script_runs_in_a_fresh_process() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "aiscan", "analyze", str(FIXTURES / "triad.c")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "1/16" in result.stdout
