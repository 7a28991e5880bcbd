"""Integers too large for any size or index (2**64 or more) are unknown, never computed.

Without the bound `10**10**10` in a loop header made the analysis build a number of ten
billion digits, and a long literal made Python refuse to print it ("internal error").
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.frontends.c.literals import integer_literal
from aiscan.frontends.python.evaluator import _integer_operator
from aiscan.frontends.python.values import Integer
from aiscan.pipeline import PipelineOptions, lower_source

HUGE_HEX = "0x" + "f" * 5000
PYTHON_HEAD = (
    'import numpy as np\nfrom jaxtyping import Float64\n\ndef f(y: Float64[np.ndarray, "n"]):\n'
)


def analyze(text: str, path: str) -> FunctionAnalysis:
    module = lower_source(text, path, PipelineOptions())
    (function,) = analyze_module(module, AnalysisOptions()).functions
    return function


def c_loop(bound: str) -> FunctionAnalysis:
    text = f"void f(double *a) {{ for (int i = 0; i < {bound}; i++) a[i] = 2.0 * a[i]; }}\n"
    return analyze(text, "k.c")


def python_loop(bound: str) -> FunctionAnalysis:
    return analyze(
        PYTHON_HEAD + f"    for i in range({bound}):\n        y[0] = y[0] * 2.0\n", "k.py"
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("18446744073709551615", 2**64 - 1),
        ("0xFFFFFFFFFFFFFFFFull", 2**64 - 1),
        ("18446744073709551616", None),
        ("0x10000000000000000", None),
        ("9" * 5000, None),
        (HUGE_HEX, None),
        ("0" + "7" * 30, None),
    ],
)
def test_c_literals_stop_at_2_to_the_64(text: str, value: int | None) -> None:
    assert integer_literal(text) == value


@pytest.mark.parametrize(
    ("bound", "flops"), [("(1 << 10)", 1024), ("(4096 >> 2)", 1024), ("1000", 1000)]
)
def test_c_bounds_within_the_limit_are_exact(bound: str, flops: int) -> None:
    result = c_loop(bound)
    assert result.flops.total == flops
    assert not result.unknowns


@pytest.mark.parametrize(("bound", "flops"), [("2**10", 1024), ("4**31 - 4**31 + 7", 7)])
def test_python_bounds_within_the_limit_are_exact(bound: str, flops: int) -> None:
    result = python_loop(bound)
    assert result.flops.total == flops
    assert not result.unknowns


@pytest.mark.parametrize(
    ("loop", "bound", "line"),
    [
        (c_loop, "(1 << 64)", 1),
        (c_loop, "(1 << 4000000000)", 1),
        (c_loop, "(8 >> -1)", 1),
        (c_loop, HUGE_HEX, 1),
        (python_loop, "10**10**10", 5),
        (python_loop, "2**64", 5),
        (python_loop, "2**70 - 2**69", 5),
        (python_loop, HUGE_HEX, 5),
    ],
    ids=lambda value: value[:20] if isinstance(value, str) else None,
)
def test_bounds_over_the_limit_are_a_located_unknown(
    loop: Callable[[str], FunctionAnalysis], bound: str, line: int
) -> None:
    start = time.monotonic()
    result = loop(bound)
    assert time.monotonic() - start < 10, "the bound must not be computed"
    symbol = f"trip_L{line}"
    assert result.flops.total == sympy.Symbol(symbol, integer=True, nonnegative=True)
    (unknown,) = result.unknowns
    assert (unknown.span.line, unknown.symbol) == (line, symbol)
    assert "cannot derive the trip count" in unknown.message


def test_python_integer_arithmetic_says_why_a_value_is_unknown() -> None:
    n = sympy.Symbol("n", integer=True, positive=True)
    ten = Integer(sympy.Integer(10), "10")
    assert _integer_operator("Power", ten, Integer(sympy.Integer(19), "19"), "t").value == 10**19
    too_large = _integer_operator("Power", ten, Integer(sympy.Integer(10**10), "e"), "t")
    assert too_large.value is None
    assert too_large.unknown_because == "is 2**64 or more: larger than any size or index"
    product = _integer_operator(
        "Multiply", Integer(2**40 * n, "a"), Integer(sympy.Integer(2**30), "b"), "a * b"
    )
    assert (product.value, product.unknown_because) == (None, too_large.unknown_because)
    degree = _integer_operator("Power", Integer(n, "n"), Integer(sympy.Integer(65), "65"), "t")
    assert (degree.value, degree.unknown_because) == (None, "has a degree over 64")
    assert (
        _integer_operator("Power", Integer(n, "n"), Integer(sympy.Integer(3), "3"), "t").value
        == n**3
    )
    summed = _integer_operator("Add", too_large, Integer(sympy.Integer(1), "1"), "t + 1")
    assert summed.unknown_because == too_large.unknown_because


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (
            "    for i in range(10**10**10):\n        y[0] = y[0] * 2.0\n",
            "(`10**10**10` is 2**64 or more: larger than any size or index)",
        ),
        (
            "    k = 3\n    for j in range(4):\n        k = k + j\n"
            "    for i in range(k):\n        y[0] = y[0] * 2.0\n",
            "(`k` is an integer whose value varies)",
        ),
        ("    for x in reversed(y):\n        y[0] = y[0] * 2.0\n", "`reversed(y)`; named"),
    ],
)
def test_python_loop_message_says_why_the_bound_is_unknown(body: str, why: str) -> None:
    (unknown,) = analyze(PYTHON_HEAD + body, "k.py").unknowns
    assert unknown.message.startswith("cannot derive the trip count of the loop over `")
    assert why in unknown.message


def test_python_literals_over_the_limit_are_not_read_as_steps_axes_or_exponents() -> None:
    """Every reader of a literal gets the bound: a slice step, a reduction axis, a power."""
    source = (
        PYTHON_HEAD
        + f"    y[::{HUGE_HEX}] = y[::{HUGE_HEX}] * 2.0\n\n"
        + 'def g(x: Float64[np.ndarray, "n m"]):\n'
        + f"    return x.sum(axis={HUGE_HEX})\n\n"
        + 'def h(x: Float64[np.ndarray, "n"], y: Float64[np.ndarray, "n"]):\n'
        + f"    y[:] = x ** {HUGE_HEX}\n"
    )
    module = lower_source(source, "k.py", PipelineOptions())
    functions = {f.function.name: f for f in analyze_module(module, AnalysisOptions()).functions}
    steps = [u.message for u in functions["f"].unknowns]
    assert steps == ["slice step must be a nonzero integer literal"] * 2
    (axis,) = functions["g"].unknowns
    assert axis.span.line == 8
    assert functions["h"].flops.special == sympy.Symbol("n", integer=True, positive=True)


def test_python_module_constant_over_the_limit_is_an_unknown_value_not_a_size() -> None:
    """`N = 0xfff...f` at module level was an internal error (Python refuses to print it)."""
    source = (
        f"import numpy as np\nN = {HUGE_HEX}\nM = 0x10\n\n"
        "def f(y: \"Float64[np.ndarray, 'n']\"):\n"
        "    for i in range(N):\n        y[0] = y[0] * 2.0\n"
    )
    module = lower_source(source, "k.py", PipelineOptions())
    assert module.size_defaults == (("M", 16),)
    (function,) = analyze_module(module, AnalysisOptions()).functions
    (unknown,) = function.unknowns
    assert (unknown.span.line, unknown.symbol) == (6, "trip_L6")
    assert "(`N` is 2**64 or more: larger than any size or index)" in unknown.message
