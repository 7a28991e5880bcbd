"""How expressions look in reports: sympy-parsable strings and short decimals."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

from aiscan.algebra import (
    SYMPY,
    expand,
    is_infinity,
    is_poly,
    is_quotient,
    normal,
    polynomial_text,
)
from aiscan.analysis.intensity import finite_value, size_bindings, substitute_sizes
from aiscan.analysis.polynomials import terms_of

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["count_text", "count_value", "decimal", "expression_text", "json_count", "numeric_value"]


def expression_text(expr: sympy.Expr | None) -> str | None:
    """A sympy-parsable string in the source's own names (`n/12`, `(2*N - 1)/(4*N + 2)`)."""
    if expr is None:
        return None
    if is_poly(expr) or is_quotient(expr) or is_infinity(expr):
        return str(expr)  # they keep their own text
    return _text(expr)


@lru_cache(maxsize=16384)
def _text(expr: sympy.Expr) -> str:
    fast = _polynomial_text(expr)
    return fast if fast is not None else str(expr)


def numeric_value(expr: sympy.Expr | None) -> float | None:
    """The float value of a closed expression; None if it still has symbols, is infinite,
    or is something sympy cannot evaluate."""
    if expr is None:
        return None
    return _numeric_value(expr)


@lru_cache(maxsize=16384)
def _numeric_value(expr: sympy.Expr) -> float | None:
    return finite_value(expr)


def decimal(expr: sympy.Expr | None) -> str:
    """`0.08333` for 1/12, `inf` for oo, empty when symbols remain."""
    if expr is None:
        return ""
    if is_infinity(expr):
        return "inf"
    if not is_poly(expr) and not is_quotient(expr) and expr in (sympy.oo, sympy.zoo):
        return "inf"
    value = numeric_value(expr)
    return "" if value is None else f"{value:.4g}"


# Most report expressions are polynomials with rational coefficients in plain symbols
# (`2*m*n*q`, `n**2/4 - 3*n/2 + 1/3`). sympy's printer sorts their terms through generic
# machinery that costs about half a millisecond each; `_polynomial_text` writes the very
# same string directly and returns None for anything else, which sympy prints.
# tests/test_expression_text.py holds it to `str()` on random polynomials.


def _polynomial_text(expr: sympy.Expr) -> str | None:
    if isinstance(expr, sympy.Mul):
        quotient = _quotient_text(expr)
        if quotient is not None:
            return quotient
    return _poly_text(expr)


def _poly_text(expr: sympy.Expr) -> str | None:
    """A polynomial in symbols of known kinds, written as `aiscan.algebra` writes a `Poly`;
    None for anything else."""
    poly = normal(expr)
    return polynomial_text(poly) if is_poly(poly) else None


def _quotient_text(expr: sympy.Mul) -> str | None:
    """An intensity as `_cancelled` builds it: `(p + 1)/20`, `(n + 3)/(4*n + 20)`,
    `n/(4*n + 20)`; None for other products."""
    inverses = [
        a
        for a in expr.args
        if isinstance(a, sympy.Pow)
        and a.exp == -1
        and isinstance(a.base, (sympy.Add, sympy.Integer))
    ]
    if len(inverses) != 1:
        return None
    (inverse,) = inverses
    rest = [a for a in expr.args if a is not inverse]
    if isinstance(inverse.base, sympy.Add):
        below = _poly_text(inverse.base)
        if below is None:
            return None
        below = f"({below})"
    else:
        below = str(inverse.base)
    if len(rest) == 1 and isinstance(rest[0], sympy.Add):
        above = _poly_text(rest[0])
        return None if above is None else f"({above})/{below}"
    if any(isinstance(a, sympy.Mul) for a in rest):
        return None  # an unevaluated product nested in another: sympy adds parentheses
    term = normal(sympy.Mul(*rest, evaluate=False) if len(rest) > 1 else rest[0])
    if not is_poly(term) or len(term.terms) != 1:
        return None
    ((monomial, coefficient),) = term.terms.items()
    if not monomial or coefficient.denominator != 1:
        return None
    return f"{term}/{below}"


def count_value(expr: sympy.Expr, sizes: Mapping[str, int]) -> sympy.Expr | None:
    """A count (FLOPs, bytes) at the given sizes; None when none of its symbols is given.
    The result keeps the symbols no size names (`2000*m` with only n=1000)."""
    if not any(getattr(s, "name", None) in sizes for s in expr.free_symbols):
        return None
    if terms_of(expr) is not None:
        # A polynomial's expanded form is canonical, so simplifying before expanding (tens
        # of milliseconds where symbols remain) changes nothing.
        return expand(expr.subs(size_bindings(expr, sizes)))
    return expand(substitute_sizes(expr, sizes))


def json_count(expr: sympy.Expr, sizes: Mapping[str, int]) -> int | float | None:
    """`count_value` for JSON: an exact integer, a float for fractional bounds, or None."""
    value = count_value(expr, sizes)
    if value is None or value.free_symbols:
        return None
    if value.is_Integer:
        return int(value)
    return numeric_value(value)


def count_text(expr: sympy.Expr, sizes: Mapping[str, int]) -> str:
    """` = 2,000,000` after a count with given sizes (digits grouped), `` without them."""
    value = count_value(expr, sizes)
    if value is None:
        return ""
    if value.is_Integer:
        return f" = {int(value):,}"
    shown = decimal(value)
    return f" = {shown or expression_text(value)}"
