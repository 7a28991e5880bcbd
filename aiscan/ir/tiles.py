"""Tiled loops: a tile loop and the point loop that runs over one tile.

A tile loop takes `s + B*k` for `k < ceiling((N - s)/B)` (`for (ii = s; ii < N;
ii += B)`, B a positive size or constant), and its point loop runs from `s + B*k` for
`Min(B, N - s - B*k)` iterations (`for (i = ii; i < min(ii + B, N); i++)`). The point
ranges partition `[s, N)`: every `i` once, in increasing order when nothing sits between
the two loops. `merged_tiles` then writes the pair as the one loop it is (same
iterations, same order, so every count and model holds unchanged); where other loops
sit between them (`ii, jj, i, j`), `analysis.domain.untiled` uses the partition for sums
and footprints, whose values do not depend on the order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, expand, is_poly, symbol
from aiscan.ir.nodes import Branch, Loop, LoopLike, Node, Statement
from aiscan.ir.symbols import loop_symbol
from aiscan.substitution import substituted

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["merged_tiles", "tile_cover"]

_K = symbol("_aiscan_tile", "trip")


def merged_tiles(loop: Loop) -> Loop:
    """`loop` itself, or, when it is a tile loop whose whole body is its point loop and
    nothing inside uses the tile variable otherwise, the point loop over `[s, N)`."""
    if loop.unknowns or len(loop.body) != 1 or not isinstance(loop.body[0], Loop):
        return loop
    point = loop.body[0]
    covered = tile_cover(loop, point)
    if covered is None or loop_symbol(loop.var) in _symbols(point.body):
        return loop
    low, end = covered
    return Loop(
        point.var, low, 1, expand(end - low), point.body, loop.span, point.unknowns, loop.parallel
    )


def _symbols(body: tuple[Node, ...]) -> set[sympy.Basic]:
    found: set[sympy.Basic] = set()
    for node in body:
        if isinstance(node, Loop):
            found |= node.start.free_symbols | node.trip.free_symbols | _symbols(node.body)
        elif isinstance(node, Branch):
            if node.guard is not None:
                found |= node.guard.free_symbols
            found |= node.taken_fraction.free_symbols | _statement_symbols(node.condition)
            found |= _symbols(node.then_body) | _symbols(node.else_body)
        else:
            found |= _statement_symbols(node)
    return found


def _statement_symbols(statement: Statement) -> set[sympy.Basic]:
    found: set[sympy.Basic] = set()
    for access in statement.accesses:
        for expr in access.index or ():
            found |= expr.free_symbols
    return found


def tile_cover(tile: LoopLike, point: LoopLike) -> tuple[sympy.Expr, sympy.Expr] | None:
    """`(s, N)` when `point` runs over tile `k` of `[s, N)` at iteration `k` of `tile`
    (see the module docstring), else None."""
    tile_var = loop_symbol(tile.var)
    # Most loop pairs are no tile pair; these two tests, cheap beside the substitutions
    # below, give the same None: the point must start at the tile variable, and
    # substitution cannot make a `Min` where there is none.
    if point.step != 1 or tile_var not in point.start.free_symbols:
        return None
    if is_poly(point.trip) and not point.trip.hinged:
        return None  # a polynomial holds no `Min` (asking sympy's `has` imported it)
    if not point.trip.has(sympy.Min):
        return None
    value = tile.start + tile.step * _K
    start = expand(substituted(point.start, {tile_var: value}))
    size = start.coeff(_K, 1)
    low = expand(start - size * _K)
    if _K in size.free_symbols or _K in low.free_symbols:
        return None
    if not (size.is_positive and size.is_integer):
        return None
    trip = substituted(point.trip, {tile_var: value})
    if not isinstance(trip, sympy.Min) or len(trip.args) != 2:
        return None
    ends = [expand(start + a) for a in trip.args]
    full = expand(start + size)
    if ends[0] == full:
        end = ends[1]
    elif ends[1] == full:
        end = ends[0]
    else:
        return None
    if _K in end.free_symbols:
        return None
    if not _counts_tiles(tile.trip, expand(end - low), size):
        return None
    return low, end


def _counts_tiles(trip: sympy.Expr, length: sympy.Expr, size: sympy.Expr) -> bool:
    """`trip` is ceiling(length/size), written as a loop counting tiles may write it:
    `ceiling`, `-floor(-length/size)` (Python's `-(-n // B)`), or
    `floor((length - 1)/size) + 1` (`(n + B - 1) // B`), equal for an integer length and
    a positive integer size."""
    forms = (
        sympy.ceiling(expand(length / size)),
        -sympy.floor(expand(-length / size)),
        sympy.floor(expand((length - 1) / size)) + 1,
    )
    return any(expand(trip - form) == 0 for form in forms)
