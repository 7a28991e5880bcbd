"""Spans of the C text's IR moved back to the CUDA source's columns (the lowering keeps
lines, but respelled constructs and the inserted grid loops move columns)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from aiscan.ir.nodes import Access, Branch, Function, Loop, Node, Region, Statement, Unknown
from aiscan.span import Span

__all__ = ["in_source"]

Position = Callable[[int, int], tuple[int, int]]


def in_source(function: Function, position: Position) -> Function:
    """`function` with every span at its place in the CUDA source."""
    return replace(
        function,
        span=_span(function.span, position),
        regions=tuple(_region(r, position) for r in function.regions),
        unknowns=tuple(_unknown(u, position) for u in function.unknowns),
    )


def _span(span: Span, position: Position) -> Span:
    line, column = position(span.line, span.column)
    return replace(span, line=line, column=column, end_line=max(span.end_line, line))


def _unknown(unknown: Unknown, position: Position) -> Unknown:
    return replace(unknown, span=_span(unknown.span, position))


def _region(region: Region, position: Position) -> Region:
    return replace(
        region,
        span=_span(region.span, position),
        body=_nodes(region.body, position),
        useful=_nodes(region.useful, position),
        shared_memory=_nodes(region.shared_memory, position),
    )


def _nodes(nodes: tuple[Node, ...], position: Position) -> tuple[Node, ...]:
    return tuple(_node(n, position) for n in nodes)


def _node(node: Node, position: Position) -> Node:
    if isinstance(node, Loop):
        return replace(
            node,
            span=_span(node.span, position),
            body=_nodes(node.body, position),
            unknowns=tuple(_unknown(u, position) for u in node.unknowns),
        )
    if isinstance(node, Branch):
        return replace(
            node,
            span=_span(node.span, position),
            condition=_statement(node.condition, position),
            then_body=_nodes(node.then_body, position),
            else_body=_nodes(node.else_body, position),
            unknowns=tuple(_unknown(u, position) for u in node.unknowns),
        )
    return _statement(node, position)


def _statement(statement: Statement, position: Position) -> Statement:
    return replace(
        statement,
        span=_span(statement.span, position),
        accesses=tuple(_access(a, position) for a in statement.accesses),
        unknowns=tuple(_unknown(u, position) for u in statement.unknowns),
    )


def _access(access: Access, position: Position) -> Access:
    return replace(access, span=_span(access.span, position))
