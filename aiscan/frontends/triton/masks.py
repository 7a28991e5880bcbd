"""Masks as loop bounds.

`offsets < n` with `offsets = pid * BLOCK + tl.arange(0, BLOCK)` keeps the lanes
`min(BLOCK, n - pid*BLOCK)` of each program. Written as a guard, the integer sets count it
only for small block constants (their fitted periods stop at 256); written as what it is, a
point loop from `pid*BLOCK` of `Min(BLOCK, n - pid*BLOCK)` lanes inside the grid's tile loop
(`aiscan.ir.tiles`), it is counted exactly at any block size: the points of all programs
partition `[0, n)`. Conditions of another form stay guards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, as_expression
from aiscan.frontends.triton.tiles import axis_name, axis_symbol
from aiscan.ir.symbols import is_size_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["LaneLoop", "lane_loops"]


@dataclass(frozen=True, slots=True)
class LaneLoop:
    """The loop over one block axis: `var` from `start`, `trip` lanes."""

    var: str
    start: sympy.Expr
    trip: sympy.Expr


def lane_loops(
    shape: tuple[sympy.Expr, ...],
    condition: sympy.Basic,
    overrunning: frozenset[sympy.Expr] = frozenset(),
) -> tuple[list[LaneLoop], dict[sympy.Expr, sympy.Expr], sympy.Basic]:
    """The loops over `shape`'s axes (outermost first) with every conjunct of
    `condition` of the form `axis + base < bound` made the bound of its axis's loop (the
    variable then runs over `base + lane`), the substitution that rewrites indices to
    those variables, and the conjuncts left as a guard. A base that reads an
    `overrunning` counter (a loop whose bound is not the mask's: it may start past the
    bound) keeps at least no lanes, `Max(0, ...)`."""
    rank = len(shape)
    bounds: dict[int, tuple[sympy.Expr, sympy.Expr]] = {}
    left: list[sympy.Basic] = []
    for part in sympy.And.make_args(condition) if condition is not sympy.true else ():
        found = _bound(part, shape)
        if found is None or found[0] in bounds:
            left.append(part)
            continue
        position, base, end = found
        bounds[position] = (base, end)
    loops: list[LaneLoop] = []
    substitution: dict[sympy.Expr, sympy.Expr] = {}
    for position, extent in enumerate(shape):
        if extent == 1:
            continue
        name = axis_name(rank - 1 - position)
        if position in bounds:
            base, end = bounds[position]
            trip = sympy.Min(sympy.sympify(extent), sympy.expand(end - base))
            if sympy.sympify(base).free_symbols & overrunning:
                trip = sympy.Max(0, trip)
            loops.append(LaneLoop(name, as_expression(base), trip))
            substitution[axis_symbol(rank - 1 - position)] = axis_symbol(rank - 1 - position) - base
        else:
            loops.append(LaneLoop(name, as_expression(0), as_expression(extent)))
    rest = sympy.And(*left).subs(substitution, simultaneous=True) if left else sympy.true
    return loops, substitution, rest


def _bound(
    part: sympy.Basic, shape: tuple[sympy.Expr, ...]
) -> tuple[int, sympy.Expr, sympy.Expr] | None:
    """(axis position, base, end) for `axis + base < end`, base in loop variables, end in
    sizes; None for any other form."""
    if not isinstance(part, sympy.Rel):
        return None
    lhs, rhs = sympy.sympify(part.lhs), sympy.sympify(part.rhs)
    if isinstance(part, sympy.StrictLessThan):
        difference = lhs - rhs
    elif isinstance(part, sympy.LessThan):
        difference = lhs - rhs - 1
    elif isinstance(part, sympy.StrictGreaterThan):
        difference = rhs - lhs
    elif isinstance(part, sympy.GreaterThan):
        difference = rhs - lhs - 1
    else:
        return None
    difference = sympy.expand(difference)  # difference < 0
    rank = len(shape)
    axes = [p for p in range(rank) if axis_symbol(rank - 1 - p) in difference.free_symbols]
    if len(axes) != 1 or shape[axes[0]] == 1:
        return None
    (position,) = axes
    axis = axis_symbol(rank - 1 - position)
    if sympy.diff(difference, axis) != 1:
        return None
    rest = sympy.expand(difference - axis)
    base = sympy.Integer(0)
    end = sympy.Integer(0)
    for term in sympy.Add.make_args(rest):
        if all(is_size_symbol(s) for s in term.free_symbols):
            end -= term
        else:
            base += term
    return position, base, end
