"""Flatten a region into its statements, each with the loops around it and its weight.

The weight is the product of the branch fractions the statement sits under (1 outside any
branch), so `executions = weight * sum over the loops of 1`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import sympy

from aiscan.ir.nodes import Branch, Loop, Node, Statement

__all__ = ["Placed", "placed_statements"]


@dataclass(frozen=True, slots=True)
class Placed:
    """A statement in context: enclosing loops (outermost first), weight, program order."""

    statement: Statement
    loops: tuple[Loop, ...]
    weight: sympy.Expr
    order: int
    body_id: int
    """Identifies the innermost body (loop body or branch arm) the statement sits in."""


def placed_statements(body: tuple[Node, ...]) -> list[Placed]:
    placed: list[Placed] = []
    counter = iter(range(1 << 62))
    bodies = iter(range(1 << 62))
    placed.extend(_walk(body, (), sympy.Integer(1), counter, next(bodies), bodies))
    return placed


def _walk(
    body: tuple[Node, ...],
    loops: tuple[Loop, ...],
    weight: sympy.Expr,
    counter: Iterator[int],
    body_id: int,
    bodies: Iterator[int],
) -> Iterator[Placed]:
    for node in body:
        if isinstance(node, Statement):
            yield Placed(node, loops, weight, next(counter), body_id)
        elif isinstance(node, Loop):
            yield from _walk(node.body, (*loops, node), weight, counter, next(bodies), bodies)
        else:
            assert isinstance(node, Branch)
            yield Placed(node.condition, loops, weight, next(counter), body_id)
            p = node.taken_fraction
            yield from _walk(node.then_body, loops, weight * p, counter, next(bodies), bodies)
            yield from _walk(node.else_body, loops, weight * (1 - p), counter, next(bodies),
                             bodies)
