"""Loops that do not run: at every size, or at the sizes given.

Sums and footprints assume every loop of a nest runs at least once: a loop that does not
run still multiplies its body by its trip (0, or a negative `n - 5` at n = 3), and the
footprint of a reference that does not use its counter (`y[j]` inside it) is counted as
if it ran. So such a loop keeps its header and loses its body before anything is counted:
it does no work and touches no memory. Where only the given sizes stop it (`i < n - 5` at
n = 3), the report says so, since the counts then hold at those sizes, not past them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY
from aiscan.ir.nodes import Branch, Loop, Node, Unknown, UnknownKind
from aiscan.ir.symbols import is_size_symbol

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
    return _emptied(body, sizes, notes), notes


def _emptied(
    body: tuple[Node, ...], sizes: Mapping[str, int], notes: list[Unknown]
) -> tuple[Node, ...]:
    out: list[Node] = []
    changed = False
    for node in body:
        new = node
        if isinstance(node, Loop):
            at_sizes = _trip_at(node.trip, sizes)
            if node.trip == 0 or (at_sizes is not None and at_sizes <= 0):
                if node.trip != 0:
                    notes.append(_note(node, at_sizes, sizes))
                new = replace(node, body=()) if node.body else node
            else:
                inner = _emptied(node.body, sizes, notes)
                new = node if inner is node.body else replace(node, body=inner)
        elif isinstance(node, Branch):
            then_body = _emptied(node.then_body, sizes, notes)
            else_body = _emptied(node.else_body, sizes, notes)
            if then_body is not node.then_body or else_body is not node.else_body:
                new = replace(node, then_body=then_body, else_body=else_body)
        changed = changed or new is not node
        out.append(new)
    return tuple(out) if changed else body


def _trip_at(trip: sympy.Expr, sizes: Mapping[str, int]) -> int | None:
    """The trip at `sizes`, where it is in sizes alone and every one of them is given."""
    symbols = trip.free_symbols
    if not symbols or not all(is_size_symbol(s) and s.name in sizes for s in symbols):
        return None
    value = trip.subs({s: sizes[s.name] for s in symbols})
    return int(value) if value.is_Integer else None


def _note(loop: Loop, value: int | None, sizes: Mapping[str, int]) -> Unknown:
    given = ", ".join(
        f"{s.name} = {sizes[s.name]}" for s in sorted(loop.trip.free_symbols, key=str)
    )
    return Unknown(
        UnknownKind.ASSUMPTION,
        f"the loop runs {loop.trip} times, which is {value} at {given}: it does not run there, so "
        "these counts leave it out (they hold at these sizes only)",
        loop.span,
    )
