"""Values put for symbols throughout a loop nest: a launch's grid and block in a kernel's
loops (CUDA), the given sizes in a GPU launch before its L2 model is decided."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from aiscan.algebra import SYMPY, normal, to_sympy
from aiscan.ir.nodes import Access, Branch, Loop, Node, Statement

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["substituted", "substituted_expr"]


def substituted_expr(value: Any, mapping: Mapping[Any, Any]) -> Any:
    """`value` with `mapping` put in, simultaneously; `value` itself when it has none of
    the mapped symbols."""
    if not mapping:
        return value
    converted = to_sympy(value)
    if not (converted.free_symbols & set(mapping)):
        return value
    return normal(sympy.expand(converted.subs(mapping, simultaneous=True)))


def substituted(node: Node, mapping: Mapping[Any, Any]) -> Node:
    """`node` with `mapping` put in its loops' starts and trips, its branches' guards and
    its accesses' indices and extents."""
    if isinstance(node, Loop):
        return replace(
            node,
            start=substituted_expr(node.start, mapping),
            trip=substituted_expr(node.trip, mapping),
            body=tuple(substituted(n, mapping) for n in node.body),
        )
    if isinstance(node, Branch):
        guard = node.guard
        if guard is not None and not isinstance(guard, sympy.logic.boolalg.BooleanAtom):
            guard = to_sympy(guard).subs(mapping, simultaneous=True)
        return replace(
            node,
            condition=_statement(node.condition, mapping),
            guard=guard,
            then_body=tuple(substituted(n, mapping) for n in node.then_body),
            else_body=tuple(substituted(n, mapping) for n in node.else_body),
        )
    return _statement(node, mapping)


def _statement(statement: Statement, mapping: Mapping[Any, Any]) -> Statement:
    if not statement.accesses:
        return statement
    return replace(statement, accesses=tuple(_access(a, mapping) for a in statement.accesses))


def _access(access: Access, mapping: Mapping[Any, Any]) -> Access:
    index = access.index
    if index is not None:
        index = tuple(substituted_expr(i, mapping) for i in index)
    extents = tuple(None if e is None else substituted_expr(e, mapping) for e in access.extents)
    return replace(access, index=index, extents=extents)
