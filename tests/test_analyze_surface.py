"""`aiscan analyze` as people read it: counts evaluated at the given sizes, warnings for
sizes nothing uses, "did you mean" for devices, a file's own sizes only, bounds labelled."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from aiscan.cli import main
from aiscan.report.assembly import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parent.parent
C = ROOT / "fixtures" / "c"
SCHEMA = ROOT / "aiscan" / "report" / "schema" / "report.schema.json"
OUTER = """\
void outer(int n, int m, const double *restrict x, const double *restrict y,
           double *restrict z)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            z[i] += x[i] * y[j];
}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_text_evaluates_flops_and_bytes_at_the_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "analyze", str(C / "daxpy.c"), "--size", "n=1000000")
    assert code == 0
    assert "FLOPs       2*n = 2,000,000   [add n, mul n]" in out
    assert "compulsory 24*n = 24,000,000   read 16*n, write 8*n" in out


def test_json_values_at_the_sizes_and_null_where_symbols_remain(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "outer.c"
    path.write_text(OUTER)
    code, out, _ = run(capsys, "analyze", str(path), "--format", "json", "--size", "n=1000")
    assert code == 0
    report = json.loads(out)
    assert report["schema_version"] == SCHEMA_VERSION == "1.8"
    jsonschema.validate(report, json.loads(SCHEMA.read_text()))
    nest = report["files"][0]["functions"][0]["nests"][0]
    assert nest["flops"]["total"] == "2*m*n" and nest["flops"]["total_value"] is None
    compulsory = nest["bytes"]["compulsory"]
    assert compulsory["total"] == "8*m + 24*n"  # x and z read, z written: 24n; y: 8m
    assert compulsory["total_value"] is None  # m has no size
    code, out, _ = run(
        capsys, "analyze", str(path), "--format", "json", "--size", "n=1000", "--size", "m=10"
    )
    nest = json.loads(out)["files"][0]["functions"][0]["nests"][0]
    assert nest["flops"]["total_value"] == 20000
    assert nest["bytes"]["compulsory"]["total_value"] == 24080
    assert nest["bytes"]["compulsory"]["write_value"] == 8000


def test_no_values_without_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "analyze", str(C / "daxpy.c"), "--format", "json")
    nest = json.loads(out)["files"][0]["functions"][0]["nests"][0]
    assert "total_value" not in nest["flops"]


def test_a_size_no_file_uses_is_a_warning_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "analyze", str(C / "daxpy.c"), "--size", "nn=4096")
    assert code == 0
    assert (
        "aiscan: warning: --size nn=4096: no analyzed file uses a size `nn`; did you mean `n`?"
        in err
    )
    assert "[nn=4096]" not in out
    _, _, err = run(capsys, "analyze", str(C / "daxpy.c"), "--size", "n=4096")
    assert "warning" not in err


def test_unknown_device_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "analyze", str(C / "daxpy.c"), "--device", "h10")
    assert code == 2
    assert "unknown device 'h10'; did you mean 'h100'?" in err


def test_header_macros_the_file_does_not_use_are_not_its_sizes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "sizes.h").write_text("#define N 64\n#define UNUSED 7\n#define STEPS 10\n")
    path = tmp_path / "k.c"
    path.write_text(
        '#include "sizes.h"\n'
        "void k(const double *restrict x, double *restrict y)\n{\n"
        "    for (int i = 0; i < N; i++)\n        y[i] = 2.0 * x[i];\n}\n"
    )
    code, out, _ = run(capsys, "analyze", str(path))
    assert code == 0
    assert out.splitlines()[0] == f"{path}  [N=64]"
    _, out, _ = run(capsys, "analyze", str(path), "--format", "json")
    assert json.loads(out)["files"][0]["sizes"] == {"N": 64}


def test_an_upper_bound_is_labelled_on_the_intensity_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(capsys, "analyze", str(C / "indirect.c"))
    assert "compulsory 28*n   read 20*n, write 8*n  (upper bound)" in out
    assert "compulsory 1/28 ≈ 0.03571 F/B  (lower bound: bytes are an upper bound)" in out


