"""Loops that do not run: at every size, or at the sizes given.

Sums and footprints assume every loop of a nest runs at least once: a loop that does not
run still multiplies its body by its trip (0, or a negative `n - 5` at n = 3), and the
footprint of a reference that does not use its counter (`y[j]` inside it) is counted as
if it ran. So such a loop keeps its header and loses its body before anything is counted:
it does no work and touches no memory. Where only the given sizes stop it (`i < n - 5` at
n = 3, `j = i + 2; j < n` at n = 2), the report says so, since the counts then hold at
those sizes, not past them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, is_poly, normal
from aiscan.ir.nodes import Branch, Loop, Node, Unknown, UnknownKind
from aiscan.ir.symbols import is_size_symbol, loop_symbol
from aiscan.ir.trips import never_below_zero

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["without_idle_loops"]


def without_idle_loops(
    body: tuple[Node, ...], sizes: Mapping[str, int]
) -> tuple[tuple[Node, ...], list[Unknown]]:
    """`body` with every loop that does not run emptied, and a note for each loop that
    does not run only at `sizes`."""
    notes: list[Unknown] = []
    return _emptied(body, (), sizes, notes), notes


def _emptied(
    body: tuple[Node, ...],
    enclosing: tuple[Loop, ...],
    sizes: Mapping[str, int],
    notes: list[Unknown],
) -> tuple[Node, ...]:
    out: list[Node] = []
    changed = False
    for node in body:
        new = node
        if isinstance(node, Loop):
            never = never_below_zero(node.trip) == 0  # at every size
            most = _most_at(node.trip, enclosing, sizes) if sizes and not never else None
            if never or (most is not None and most <= 0):
                if not never:
                    notes.append(_note(node, most, enclosing, sizes))
                new = replace(node, body=()) if node.body else node
            else:
                inner = _emptied(node.body, (*enclosing, node), sizes, notes)
                new = node if inner is node.body else replace(node, body=inner)
        elif isinstance(node, Branch):
            then_body = _emptied(node.then_body, enclosing, sizes, notes)
            else_body = _emptied(node.else_body, enclosing, sizes, notes)
            if then_body is not node.then_body or else_body is not node.else_body:
                new = replace(node, then_body=then_body, else_body=else_body)
        changed = changed or new is not node
        out.append(new)
    return tuple(out) if changed else body


def _most_at(trip: sympy.Expr, enclosing: tuple[Loop, ...], sizes: Mapping[str, int]) -> int | None:
    """The largest `trip` over every iteration of `enclosing` (outermost first) at
    `sizes`; None where that is no number there (a size not given, a trip that is not
    affine in the counters).

    Each counter is put at the end of its range that its slope favours, innermost first.
    Where an enclosing range is empty for some outer iterations, that end lies outside
    the nest, so the result can only be larger than the true largest: a loop found not
    to run (result at most 0) truly does not."""
    most = _at(trip, sizes)
    for loop in reversed(enclosing):
        if most is None:
            return None
        counter = loop_symbol(loop.var)
        if counter not in most.free_symbols:
            continue
        start = _at(loop.start, sizes)
        last = _at(loop.start + loop.step * (loop.trip - 1), sizes)
        if start is None or last is None or most.degree(counter) != 1:
            return None
        slope = most.coeff(counter)
        if not slope.is_number:
            return None
        low, high = (start, last) if loop.step > 0 else (last, start)
        most = _at(most.subs(counter, high if slope > 0 else low), sizes)
    if most is None or not most.is_Integer:
        return None
    return int(most)


def _at(expr: sympy.Expr, sizes: Mapping[str, int]) -> sympy.Expr | None:
    """`expr` with the given sizes in place, as a polynomial; None where it is none."""
    given = {s: sizes[s.name] for s in expr.free_symbols if is_size_symbol(s) and s.name in sizes}
    value = normal(expr.subs(given) if given else expr)
    return value if is_poly(value) or not value.free_symbols else None


def _note(
    loop: Loop, most: int | None, enclosing: tuple[Loop, ...], sizes: Mapping[str, int]
) -> Unknown:
    exprs = [loop.trip, *(e for outer in enclosing for e in (outer.start, outer.trip))]
    names = sorted({s.name for e in exprs for s in e.free_symbols if s.name in sizes})
    given = ", ".join(f"{name} = {sizes[name]}" for name in names)
    counters = {loop_symbol(outer.var) for outer in enclosing}
    value = f"at most {most}" if counters & loop.trip.free_symbols else f"{most}"
    return Unknown(
        UnknownKind.ASSUMPTION,
        f"the loop runs {loop.trip} times, which is {value} at {given}: it does not run "
        "there, so these counts leave it out (they hold at these sizes only)",
        loop.span,
    )
