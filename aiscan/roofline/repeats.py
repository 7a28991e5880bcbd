"""Repeat counts: symbols that only say how many times a loop nest runs again.

A time loop (`for (t = 0; t < T; t++)` around a stencil sweep) multiplies FLOPs and bytes
alike under the compulsory model; its count `T` is no problem size. A crossover statement
sweeps the sizes together and holds `T` (MODEL.md, "Roofline placement"): sweeping them as
one (`T = n ≈ 61`) answers a question nobody asks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY
from aiscan.ir.nodes import Access, Branch, Loop, Node, Statement

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["repeat_symbols"]


def repeat_symbols(bodies: Iterable[tuple[Node, ...]]) -> frozenset[str]:
    """Names bounding only repeat loops (loops whose variable no index, no branch condition
    and no other loop's bounds use) and used by no index, condition or other loop bound."""
    nodes = [n for body in bodies for n in _walk(body)]
    used: set[str] = set()  # names in indices and branch conditions
    for node in nodes:
        for access in _accesses(node):
            if access.index is None:
                return frozenset()  # an index not seen through: hold nothing
            for index in access.index:
                used |= _names(index)
        if isinstance(node, Branch) and node.guard is not None:
            used |= _names(node.guard)
    loops = [n for n in nodes if isinstance(n, Loop)]
    bounds = [_names(loop.trip) | _names(loop.start) for loop in loops]
    in_bounds = set().union(*bounds) if bounds else set()
    candidates: set[str] = set()
    elsewhere = set(used)
    for loop, names in zip(loops, bounds, strict=True):
        if loop.var in used or loop.var in in_bounds:
            elsewhere |= names
        else:
            candidates |= names
    return frozenset(candidates - elsewhere)


def _names(expr: sympy.Basic | int) -> set[str]:
    if isinstance(expr, int):
        return set()
    return {s.name for s in expr.free_symbols if getattr(s, "is_Symbol", False)}


def _walk(body: tuple[Node, ...]) -> Iterator[Node]:
    for node in body:
        yield node
        if isinstance(node, Loop):
            yield from _walk(node.body)
        elif isinstance(node, Branch):
            yield node.condition
            yield from _walk(node.then_body)
            yield from _walk(node.else_body)


def _accesses(node: Node) -> tuple[Access, ...]:
    return node.accesses if isinstance(node, Statement) else ()