@pytest.mark.parametrize("command", ["analyze", "graph", "check"])
def test_errors_go_to_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    path = tmp_path / "bad.c"
    path.write_text("void f(int n, double *a) {\n  for (int i = 0; i < n; i++) a[i] = \n}\n")
    code, out, err = run(capsys, command, str(path))
    assert code == 2
    assert f"{path}:3:1: error: C syntax error" in err
    assert "error" not in out


@pytest.mark.parametrize(
    "source",
    [
        "void f(int n, double *a) { for (int i = 0; i < n; i++) a[i] = a[i] * 2.0; }\n",
        "#define N 100\nvoid f(double *a) { for (int i = 0; i < N; i++) a[i] = a[i] * 2.0; }\n",
    ],
    ids=["fast path", "preprocessor"],
)
def test_a_file_name_with_a_newline_analyzes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: str
) -> None:
    """`#line` cannot carry a newline: the file is still analyzed under its own name."""
    path = tmp_path / 'bad\nname "x".c'
    path.write_text(source)
    code, out, err = run(capsys, "analyze", str(path), "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    [file] = report["files"]
    assert file["path"] == str(path)
    [function] = file["functions"]
    assert function["name"] == "f"


def test_a_syntax_error_in_a_file_named_with_a_newline_is_located(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad\nname.c"
    path.write_text("void f(double *a) { a[0] = 1.0 }\n")
    code, _, err = run(capsys, "analyze", str(path))
    assert code == 2
    # The newline is printed escaped, so the diagnostic stays one line.
    escaped = str(path).replace("\n", "\\n")
    assert f"{escaped}:1:32: error: C syntax error before `}}`\n" == err
    assert "Traceback" not in err and "#line" not in err


def test_a_time_step_count_is_held_not_swept(capsys: pytest.CaptureFixture[str]) -> None:
    """time_stencil.c's `T` only bounds the time loop (no index uses `t`): the crossover
    sweeps `n` alone, holding `T` at its value, or saying it depends on it without one."""
    argv = ["analyze", str(C / "time_stencil.c"), "--device", "h100", "--model", "compulsory"]
    _, out, _ = run(capsys, *argv)
    assert "T=n" not in out
    assert "crossover in n depends on T (held, not swept)" in out
    _, out, _ = run(capsys, *argv, "--size", "T=100")
    # 3*T*(n - 2) = ridge * (24*n - 32) at T = 100 and the in-core ridge 25.5e12/3.35e12
    assert "compute-bound above n ≈ 3.03817 (T held)" in out


def test_a_given_size_is_held_in_the_crossover(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """With n given, the crossover sweeps m alone: 2*n*m = ridge*(8*m + 24*n) at n = 1000."""
    path = tmp_path / "outer.c"
    path.write_text(OUTER)
    argv = ["analyze", str(path), "--device", "h100", "--model", "compulsory"]
    _, out, _ = run(capsys, *argv)
    assert "compute-bound above m=n ≈ 162.388" in out
    _, out, _ = run(capsys, *argv, "--size", "n=1000")
    assert "compute-bound above m ≈ 126.945 (n held)" in out


def test_a_function_without_loops_is_placed_not_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A function of scalars has no loop nest for the cache model: it is placed on main
    memory with its own (zero) traffic, not reported as a device without bandwidth."""
    source = tmp_path / "scalar.py"
    source.write_text("def relu(x):\n    return x\n")
    code, out, _ = run(
        capsys, "analyze", str(source), "--format", "json", "--no-cache", "--device", "epyc-9654"
    )
    assert code == 0
    (placement,) = json.loads(out)["files"][0]["functions"][0]["placement"]
    assert "error" not in placement
    assert placement["model"] == "compulsory"
    assert placement["bytes"] == "0"
    assert placement["bound"] == "compute"
