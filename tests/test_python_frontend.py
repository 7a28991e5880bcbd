"""The Python frontend against its fixtures: every `fixtures/python/*.py` with the values
expected beside it in `*.expected.toml` (sympy strings, compared symbolically)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.errors import InputError
from aiscan.pipeline import PipelineOptions, lower_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "python"
CASES = sorted(p for p in FIXTURES.glob("*.py") if p.with_suffix(".expected.toml").exists())


def _plain(expr: sympy.Expr) -> sympy.Expr:
    """Drop assumptions so expected strings (parsed without them) compare equal."""
    return expr.subs({s: sympy.Symbol(s.name) for s in expr.free_symbols})


def _parse(text: str) -> sympy.Expr:
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)) - {"ceiling", "floor", "Max", "Min"}
    return sympy.sympify(text, locals={n: sympy.Symbol(n) for n in names})


def assert_same(actual: sympy.Expr, expected: str, what: str) -> None:
    difference = sympy.simplify(_plain(sympy.sympify(actual)) - _parse(expected))
    assert difference == 0, f"{what}: got {actual}, expected {expected}"


def _analyze(path: Path, python_dtype: str | None = None) -> dict[str, FunctionAnalysis]:
    options = PipelineOptions(python_dtype=python_dtype)
    module = lower_source(path.read_text(), str(path), options)
    analysis = analyze_module(module, AnalysisOptions())
    return {f.function.name: f for f in analysis.functions}


@pytest.mark.parametrize(
    "path", [p for p in CASES if p.stem != "syntax_error"], ids=lambda p: p.stem
)
def test_fixture(path: Path) -> None:
    expected = tomllib.loads(path.with_suffix(".expected.toml").read_text())
    # `[options]`: what the fixture is analyzed with (`--python-dtype`), where not the default.
    functions = _analyze(path, expected.get("options", {}).get("python_dtype"))
    for name, want in expected["functions"].items():
        assert name in functions, f"{path.name}: no function {name}"
        _check_function(functions[name], want, f"{path.stem}.{name}")


def _check_function(result: FunctionAnalysis, want: dict[str, Any], where: str) -> None:
    flops = result.flops
    if "flops" in want:
        assert_same(flops.total, want["flops"], f"{where} flops")
    if "special" in want:
        assert_same(flops.special, want["special"], f"{where} special")
    for model in ("compulsory", "streaming", "fused", "eager", "jit"):
        if model in want:
            assert_same(result.traffic[model].total(False), want[model], f"{where} {model}")
    for key, model in (("ai_fused", "fused"), ("ai_eager", "eager")):
        if key in want:
            ratio = result.intensity[model].expr
            assert ratio is not None
            assert_same(ratio, want[key], f"{where} {key}")
    if "ai_limit" in want:
        assert_same(result.intensity["compulsory"].limit, want["ai_limit"], f"{where} limit")
    regions = [r.region for r in result.regions]
    if "conventions" in want:
        found = [text for r in regions for text, _ in r.conventions]
        assert found == want["conventions"], where
    if "ai_convention" in want:
        figure = sum((value for r in regions for _, value in r.conventions), sympy.Integer(0))
        bytes_moved = result.traffic["compulsory"].total(False)
        assert_same(sympy.cancel(figure / bytes_moved), want["ai_convention"], where)
    if "temporaries" in want:
        found = [
            f"{t.name} = {t.expression} @ {t.span.line}" for r in regions for t in r.temporaries
        ]
        assert found == want["temporaries"], where
    if "unknowns" in want:
        found = [f"{u.kind.value} {u.span.line}:{u.span.column}" for u in result.unknowns]
        assert found == want["unknowns"], f"{where}: {[u.message for u in result.unknowns]}"
    else:
        kinds = {u.kind.value for u in result.unknowns}
        assert kinds <= {"branch-fraction"}, f"{where}: {[u.message for u in result.unknowns]}"


def test_size_defaults_come_from_module_constants() -> None:
    path = FIXTURES / "loops.py"
    module = lower_source(path.read_text(), str(path), PipelineOptions())
    assert dict(module.size_defaults) == {"N": 1024}


def test_linear_layer_intensity_at_the_seed_sizes() -> None:
    """MODEL.md: fp16 linear layer M=512, K=1024, N=4096 has AI about 315 (2MKN figure)."""
    result = _analyze(FIXTURES / "model_rows.py")["linear"]
    figure = result.regions[0].region.conventions[0][1]
    ratio = figure / result.traffic["compulsory"].total(False)
    sizes = {s: {"M": 512, "K": 1024, "N": 4096}[s.name] for s in ratio.free_symbols}
    assert abs(float(ratio.subs(sizes)) - 315.08) < 0.01


def test_bf16_matmul_at_64_reports_both_figures() -> None:
    result = _analyze(FIXTURES / "model_rows.py")["bf16_matmul"]
    figure = result.regions[0].region.conventions[0][1]
    bytes_moved = result.traffic["compulsory"].total(False)
    n = next(iter(bytes_moved.free_symbols))
    assert round(float((figure / bytes_moved).subs(n, 64)), 1) == 21.3
    assert (result.flops.total / bytes_moved).subs(n, 64) == sympy.Rational(127, 6)


def test_syntax_error_is_located() -> None:
    path = FIXTURES / "syntax_error.py"
    want = tomllib.loads(path.with_suffix(".expected.toml").read_text())["error"]
    with pytest.raises(InputError) as caught:
        lower_source(path.read_text(), str(path), PipelineOptions())
    span = caught.value.diagnostic.span
    assert (span.line, span.column) == (want["line"], want["column"])
    assert want["message"] in caught.value.diagnostic.message


def test_element_indexing_styles_agree() -> None:
    """`A[0]` and `A[0, :]` are the same row; `import numpy` spellings all resolve."""
    head = (
        "import numpy\nimport numpy as np\nfrom numpy import dot as d\n"
        "from jaxtyping import Float64\n"
    )
    one = head + "def f(A: Float64[np.ndarray, 'n n']):\n    return numpy.dot(A[0], A[1])\n"
    two = head + "def f(A: Float64[np.ndarray, 'n n']):\n    return d(A[0, :], A[1])\n"
    results = [_analyze_text(text)["f"] for text in (one, two)]
    assert results[0].flops.total == results[1].flops.total
    assert_same(results[0].flops.total, "2*n - 1", "dot of rows")
    assert results[0].traffic["compulsory"].total(False) == results[1].traffic["compulsory"].total(
        False
    )


def _analyze_text(text: str) -> dict[str, FunctionAnalysis]:
    module = lower_source(text, "inline.py", PipelineOptions())
    return {f.function.name: f for f in analyze_module(module).functions}


def test_code_only_the_compiler_rejects_is_a_located_error() -> None:
    """CPython's parser accepts `return*x + y`, libcst refuses to build it, and CPython's
    compiler rejects it: the error is the compiler's, at its line (found by fuzzing)."""
    text = "import numpy as np\n\n\ndef f(x, y):\n    return*x + y\n"
    with pytest.raises(InputError) as caught:
        lower_source(text, "starred.py", PipelineOptions())
    diagnostic = caught.value.diagnostic
    assert diagnostic.span.line == 5
    assert "starred" in diagnostic.message


