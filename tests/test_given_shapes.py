"""Issue 29, item 6: the parameters as aiscan took them (JSON schema 1.5), and shapes a
user states for what the code does not say (`--shape`, `[tool.aiscan.shapes]`).

The figures are worked by hand in fixtures/python/given_shapes.expected.toml (without
`--shape`) and below (with it): attention over q, k, v of (b, h, n, d) is
`4*b*h*n**2*d - b*h*n*d + 3*b*h*n**2 - b*h*n` FLOPs (scores, scale, softmax, p @ v).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import sympy

from aiscan.cli import main
from aiscan.errors import UsageError
from aiscan.given_shapes import parse_shape
from aiscan.report.assembly import load_schema

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "python" / "given_shapes.py"
ATTENTION = "4*b*d*h*n**2 - b*d*h*n + 3*b*h*n**2 - b*h*n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def report(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, _ = run(capsys, "analyze", *argv, "--format", "json", "--no-cache")
    assert code == 0
    parsed: dict[str, Any] = json.loads(out)
    jsonschema.validate(parsed, load_schema())
    return parsed


def functions(parsed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["name"]: f for f in parsed["files"][0]["functions"]}


def parameters(function: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in function["parameters"]}


def same(text: str, expected: str) -> bool:
    return bool(sympy.simplify(sympy.sympify(text) - sympy.sympify(expected)) == 0)


def test_json_lists_each_parameter_with_where_its_shape_came_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    found = functions(report(capsys, str(FIXTURE)))
    attention = parameters(found["attention"])
    assert attention["q"] == {
        "name": "q",
        "line": 11,
        "column": 15,
        "kind": "array",
        "shape": ["b", "h", "n", "d"],
        "dtype": "float32",
        "shape_from": "code",  # `b, h, n, d = q.shape`
        "dtype_from": "assumed",  # PyTorch's default dtype
        "note": "`q` has no annotation: taken as an array of shape (b, h, n, d); dtype "
        "assumed float32 (PyTorch's default dtype)",
    }
    assert attention["k"]["shape"] == ["b", "h", "v_d2", "d"]
    assert attention["k"]["shape_from"] == "assumed"  # q's batch axes, a partner's rank
    assert attention["v"]["shape"] == ["b", "h", "v_d2", "v_d3"]
    scale = parameters(found["scale"])
    assert (scale["alpha"]["kind"], scale["alpha"]["shape_from"]) == ("scalar", "assumed")
    assert scale["n"] == {
        "name": "n",
        "line": 23,
        "column": 21,
        "kind": "size",
        "shape": [],
        "dtype": None,
        "shape_from": "annotation",
        "dtype_from": "annotation",
        "note": None,
    }


def test_c_functions_have_no_parameter_list(capsys: pytest.CaptureFixture[str]) -> None:
    (daxpy,) = report(capsys, str(ROOT / "fixtures" / "c" / "daxpy.c"))["files"][0]["functions"]
    assert "parameters" not in daxpy


def test_stated_shapes_make_attention_exact(capsys: pytest.CaptureFixture[str]) -> None:
    """Without them the FLOPs are in `v_d2`, `v_d3`; with them, attention's own figure."""
    found = functions(report(capsys, str(FIXTURE), "--shape", "k=b,h,n,d", "--shape", "v=b,h,n,d"))
    attention = found["attention"]
    assert same(attention["flops"]["total"], ATTENTION)
    # eager: q @ k.T reads 8E and writes 4S, the scale 4S and 4S, softmax 4S and 4S, p @ v
    # reads 4S + 4E and writes 4E (E = b*h*n*d, S = b*h*n**2, float32).
    assert same(attention["bytes"]["eager"]["total"], "16*b*h*n*d + 24*b*h*n**2")
    k = parameters(attention)["k"]
    assert (k["shape"], k["shape_from"], k["dtype_from"]) == (
        ["b", "h", "n", "d"],
        "given",
        "assumed",
    )
    assert k["note"].endswith(
        "as given (--shape k=b,h,n,d); dtype assumed float32 (PyTorch's default dtype)"
    )


def test_a_qualified_shape_wins_and_expressions_are_extents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shapes = ("mlp.x=t,d", "w1=d,4*d", "b1=e", "mlp.b1=4*d", "w2=4*d,d")
    found = functions(report(capsys, str(FIXTURE), *(f"--shape={s}" for s in shapes)))
    mlp = found["mlp"]
    # x @ w1: 4td(2d - 1); + b1: 4td; gelu (erf form): 4 per element; h @ w2: td(8d - 1).
    assert same(mlp["flops"]["total"], "16*d**2*t + 15*d*t")
    assert same(mlp["flops"]["special"], "4*d*t")
    assert parameters(mlp)["b1"]["shape"] == ["4*d"]
    assert parameters(found["scale"])["x"]["shape_from"] == "code"  # `mlp.x` is mlp's only


