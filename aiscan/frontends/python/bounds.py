"""`min` and `max` in `range` bounds: `range(i, min(i + B, n))`, `range(max(0, i - 1), n)`.

The point loop of a tile loop, `range(ii, min(ii + B, n))` under `range(s, n, B)`, is one
loop of `Min(B, n - ii)` iterations (`tile_point_trip`), as C's frontend lowers the pair.
Anywhere else each argument of the `min`/`max` is one alternative bound, taken where it is
the smallest (largest): `min(a, b)` is `a` where `a <= b` and `b` where `a > b`. The loop is
lowered once per alternative, under a branch whose guard is that condition; where the guard
is affine in loop variables the analysis counts each side's iterations exactly (as for C's
`if`), and otherwise the branch keeps a named fraction (docs/python.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.ir.nodes import Loop, LoopLike
from aiscan.ir.tiles import tile_cover

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader

__all__ = ["Choice", "bound_choices", "tile_point_trip"]

Choice = tuple[sympy.Expr, tuple[sympy.Basic, ...]]
"""A bound and the conditions under which the bound is that value."""


def bound_choices(reader: ExpressionReader, node: cst.BaseExpression) -> list[Choice] | None:
    """The alternatives of one bound: `[(value, ())]` for a plain integer expression, one
    per argument for `min(...)`/`max(...)` of integer expressions; None (with the reader's
    note) when a bound is not an integer expression."""
    if isinstance(node, cst.Call) and reader.names.canonical(node.func) in (
        "builtins.min",
        "builtins.max",
    ):
        arguments = [a.value for a in node.args if a.keyword is None and not a.star]
        if len(arguments) >= 2 and len(arguments) == len(node.args):
            values = [reader.integer(a) for a in arguments]
            if any(v is None for v in values):
                return None
            smallest = reader.names.canonical(node.func) == "builtins.min"
            return _choices([v for v in values if v is not None], smallest)
    value = reader.integer(node)
    return None if value is None else [(value, ())]


def _choices(values: list[sympy.Expr], smallest: bool) -> list[Choice]:
    """Argument `k` is chosen where it beats every earlier argument strictly and every later
    one or ties (Python returns the first of equal values): the conditions partition."""
    found: list[Choice] = []
    for k, value in enumerate(values):
        conditions: list[sympy.Basic] = []
        possible = True
        for other_index, other in enumerate(values):
            if other_index == k:
                continue
            strict = other_index < k
            if smallest:
                relation = sympy.Lt(value, other) if strict else sympy.Le(value, other)
            else:
                relation = sympy.Gt(value, other) if strict else sympy.Ge(value, other)
            if relation is sympy.false:
                possible = False
                break
            if relation is not sympy.true:
                conditions.append(relation)
        if possible:
            found.append((value, tuple(conditions)))
    return found


def tile_point_trip(
    reader: ExpressionReader,
    arguments: Sequence[cst.BaseExpression],
    enclosing: Sequence[LoopLike],
) -> sympy.Expr | None:
    """`Min(B, n - ii)`, the trip of `range(ii, min(ii + B, n))` (either order, `ii + B`
    through a variable too) where it runs over one tile of a loop in `enclosing`
    (`ir.tiles.tile_cover`: `range(s, n, B)`, the same `n` and `B`); None otherwise.

    Why not the alternatives: over the tiles, `ii + B` is chosen floor((n - s)/B) times and
    `n` the rest, which no polynomial in the tile count fits (a named fraction would stay).
    The `Min` trip is what C's `for (i = ii; i < MIN(ii + B, n); i++)` gives, so
    `ir.tiles.merged_tiles` and `analysis.domain.untiled` count the pair as the untiled range
    `[s, n)`, exactly; and a tile's point loop always runs, so it needs no guard."""
    if len(arguments) != 2 or not _is_min_of_two(reader, arguments[1]):
        return None
    start_node, stop = arguments
    if isinstance(start_node, cst.Call) and reader.names.canonical(start_node.func) in (
        "builtins.min",
        "builtins.max",
    ):
        return None
    assert isinstance(stop, cst.Call)
    start = reader.integer(start_node)
    ends = [reader.integer(a.value) for a in stop.args]
    if start is None or any(end is None for end in ends):
        return None
    trip = sympy.Min(*(sympy.expand(end - start) for end in ends if end is not None))
    point = Loop("_aiscan_point", sympy.expand(start), 1, trip, (), reader.span(stop))
    if any(tile_cover(tile, point) is not None for tile in enclosing):
        return trip
    return None


def _is_min_of_two(reader: ExpressionReader, node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.Call)
        and reader.names.canonical(node.func) == "builtins.min"
        and len(node.args) == 2
        and all(a.keyword is None and not a.star for a in node.args)
    )
