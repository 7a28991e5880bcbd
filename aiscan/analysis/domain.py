"""Exact sums over iteration domains (rectangular, triangular, strided).

A loop runs `var = start + step*t` for `t = 0 .. trip-1`. Summing a polynomial in `var` over
that range uses Faulhaber's formulas (cached per power), which is exact and much faster
than `sympy.summation`; anything non-polynomial falls back to `sympy.summation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from functools import cache, lru_cache
from math import comb
from typing import TYPE_CHECKING, Any, NamedTuple

from aiscan.algebra import SYMPY, ZERO, Poly, constant, expand, is_poly, normal, symbol
from aiscan.analysis.extrema import resolve_extrema
from aiscan.ir.nodes import LoopLike
from aiscan.ir.symbols import loop_symbol
from aiscan.ir.tiles import tile_cover

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = [
    "Bounds",
    "LoopLike",
    "bounds_of",
    "sum_over_loop",
    "sum_over_loops",
    "untiled",
]


class Bounds(NamedTuple):
    """A loop's iteration range alone: cheap to hash, so sums over it can be memoized."""

    var: str
    start: sympy.Expr
    step: int
    trip: sympy.Expr


def bounds_of(loops: Sequence[LoopLike]) -> tuple[Bounds, ...]:
    return tuple(Bounds(loop.var, loop.start, loop.step, loop.trip) for loop in loops)


_T = symbol("_aiscan_t", "trip")


@cache
def _bernoulli(m: int) -> Fraction:
    """The Bernoulli number B_m, with B_1 = -1/2 (the convention of Bernoulli polynomials)."""
    if m == 0:
        return Fraction(1)
    return -sum((comb(m + 1, k) * _bernoulli(k) for k in range(m)), Fraction(0)) / (m + 1)


@cache
def _power_sum_coefficients(power: int) -> tuple[Fraction, ...]:
    """sum_{t=0}^{trip-1} t**power as a polynomial in the trip count (Faulhaber's formula,
    `(B_{p+1}(trip) - B_{p+1}) / (p+1)`), its coefficients highest power first, down to the
    linear one (the sum has no constant term)."""
    return tuple(comb(power + 1, k) * _bernoulli(k) / (power + 1) for k in range(power + 1))


@cache
def _iteration(level: int) -> Poly:
    """The summation variable of the loop at `level` (0 outermost) of a nest. One per
    level: a sum with no closed form stays a `Sum` over its variable, and an outer loop's
    substitution into that sum's bounds must not capture it (with one variable for all,
    `Sum(f, (t, 0, 3*t))` came out of `j <= i` under `i += 3`, a wrong count)."""
    return symbol(f"_aiscan_t{level}", "trip")


def sum_over_loop(
    expr: sympy.Expr, loop: LoopLike, level: int = 0, enclosing: Sequence[LoopLike] = ()
) -> sympy.Expr:
    """`expr` summed over every iteration of `loop` (its variable bound by the loop), the
    loop being at `level` of its nest, inside the loops `enclosing` (outermost first).
    Memoized on the bounds: the cache model sums the same footprints over the same loops
    at every size of a plot's size path."""
    (bounds,) = bounds_of((loop,))
    return _sum_over_one(expr, bounds, level, bounds_of(enclosing))


@lru_cache(maxsize=8192)
def _sum_over_one(
    expr: sympy.Expr, loop: Bounds, level: int, enclosing: tuple[Bounds, ...]
) -> sympy.Expr:
    var = loop_symbol(loop.var)
    if var not in expr.free_symbols:
        return expr * loop.trip
    over_tiles = _sum_over_tiles(expr, loop)
    if over_tiles is not None:
        return over_tiles
    t = _iteration(level)
    shifted = expand(expr.subs(var, loop.start + loop.step * t))
    shifted = resolve_extrema(shifted, t, loop.trip, enclosing)
    if is_poly(shifted) and is_poly(loop.trip):
        return _power_sums(shifted, t, loop.trip)
    try:
        poly = sympy.Poly(shifted, t)
    except sympy.PolynomialError:
        poly = None
    if poly is None or not poly.domain.is_Exact or _inside_a_function(t, shifted):
        return normal(sympy.summation(shifted, (t, 0, loop.trip - 1)))
    total = ZERO
    for (power,), coefficient in poly.terms():
        total += coefficient * _power_sum_at(power, loop.trip)
    return expand(total)


def _inside_a_function(symbol: sympy.Symbol, expr: sympy.Expr) -> bool:
    return any(symbol in f.free_symbols for f in expr.atoms(sympy.Function))


def sum_over_loops(expr: sympy.Expr, loops: Sequence[LoopLike]) -> sympy.Expr:
    """`expr` summed over a nest, `loops` given outermost first (memoized on the bounds)."""
    return _sum_over_bounds(expr, bounds_of(loops))


@lru_cache(maxsize=8192)
def _sum_over_bounds(expr: sympy.Expr, bounds: tuple[Bounds, ...]) -> sympy.Expr:
    bounds = untiled(bounds, frozenset(expr.free_symbols))
    fast = _polynomial_sum(expr, bounds)
    if fast is not None:
        return fast
    for level in reversed(range(len(bounds))):
        expr = sum_over_loop(expr, bounds[level], level, bounds[:level])
    return expr


