"""Exact unions of one array's references for the cache model, where the box rules only
bound them: a triangle's working set is a triangle.

LU's row step touches the upper triangle of the rows above it through `A[k][j]` for
`k < j < i` and for `k < i <= j`; the boxes of those references cover whole rows, and
their sum counts the overlap twice. At the sizes the model is asked at, the integer sets of
`polyhedral` count the union exactly for any value of the enclosing loop's variable; as that
variable moves the count is a polynomial of degree at most the number of loops inside, so
it is interpolated from that many values plus one and checked at others, as the
compulsory counts are over the sizes. Only one enclosing variable is handled, and only
where every reference runs at the sampled values; elsewhere the caller keeps its bound.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, ZERO, constant, expand, is_poly, normal
from aiscan.analysis.intensity import finite_value
from aiscan.analysis.polyhedral import PolyReference, interpolate, touched_at
from aiscan.ir.nodes import Loop
from aiscan.ir.symbols import loop_symbol, size_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["ExactUnion", "exact_union"]

MAX_SAMPLES = 8
"""Interpolation points and checks together: past this many isl counts it is not worth it."""


@dataclass(frozen=True, slots=True)
class ExactUnion:
    """A union's count as a polynomial in the enclosing loop's variable (sizes fixed), and
    whether it is exact at every value of it (False: an upper bound at the values where
    some reference does not run, exact elsewhere)."""

    count: sympy.Expr
    exact: bool


def exact_union(
    references: Sequence[PolyReference],
    outer: Sequence[Loop],
    sizes: Mapping[str, int],
) -> ExactUnion | None:
    """The distinct elements `references` touch for one iteration of the `outer` loops,
    at `sizes`; None where it cannot be counted this way (see the module docstring)."""
    used = tuple(_used_outer(references, outer))
    return _exact_union(tuple(references), used, tuple(sorted(sizes.items())))


@lru_cache(maxsize=1024)
def _exact_union(
    references: tuple[PolyReference, ...],
    used: tuple[Loop, ...],
    sizes: tuple[tuple[str, int], ...],
) -> ExactUnion | None:
    """Memoized: every cache level asks for the same working sets."""
    values = {size_symbol(name): value for name, value in sizes}
    if len(used) > 1:
        return None
    if not used:
        count = touched_at(references, values)
        return None if count is None else ExactUnion(constant(count), True)
    (loop,) = used
    var = loop_symbol(loop.var)
    start = finite_value(_at(loop.start, values))
    trip = finite_value(_at(loop.trip, values))
    if start is None or trip is None or trip < 1 or not float(start).is_integer():
        return None
    first, step = int(start), loop.step
    points = [first + step * t for t in range(int(trip))]
    degree = max(len(r.loops) for r in references)
    running = [p for p in _spread(points, MAX_SAMPLES) if _all_run(references, values, var, p)]
    if len(running) < degree + 3:
        return None
    fit, checks = running[:: max(1, len(running) // (degree + 1))][: degree + 1], running
    counts = {p: touched_at(references, {**values, var: p}) for p in {*fit, *checks}}
    if any(c is None for c in counts.values()):
        return None
    polynomial = _interpolated(var, [(p, counts[p]) for p in fit])  # type: ignore[misc]
    if any(_value(polynomial, var, p) != counts[p] for p in checks):
        return None
    exact = True
    for end in {points[0], points[-1]} - set(counts):
        actual = touched_at(references, {**values, var: end})
        if actual is None or _value(polynomial, var, end) < actual:
            return None
        exact = exact and _value(polynomial, var, end) == actual
    return ExactUnion(polynomial, exact)


def _used_outer(references: Sequence[PolyReference], outer: Sequence[Loop]) -> list[Loop]:
    """The loops of `outer` whose variables the references' indices or loops use."""
    symbols: set[object] = set()
    for reference in references:
        assert reference.access.index is not None
        for expr in (*reference.access.index, *reference.guards):
            symbols |= expr.free_symbols
        for inner in reference.loops:
            symbols |= inner.start.free_symbols | inner.trip.free_symbols
    return [loop for loop in outer if loop_symbol(loop.var) in symbols]


def _at(expr: sympy.Expr, values: Mapping[sympy.Symbol, int]) -> sympy.Expr:
    bound = {s: v for s, v in values.items() if s in expr.free_symbols}
    return expand(expr.subs(bound)) if bound else expr


def _spread(points: Sequence[int], count: int) -> list[int]:
    """Up to `count` of `points`, evenly spread, the first and last included."""
    if len(points) <= count:
        return list(points)
    last = len(points) - 1
    return sorted({points[round(k * last / (count - 1))] for k in range(count)})


def _all_run(
    references: Sequence[PolyReference],
    values: Mapping[sympy.Symbol, int],
    var: sympy.Symbol,
    point: int,
) -> bool:
    at = {**values, var: point}
    return all((touched_at([r], at) or 0) >= 1 for r in references)


def _interpolated(var: sympy.Symbol, samples: Sequence[tuple[int, int]]) -> sympy.Expr:
    """The polynomial through `samples` (Lagrange, exact rationals): on coefficients, a
    `Poly`, where `var` is one (a loop variable is); multiplied out in sympy otherwise."""
    variable = normal(var)
    if is_poly(variable):
        return interpolate([variable], {(x,): y for x, y in samples})
    total = ZERO
    for j, (xj, yj) in enumerate(samples):
        term = sympy.Rational(yj)
        for k, (xk, _) in enumerate(samples):
            if k != j:
                term = term * (var - xk) / sympy.Rational(xj - xk)
        total = total + term
    return expand(total)


def _value(polynomial: sympy.Expr, var: sympy.Symbol, point: int) -> Fraction:
    return Fraction(str(expand(polynomial.subs(var, point))))
