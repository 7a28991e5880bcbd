"""`if (c) continue;` in a for loop: the rest of the body counted as the branch `!c`,
exact for index conditions, equal to brute-force iteration at every size."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from aiscan.ir.symbols import size_symbol
from aiscan.pipeline import PipelineOptions, analyze_text

CONDITIONS: dict[str, Callable[[int, int, int], bool]] = {
    "j == i": lambda i, j, n: j == i,
    "j < i": lambda i, j, n: j < i,
    "i + j == n - 1": lambda i, j, n: i + j == n - 1,
    "j > i + 1 || j == 0": lambda i, j, n: j > i + 1 or j == 0,
}


def _function(source: str) -> Any:
    """The one function of a C source, analyzed."""
    analysis = analyze_text(source, "k.c", PipelineOptions()).analysis
    assert analysis is not None
    (function,) = analysis.functions
    return function


@pytest.mark.parametrize("condition", CONDITIONS)
def test_continue_on_an_index_condition_counts_what_runs(condition: str) -> None:
    source = (
        "void f(int n, double *restrict a, const double *restrict b) {\n"
        "  for (int i = 0; i < n; i++)\n"
        "    for (int j = 0; j < n; j++) {\n"
        f"      if ({condition}) continue;\n"
        "      a[i] = a[i] + 2.0 * b[j];\n"
        "    }\n"
        "}\n"
    )
    function = _function(source)
    assert not [u for u in function.unknowns if "continue" in u.message]
    test = CONDITIONS[condition]
    for n in range(1, 9):
        runs = sum(1 for i in range(n) for j in range(n) if not test(i, j, n))
        got = function.flops.total.subs(size_symbol("n"), n)
        assert got == 2 * runs, f"n = {n}"


def test_continue_elsewhere_stays_an_unknown() -> None:
    """Only `if (c) continue;` among the loop's own statements is rewritten."""
    source = (
        "void f(int n, double *restrict a) {\n"
        "  for (int i = 0; i < n; i++) {\n"
        "    if (i > 2) { a[i] = 1.0; continue; }\n"
        "    a[i] = a[i] * 2.0;\n"
        "  }\n"
        "}\n"
    )
    function = _function(source)
    assert any("continue" in u.message for u in function.unknowns)
    assert function.flops.total == size_symbol("n")  # counted as if never taken, and said
