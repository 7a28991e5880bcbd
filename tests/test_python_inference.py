"""Un-annotated NumPy code: shapes from the code, a default dtype, assumptions said."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import sympy

from aiscan.algebra import to_sympy
from aiscan.analysis.kernel import AnalysisOptions, analyze_module
from aiscan.ir.nodes import UnknownKind
from aiscan.pipeline import PipelineOptions, lower_source

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "python" / "unannotated.py"


def _functions(text: str, dtype: str = "float64") -> dict[str, object]:
    module = lower_source(text, "k.py", PipelineOptions(python_dtype=dtype))
    analysis = analyze_module(module, AnalysisOptions())
    return {f.function.name: f for f in analysis.functions}


def _same(actual: object, expected: str) -> bool:
    actual = to_sympy(actual)  # counts that are polynomials come as aiscan.algebra.Poly
    assert isinstance(actual, sympy.Expr)
    plain = actual.subs({s: sympy.Symbol(s.name) for s in actual.free_symbols})
    return sympy.simplify(plain - sympy.sympify(expected)) == 0


def test_python_dtype_sets_the_width_of_untyped_arrays_only() -> None:
    functions = _functions(FIXTURE.read_text(), "float32")
    matvec = functions["matvec"]
    # A and x are float32 now; y = np.empty(n) is float64 whatever the default.
    assert _same(matvec.traffic["compulsory"].total(False), "4*m*n + 4*m + 8*n")  # type: ignore[attr-defined]
    assert _same(matvec.flops.total, "2*m*n")  # type: ignore[attr-defined]
    messages = [u.message for u in matvec.unknowns]  # type: ignore[attr-defined]
    assert all("dtype assumed float32" in m for m in messages), messages


def test_an_unknown_dtype_never_makes_flops_zero() -> None:
    text = "import numpy as np\ndef f(x):\n    return np.sum(x * x)\n"
    (f,) = _functions(text).values()
    assert _same(f.flops.total, "2*x_d0 - 1")  # type: ignore[attr-defined]
    kinds = [u.kind for u in f.unknowns]  # type: ignore[attr-defined]
    assert kinds == [UnknownKind.ASSUMPTION]


def test_integer_parameters_used_as_sizes_are_not_arrays() -> None:
    text = "def f(n, a):\n    for i in range(n):\n        a[i] = a[i] + 1.0\n"
    (f,) = _functions(text).values()
    assert _same(f.flops.total, "n")  # type: ignore[attr-defined]
    messages = [u.message for u in f.unknowns]  # type: ignore[attr-defined]
    assert len(messages) == 1 and messages[0].startswith("`a` has no annotation"), messages


def test_text_report_lists_the_assumptions() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "aiscan", "analyze", str(FIXTURE)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "assumption (line 21): `A` has no annotation: taken as an array of shape (n, m)" in (
        result.stdout
    )


def test_python_dtype_rejects_unknown_names() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "aiscan", "analyze", str(FIXTURE), "--python-dtype", "float8"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 2
    assert "--python-dtype float8" in result.stderr


def test_python_dtype_takes_integer_dtypes_and_integer_arithmetic_is_no_flop() -> None:
    """Issue 28, construct 3: integer arrays from a caller elsewhere (Floyd-Warshall's
    path matrix) are typed by the switch; their adds are no FLOP, a true division is."""
    fixture = ROOT / "fixtures" / "python" / "integer_data.py"
    command = [sys.executable, "-m", "aiscan", "analyze", str(fixture), "--no-cache"]
    result = subprocess.run(
        [*command, "--python-dtype", "int32", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    functions = {f["name"]: f for f in json.loads(result.stdout)["files"][0]["functions"]}
    assert functions["min_plus_relax"]["flops"]["total"] == "0"
    assert functions["running_total"]["flops"]["total"] == "0"
    assert functions["shares"]["flops"]["total"] == "counts_d0"
    (assumption,) = functions["min_plus_relax"]["unknowns"]
    assert "dtype assumed int32 (--python-dtype)" in assumption["message"]


def test_a_range_loop_of_unknown_trip_still_counts_its_body() -> None:
    text = "def f(x, n):\n    m = int(n)\n    for i in range(m):\n        x[i] = x[i] * 2.0\n"
    (f,) = _functions(text).values()
    assert _same(f.flops.total, "trip_L3")  # type: ignore[attr-defined]
    messages = [u.message for u in f.unknowns]  # type: ignore[attr-defined]
    assert not any("something other than" in m for m in messages), messages


def test_only_a_non_range_loop_is_said_to_iterate_over_something_else() -> None:
    text = "def f(x):\n    for v in [1.0, 2.0]:\n        x[0] = v\n"
    (f,) = _functions(text).values()
    messages = [u.message for u in f.unknowns]  # type: ignore[attr-defined]
    assert any("iterates over something other than `range(...)`" in m for m in messages)


def test_a_loop_over_an_array_is_counted_and_an_element_as_index_is_said() -> None:
    """`for i in items` takes items' elements (a counted loop); using one as an index
    (a scatter through data) is a located unknown, not a guess."""
    text = "def f(x, items):\n    for i in items:\n        x[i] = 1.0\n"
    (f,) = _functions(text).values()
    (region,) = f.regions  # type: ignore[attr-defined]
    (loop,) = region.region.body
    assert str(loop.trip) == "items_d0"
    messages = [u.message for u in f.unknowns]  # type: ignore[attr-defined]
    assert "`i` is not an integer expression" in messages


def test_function_level_unknowns_appear_in_the_text_report(tmp_path: Path) -> None:
    source = tmp_path / "k.py"
    source.write_text(
        # An `if` on the loop index restricts the passes exactly, a share that varies
        # from pass to pass: its vector statement keeps the fused view only (a `for`, a
        # `while` and an `if` on data have an eager view, issue 28).
        "import numpy as np\ndef f(x, n: int):\n    for i in range(n):\n        if i >= 1:\n"
        "            x[1:] = x[1:] * 2.0\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "aiscan", "analyze", str(source)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert "  unknown: line 5: vectorized statements inside an explicit loop" in result.stdout