def test_a_stated_dtype_changes_the_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    found = functions(report(capsys, str(FIXTURE), "--shape", "scale.x=n:float16"))
    x = parameters(found["scale"])["x"]
    assert (x["dtype"], x["dtype_from"]) == ("float16", "given")
    # x[:n] * alpha, alpha a weak scalar: the product stays float16 (read 2n, write 2n).
    assert same(found["scale"]["bytes"]["compulsory"]["total"], "4*n")


def test_configuration_states_shapes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(FIXTURE, tmp_path / "model.py")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.aiscan.shapes]\nk = "b,h,n,d"\nv = ["b", "h", "n", "d"]\n"attention.q" = "b,h,n,d"\n'
    )
    monkeypatch.chdir(tmp_path)
    found = functions(report(capsys, "model.py"))
    assert same(found["attention"]["flops"]["total"], ATTENTION)
    assert parameters(found["attention"])["v"]["shape_from"] == "given"
    # The command line's statement comes after the file's: it wins.
    found = functions(report(capsys, "model.py", "--shape", "v=b,h,n,e"))
    assert parameters(found["attention"])["v"]["shape"] == ["b", "h", "n", "e"]


def test_a_stated_shape_the_code_contradicts_is_a_located_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parsed = report(capsys, str(FIXTURE), "--shape", "q=n,d")
    (error,) = [d for d in parsed["files"][0]["diagnostics"] if d["severity"] == "error"]
    assert (error["line"], error["column"]) == (11, 15)
    assert error["message"] == (
        "--shape q=n,d: `q` cannot have that shape: the code uses 4 axes of it (not used)"
    )
    q = parameters(functions(parsed)["attention"])["q"]
    assert (q["shape"], q["shape_from"]) == (["b", "h", "n", "d"], "code")
    _, out, _ = run(capsys, "analyze", str(FIXTURE), "--no-cache", "--shape", "n=m")
    message = "`n` cannot have that shape: the annotation makes it an integer size (not used)"
    assert f"{FIXTURE}:23:21: error: --shape n=m: {message}" in out


def test_a_shape_naming_no_parameter_is_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys, "analyze", str(FIXTURE), "--no-cache", "--shape", "w9=n", "--shape", "scale.q=n"
    )
    assert code == 0
    assert err.splitlines() == [
        "aiscan: warning: --shape w9=n: no analyzed function has a parameter `w9`",
        "aiscan: warning: --shape scale.q=n: no function `scale` has a parameter `q`",
    ]
    code, _, err = run(capsys, "check", str(FIXTURE), "--no-cache", "--shape", "w9=n")
    assert "aiscan: warning: --shape w9=n: no analyzed function has a parameter `w9`" in err


def test_roofline_takes_shapes_and_warns_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    output = str(tmp_path / "roof.html")
    argv = ["roofline", str(FIXTURE), "--device", "h100", "-o", output, "--shape", "w9=n"]
    code, _, err = run(capsys, *argv, "--shape", "k=b,h,n,d")
    assert code == 0
    assert "aiscan: warning: --shape w9=n: no analyzed function has a parameter `w9`" in err
    assert "--shape k=b,h,n,d" not in err


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("q", "expected NAME=EXTENT,...[:DTYPE]"),
        ("q=n;d", "extent 'n;d' is not an expression"),
        ("q=__import__('os')", "extent \"__import__('os')\" uses what an extent cannot"),
        ("q=0", "extent '0' is not a positive extent"),
        ("q=n:float8", "dtype 'float8' is not one of"),
        ("q=n**k", "extent 'n**k' has a power whose exponent is not an integer literal"),
    ],
)
def test_a_malformed_shape_is_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str], spec: str, why: str
) -> None:
    code, out, err = run(capsys, "analyze", str(FIXTURE), "--shape", spec)
    assert code == 2 and not out
    (line,) = err.splitlines()
    assert line.startswith(f"aiscan: error: --shape {spec}: {why}")


def test_a_malformed_configured_shape_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "aiscan.toml"
    config.write_text('[shapes]\nq = "n,,d"\n')
    code, _, err = run(capsys, "analyze", str(FIXTURE), "--config", str(config))
    assert code == 2
    assert err == f"aiscan: error: {config}: shapes.q: extent '' is empty\n"


def test_extents_are_read_never_evaluated() -> None:
    shape = parse_shape("x=n + 1,n//2,2**3")
    assert shape.extents == ("n + 1", "n//2", "2**3")
    with pytest.raises(UsageError):
        parse_shape("x=(lambda: 1)()")


def test_every_python_fixture_report_validates(capsys: pytest.CaptureFixture[str]) -> None:
    """Schema 1.5 holds for every Python fixture's report, parameters included."""
    files = sorted(str(p) for p in (ROOT / "fixtures" / "python").glob("*.py"))
    _, out, _ = run(capsys, "analyze", *files, "--format", "json", "--no-cache")
    parsed = json.loads(out)
    jsonschema.validate(parsed, load_schema())
    assert parsed["schema_version"] == "1.8"
    analyzed = [f for f in parsed["files"] if f["status"] == "analyzed"]
    assert all("parameters" in function for f in analyzed for function in f["functions"])
