"""`Min` and `Max` whose order does not change over a loop's range, replaced by the side
that wins.

Working sets and footprints of triangular nests carry terms such as `Min(t, n - 1)` for
`t = 0 .. n-1`: one side is the smaller at every iteration, but sympy cannot see it (it
knows nothing of the range), so the sum over the loop stays an unevaluated `Sum` after
seconds of trying, and the report prints the summation variable. When the two sides differ
by an expression linear in the loop's counter, the difference has one sign over the whole
range if it has that sign at both ends; each end's sign is decided from what is known of
the symbols: sizes are at least 1, summation counters at least 0, and the loop runs at
least once (an empty range sums to zero whatever the summand says).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

from aiscan.algebra import SYMPY, ZERO, expand, is_poly
from aiscan.ir.nodes import LoopLike
from aiscan.ir.symbols import is_size_symbol, loop_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["resolve_extrema"]


def resolve_extrema(
    expr: sympy.Expr,
    counter: sympy.Symbol,
    trip: sympy.Expr,
    enclosing: Sequence[LoopLike] = (),
) -> sympy.Expr:
    """`expr` with each two-argument `Min`/`Max` over `counter` that keeps its order for
    `counter` in `0 .. trip-1` replaced by the side that wins there. `enclosing` are the
    loops around (their counters appear in `expr` and `trip` as loop symbols)."""
    if (is_poly(expr) and not expr.hinged) or not expr.has(sympy.Min, sympy.Max):
        return expr  # a polynomial's only extrema are its hinges, `Max(0, a)`
    facts = _facts(trip, enclosing)
    replacements: dict[sympy.Basic, sympy.Expr] = {}
    for extremum in expr.atoms(sympy.Min, sympy.Max):
        if counter not in extremum.free_symbols or len(extremum.args) != 2:
            continue
        first, second = extremum.args
        difference = expand(first - second)
        if not difference.is_polynomial(counter) or sympy.degree(difference, counter) > 1:
            continue
        signs = {
            _sign_under(expand(difference.subs(counter, end)), facts) for end in (ZERO, trip - 1)
        }
        if signs <= {0, 1}:  # first >= second over the whole range
            replacements[extremum] = second if extremum.func is sympy.Min else first
        elif signs <= {0, -1}:
            replacements[extremum] = first if extremum.func is sympy.Min else second
    return expr.xreplace(replacements) if replacements else expr


_Fact: TypeAlias = "dict[sympy.Symbol, sympy.Expr]"


def _facts(trip: sympy.Expr, enclosing: Sequence[LoopLike]) -> list[_Fact]:
    """Substitutions, each true of every iteration, that put a loop counter of unknown sign
    in terms of a nonnegative slack: the range runs at least once (`trip >= 1`), and each
    enclosing counter is at least its first value and at most its last. Each is tried on
    its own: one that proves a sign proves it everywhere."""
    facts: list[_Fact] = [{}]
    trip_fact = _trip_fact(trip)
    if trip_fact:
        facts.append(trip_fact)
    for loop in enclosing:
        var = loop_symbol(loop.var)
        last = loop.start + loop.step * (loop.trip - 1)
        low, high = (loop.start, last) if loop.step > 0 else (last, loop.start)
        for fact in ({var: low + _slack(var)}, {var: high - _slack(var)}):
            facts.append(fact)
            if trip_fact and var not in trip_fact:
                facts.append({**{k: v.subs(fact) for k, v in trip_fact.items()}, **fact})
    return facts


def _trip_fact(trip: sympy.Expr) -> _Fact:
    """`trip >= 1` as a substitution, when `trip` is `i + c` in one counter `i`."""
    unsigned = [s for s in trip.free_symbols if not (is_size_symbol(s) or s.is_nonnegative is True)]
    if len(unsigned) != 1:
        return {}
    (symbol,) = unsigned
    rest = expand(trip - symbol)
    if symbol in rest.free_symbols:
        return {}
    return {symbol: _slack(symbol) + 1 - rest}


def _sign_under(value: sympy.Expr, facts: list[_Fact]) -> int | None:
    for fact in facts:
        sign = _sign(expand(value.subs(fact)) if fact else value)
        if sign is not None:
            return sign
    return None


def _slack(symbol: sympy.Symbol) -> sympy.Symbol:
    return sympy.Symbol(f"_aiscan_slack_{symbol.name}", integer=True, nonnegative=True)


def _sign(value: sympy.Expr) -> int | None:
    """0 if `value` is zero; 1 if it is at least 0, -1 if at most 0, for every value of its
    symbols allowed (sizes at least 1, the rest at least 0), told from the signs of its
    coefficients; None when they do not tell."""
    sizes = {s: _slack(s) + 1 for s in value.free_symbols if is_size_symbol(s)}
    polynomial = expand(value.subs(sizes))
    if polynomial == 0:
        return 0
    symbols = sorted(polynomial.free_symbols, key=str)
    if any(s.is_nonnegative is not True for s in symbols):
        return None
    if not symbols:
        coefficients = [polynomial]
    else:
        try:
            coefficients = sympy.Poly(polynomial, *symbols).coeffs()
        except sympy.PolynomialError:
            return None
    if not all(c.is_Rational for c in coefficients):
        return None
    if all(c >= 0 for c in coefficients):
        return 1
    if all(c <= 0 for c in coefficients):
        return -1
    return None
