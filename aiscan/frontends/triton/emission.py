"""IR nodes for block operations: loops over a block's lanes, masks as guards, the grid
around a kernel's body."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, as_expression
from aiscan.frontends.triton.masks import LaneLoop
from aiscan.frontends.triton.tiles import axis_name
from aiscan.ir.nodes import Branch, FlopTally, Loop, Node, Statement, Unknown, UnknownKind
from aiscan.ir.symbols import fraction_symbol
from aiscan.span import Span

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["combines", "element_loops", "in_lanes", "inside", "masked"]


def element_loops(node: Node, shape: tuple[sympy.Expr, ...], span: Span) -> Node:
    """`node` inside one loop per block axis of extent other than 1, outermost first."""
    for position in range(len(shape) - 1, -1, -1):
        extent = shape[position]
        if extent == 1:
            continue
        name = axis_name(len(shape) - 1 - position)
        node = Loop(name, as_expression(0), 1, as_expression(extent), (node,), span)
    return node


def masked(
    statement: Statement,
    condition: sympy.Basic | None,
    span: Span,
    text: str,
    *,
    useful: bool = False,
) -> Node:
    """A masked access (or, `useful`, arithmetic on masked-in lanes): under its mask as a
    guard, with a named fraction for when the integer sets cannot count it (a mask read
    from data)."""
    if condition is sympy.true:
        return statement
    fraction = fraction_symbol(f"p_L{span.line}")
    what = f"lanes of `{text}` whose inputs are masked in" if useful else f"mask of `{text}`"
    unknown = Unknown(
        UnknownKind.BRANCH_FRACTION,
        f"{what}: the fraction of lanes it keeps is named {fraction}",
        span,
        str(fraction),
    )
    return Branch(
        span,
        Statement(span, text, FlopTally()),
        fraction,
        (statement,),
        (),
        (unknown,),
        condition,
    )


def combines(lanes: list[LaneLoop], reduce: str | None) -> list[LaneLoop]:
    """The lanes of a reduction's axis less its first: e lanes take e - 1 combines."""
    if reduce is None:
        return lanes
    return [
        LaneLoop(lane.var, lane.start + 1, sympy.sympify(lane.trip) - 1)
        if lane.var == reduce
        else lane
        for lane in lanes
    ]


def in_lanes(node: Node, loops: Sequence[LaneLoop], span: Span) -> Node:
    for loop in reversed(loops):
        node = Loop(loop.var, loop.start, 1, as_expression(loop.trip), (node,), span)
    return node


def inside(
    body: tuple[Node, ...], grid: list[tuple[str, sympy.Expr, sympy.Expr]], span: Span
) -> tuple[Node, ...]:
    """The kernel body as one program of the launch: inside the grid's loops (name,
    start, trip), outermost first."""
    if not body:
        return body
    node: tuple[Node, ...] = body
    for name, start, extent in reversed(grid):
        node = (Loop(name, start, 1, extent, node, span),)
    return node
