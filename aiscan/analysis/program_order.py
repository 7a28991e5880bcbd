"""A Triton launch's body with its grid loops in the order the GPU starts programs.

The counts read a launch's grid as any loop nest (`pid_0` outside `pid_1`, grouped
program ids merged back into a 2-D grid): every figure is a sum or a union over the
programs, so their order does not change it. Which re-reads the L2 holds does depend on
it, and the GPU starts programs by linear id, axis 0 fastest. The frontend records that
order (`Region.launch_order`); here the body's grid loops are replaced by it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from aiscan.algebra import SYMPY, as_expression, to_sympy
from aiscan.ir.nodes import Loop, Node, Region
from aiscan.ir.substitution import substituted, substituted_expr
from aiscan.ir.symbols import loop_symbol, size_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["in_launch_order"]


def in_launch_order(region: Region, sizes: Mapping[str, int]) -> tuple[Node, ...] | None:
    """`region.body` inside its `launch_order` loops instead of its own grid loops, at
    `sizes`; None when the region records no order, its grid loops are not the perfect
    nest at its top that the frontend builds, or a loop's trip depends on the program.

    A grouped grid's row loop runs `Min(GROUP_M, tiles_m - q*GROUP_M)` programs of group
    q; where that is one number for every group at `sizes` (GROUP_M divides the rows),
    the number is its trip, and the row is counted from 0 (`q*GROUP_M + t`), so that the
    layer conditions see a box of constant trips."""
    order = region.launch_order
    if not order:
        return None
    names = {loop.var for loop in order}
    body = region.body
    peeled: set[str] = set()
    while len(body) == 1 and isinstance(body[0], Loop) and body[0].var in names:
        peeled.add(body[0].var)
        body = body[0].body
    bounds = {s.name for loop in order for p in (loop.start, loop.trip) for s in _symbols(p)}
    if not peeled or any(n not in peeled and n not in bounds for n in names):
        return None  # not the grid the frontend builds
    grid = {loop_symbol(name) for name in names}
    if _program_bound_loop(body, grid):
        return None
    mapping = {to_sympy(size_symbol(name)): value for name, value in sizes.items()}
    loops = [
        replace(
            loop,
            start=substituted_expr(loop.start, mapping),
            trip=substituted_expr(loop.trip, mapping),
        )
        for loop in order
    ]
    # A row of group q starts at `q*GROUP_M`: counted from 0, so that the nest is a box.
    shifts = {
        loop_symbol(loop.var): loop_symbol(loop.var) + to_sympy(loop.start)
        for loop in loops
        if to_sympy(loop.start) != 0
    }
    if shifts:
        body = tuple(substituted(node, shifts) for node in body)
    body = tuple(substituted(node, mapping) for node in body)
    for loop in reversed(loops):
        body = (replace(loop, start=as_expression(0), body=body),)
    return tuple(_constant_trips(node, {}) for node in body)


def _program_bound_loop(body: tuple[Node, ...], grid: set[Any]) -> bool:
    """A loop of a program (not a block's lanes, `ax0`...) whose trip depends on the
    program, as causal attention's key loop: its reuse is a sum over a triangle that the
    layer conditions do not decide, so it is not tried (it takes minutes at 4096)."""
    for node in body:
        if not isinstance(node, Loop):
            continue
        lanes = node.var.startswith("ax")
        if not lanes and _symbols(node.trip) & grid:
            return True
        if _program_bound_loop(node.body, grid):
            return True
    return False


def _constant_trips(node: Node, box: dict[Any, tuple[int, int]]) -> Node:
    """`node` with every trip that is one number over the loops around it (their numeric
    ranges in `box`, first and last value) replaced by that number: `Min(64, 512 -
    64*pid)` over `pid` in [0, 7] is 64. A minimum of affine terms is smallest at a
    corner of the box, so the corners decide it."""
    if not isinstance(node, Loop):
        return node
    trip = _box_minimum(to_sympy(node.trip), box)
    start = to_sympy(node.start)
    inner = dict(box)
    if start.is_Integer and trip.is_Integer and trip > 0:
        inner[loop_symbol(node.var)] = (int(start), int(start + (trip - 1) * node.step))
    body = tuple(_constant_trips(n, inner) for n in node.body)
    return replace(node, trip=as_expression(trip), body=body)


def _box_minimum(trip: Any, box: dict[Any, tuple[int, int]]) -> Any:
    """A `Min` of a number and affine terms that are never below it over `box`: the
    number; anything else as it is."""
    if not isinstance(trip, sympy.Min):
        return trip
    numbers = [a for a in trip.args if a.is_Integer]
    if len(numbers) != 1:
        return trip
    (least,) = numbers
    for term in trip.args:
        if term is least:
            continue
        variables = [v for v in term.free_symbols if v in box]
        if len(variables) != len(term.free_symbols) or not sympy.Poly(term, *variables).is_linear:
            return trip
        corners = itertools.product(*(box[v] for v in variables))
        if any(term.subs(dict(zip(variables, c, strict=True))) < least for c in corners):
            return trip
    return least


def _symbols(expr: object) -> set[Any]:
    return set(to_sympy(expr).free_symbols)
