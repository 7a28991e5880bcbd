"""Flatten a region into its statements, each with the loops around it and its weight.

The weight is the product of the branch fractions the statement sits under (1 outside any
branch), so `executions = weight * sum over the loops of 1`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from typing import TYPE_CHECKING

from aiscan.algebra import ONE, SYMPY
from aiscan.ir.nodes import Branch, Loop, Node, Statement

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["Placed", "guards_of", "placed_statements"]


@dataclass(frozen=True, slots=True)
class Placed:
    """A statement in context: enclosing loops (outermost first), weight, program order."""

    statement: Statement
    loops: tuple[Loop, ...]
    weight: sympy.Expr
    order: int
    branches: tuple[tuple[Branch, bool], ...] = ()
    """The branches around it, outermost first, each with the side it is on."""

    @property
    def guards(self) -> tuple[sympy.Basic, ...] | None:
        """The affine conditions it runs under (negated on else sides); None when a
        branch around it has a data-dependent condition."""
        return guards_of(self.branches)


def guards_of(branches: tuple[tuple[Branch, bool], ...]) -> tuple[sympy.Basic, ...] | None:
    guards = []
    for branch, taken in branches:
        if branch.guard is None:
            return None
        guards.append(branch.guard if taken else sympy.Not(branch.guard))
    return tuple(guards)


def placed_statements(body: tuple[Node, ...]) -> list[Placed]:
    return list(_walk(body, (), ONE, count(), ()))


def _walk(
    body: tuple[Node, ...],
    loops: tuple[Loop, ...],
    weight: sympy.Expr,
    order: Iterator[int],
    branches: tuple[tuple[Branch, bool], ...],
) -> Iterator[Placed]:
    for node in body:
        if isinstance(node, Statement):
            yield Placed(node, loops, weight, next(order), branches)
        elif isinstance(node, Loop):
            yield from _walk(node.body, (*loops, node), weight, order, branches)
        else:
            assert isinstance(node, Branch)
            yield Placed(node.condition, loops, weight, next(order), branches)
            p = node.taken_fraction
            yield from _walk(node.then_body, loops, weight * p, order, (*branches, (node, True)))
            yield from _walk(
                node.else_body, loops, weight * (1 - p), order, (*branches, (node, False))
            )