def _polynomial_sum(expr: sympy.Expr, bounds: tuple[Bounds, ...]) -> Poly | None:
    """The sum when the summand and every start and trip count are polynomials (rectangular
    and triangular nests): Faulhaber's sums on `Poly`, innermost loop first. None otherwise
    (`floor`, `ceiling`, unknown functions), for `sum_over_loop` to handle."""
    parts = [normal(part) for part in (expr, *(b.start for b in bounds), *(b.trip for b in bounds))]
    if not all(is_poly(part) for part in parts):
        return None
    summand, *rest = parts
    starts, trips = rest[: len(bounds)], rest[len(bounds) :]
    for position in reversed(range(len(bounds))):
        var = loop_symbol(bounds[position].var)
        if summand.hinge_holds(var):
            return None  # `Max(0, c - i)` is no polynomial in i
        if summand.degree(var) <= 0:
            summand = summand * trips[position]
            continue
        shifted = summand.subs(var, starts[position] + bounds[position].step * _T)
        summand = _power_sums(shifted, _T, trips[position])
    return summand if is_poly(summand) else None


def _power_sums(summand: Poly, t: Poly, trip: Any) -> Any:
    """`summand`, a polynomial in `t`, summed over `t = 0 .. trip-1`."""
    total = ZERO
    for power, coefficient in summand.by_power(t).items():
        total = total + coefficient * _power_sum_at(power, trip)
    return total


def _power_sum_at(power: int, trip: Any) -> Any:
    """sum_{t=0}^{trip-1} t**power, by Horner's rule in `trip`."""
    value: Any = ZERO
    for coefficient in _power_sum_coefficients(power):
        value = (value + constant(coefficient)) * trip
    return value


def untiled(bounds: tuple[Bounds, ...], uses: frozenset[sympy.Basic]) -> tuple[Bounds, ...]:
    """The nest with each tile loop dropped and its point loop running over the whole range
    the tiles cover, for a summand or an index that uses neither the tile loop's variable
    (`uses` holds its symbols) nor anything else that does.

    A tile loop takes `s + B*k` for `k < ceiling((N - s)/B)` (`for (ii = s; ii < N;
    ii += B)`, B a positive size or constant), and its point loop runs from `s + B*k` for
    `Min(B, N - s - B*k)` iterations (`for (i = ii; i < min(ii + B, N); i++)`). The point
    ranges partition `[s, N)` exactly, so a sum or a union over the pair equals that over
    `i` from `s` to `N` (both empty when `N <= s`). Only the order of the iterations
    differs: first touch and the cache model must not use this (docs/model.md)."""
    changed = True
    while changed:
        changed = False
        # Each loop's symbols once a pass (sympy walks an expression for them every time).
        symbols = [loop.start.free_symbols | loop.trip.free_symbols for loop in bounds]
        for level, tile in enumerate(bounds):
            var = loop_symbol(tile.var)
            if var in uses:
                continue
            users = [other for other, free in enumerate(symbols) if other != level and var in free]
            if len(users) != 1:
                continue
            (point_level,) = users
            covered = tile_cover(tile, bounds[point_level])
            if covered is None:
                continue
            low, end = covered
            point = Bounds(bounds[point_level].var, low, 1, expand(end - low))
            bounds = tuple(
                point if other == point_level else loop
                for other, loop in enumerate(bounds)
                if other != level
            )
            changed = True
            break
    return bounds


def _sum_over_tiles(expr: sympy.Expr, loop: LoopLike) -> sympy.Expr | None:
    """`a + b*Min(B, N - s - B*k)` summed over a tile loop `k < ceiling((N - s)/B)`, `a`
    and `b` free of it: `a*trip + b*(N - s)`, the tiles' lengths adding up to the range
    (what a tile's footprint or trip count sums to over the tiles; `untiled`). None for
    any other summand."""
    if is_poly(expr):
        return None  # no `Min` in a polynomial (its hinges are `Max(0, a)`): not a tile
    var = loop_symbol(loop.var)
    tiles = [m for m in expr.atoms(sympy.Min) if var in m.free_symbols]
    if len(tiles) != 1:
        return None
    (tile,) = tiles
    sizes = [a for a in tile.args if var not in a.free_symbols]
    if len(sizes) != 1:
        return None
    # `tile` as the trip of a point loop from `B*k` (s taken as 0: only N - s matters).
    point = Bounds("_aiscan_point", sizes[0] * (var - loop.start) / loop.step, 1, tile)
    covered = tile_cover(Bounds(loop.var, loop.start, loop.step, loop.trip), point)
    if covered is None:
        return None
    low, end = covered
    placeholder = sympy.Dummy("tile")
    linear = expand(expr.subs(tile, placeholder))
    if var in linear.free_symbols or not linear.is_polynomial(placeholder):
        return None
    if sympy.degree(linear, placeholder) > 1:
        return None
    slope = linear.coeff(placeholder, 1)
    constant = expand(linear - slope * placeholder)
    return expand(constant * loop.trip + slope * (end - low))