def test_empty_contractions_count_nothing_brute_force() -> None:
    """`L[i, :i] @ x[:i]` and `np.sum(a[:i])` run nothing at i = 0, `range(i + 2, n)` nothing
    at i >= n - 2: the closed forms equal the operations counted one by one at small sizes."""
    functions = _analyze(FIXTURES / "empty_contraction.py")
    for size in range(1, 9):
        dots = sum(k + max(k - 1, 0) + 2 for k in range(size))
        sums = sum(max(k - 1, 0) for k in range(size))
        pairs = sum(2 for i in range(size) for _ in range(i + 2, size))
        for name, want in (
            ("pairs_two_apart", pairs),
            ("forward_substitution", dots),
            ("back_substitution", dots),
            ("prefix_sums", sums),
        ):
            total = functions[name].flops.total
            got = total.subs({s: size for s in total.free_symbols if s.name == "n"})
            assert got == want, f"{name} at n = {size}: {got} != {want}"


def test_index_conditions_over_two_sizes_brute_force() -> None:
    """`if E - w >= 0` over two sizes and a back substitution whose rows and columns are
    two sizes bend where one size passes the other: the counts equal the operations
    counted one by one on both sides of the bend and on it (issue 28, ludcmp)."""
    functions = _analyze(FIXTURES / "index_conditions.py")
    for rows in range(1, 8):
        for other in range(1, 8):
            lagged = sum(2 for e in range(rows) for w in range(other) if e - w >= 0)
            back = sum(2 + max(2 * (other - 1 - i) - 1, 0) for i in range(rows))
            for name, want, values in (
                ("lagged_products", lagged, {"G_d0": rows, "D_d0": other}),
                ("back_substitution", back, {"A_d0": rows, "y_d0": other}),
            ):
                total = functions[name].flops.total
                got = total.subs({s: values[s.name] for s in total.free_symbols})
                assert got == want, f"{name} at {values}: {got} != {want}"
