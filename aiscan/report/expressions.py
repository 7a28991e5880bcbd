"""How expressions look in reports: sympy-parsable strings and short decimals."""

from __future__ import annotations

from functools import lru_cache

import sympy

__all__ = ["decimal", "expression_text", "numeric_value"]


def expression_text(expr: sympy.Expr | None) -> str | None:
    """A sympy-parsable string in the source's own names (`n/12`, `(2*N - 1)/(4*N + 2)`)."""
    if expr is None:
        return None
    return _text(expr)


@lru_cache(maxsize=16384)
def _text(expr: sympy.Expr) -> str:
    return str(expr)


def numeric_value(expr: sympy.Expr | None) -> float | None:
    """The float value of a closed expression, None if it still has symbols or is infinite."""
    if expr is None or expr.free_symbols:
        return None
    value = complex(sympy.N(expr))
    if value.imag or value.real in (float("inf"), float("-inf")) or value.real != value.real:
        return None
    return value.real


def decimal(expr: sympy.Expr | None) -> str:
    """`0.08333` for 1/12, `inf` for oo, empty when symbols remain."""
    if expr is None:
        return ""
    if expr in (sympy.oo, sympy.zoo):
        return "inf"
    value = numeric_value(expr)
    return "" if value is None else f"{value:.4g}"
