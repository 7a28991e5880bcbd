"""Apply a framework's rules (`frameworks.py`) to a lowered function's IR.

JAX without x64 stores and computes float64 data as float32: every float64 element (and
complex128) becomes its 32-bit twin, so the bytes halve and the float32 roof applies, as the
H100 measurements show (a float64 `A @ B` under JAX's defaults ran in 2.9 ms, in TF32).
Each region also records the framework's view (jit or eager) and TF32 policy.
"""

from __future__ import annotations

from dataclasses import replace

from aiscan.frontends.python.dtypes import COMPLEX64, COMPLEX128, FLOAT32, FLOAT64
from aiscan.frontends.python.frameworks import FrameworkRules
from aiscan.ir.nodes import (
    Access,
    Branch,
    ElementType,
    Function,
    Loop,
    Node,
    Region,
    Statement,
    Temporary,
)

__all__ = ["apply_rules"]

_DEMOTED = {FLOAT64: FLOAT32, COMPLEX128: COMPLEX64}


def apply_rules(function: Function, rules: FrameworkRules) -> Function:
    """`function` as its framework runs it."""
    demote = rules.demotes_float64_in(function.name)
    view = rules.view(function.name)
    tf32 = rules.tf32_for(function.name)
    regions = tuple(_region(r, demote=demote, view=view, tf32=tf32) for r in function.regions)
    parameters = function.parameters
    if demote and parameters is not None:
        parameters = tuple(
            p if p.element is None else replace(p, element=_element(p.element)) for p in parameters
        )
    return replace(function, regions=regions, parameters=parameters)


def _region(region: Region, *, demote: bool, view: str, tf32: str | None) -> Region:
    if demote:
        region = replace(
            region,
            body=_nodes(region.body),
            eager_calls=tuple(replace(c, body=_nodes(c.body)) for c in region.eager_calls),
            temporaries=tuple(_temporary(t) for t in region.temporaries),
        )
    return replace(region, view=view, tf32=tf32)


def _element(element: ElementType) -> ElementType:
    return _DEMOTED.get(element, element)


def _temporary(temporary: Temporary) -> Temporary:
    return replace(temporary, element=_element(temporary.element))


def _nodes(body: tuple[Node, ...]) -> tuple[Node, ...]:
    return tuple(_node(n) for n in body)


def _node(node: Node) -> Node:
    if isinstance(node, Loop):
        return replace(node, body=_nodes(node.body))
    if isinstance(node, Branch):
        return replace(
            node,
            condition=_statement(node.condition),
            then_body=_nodes(node.then_body),
            else_body=_nodes(node.else_body),
        )
    return _statement(node)


def _statement(statement: Statement) -> Statement:
    accesses = tuple(_access(a) for a in statement.accesses)
    return replace(statement, accesses=accesses)


def _access(access: Access) -> Access:
    element = _element(access.element)
    return access if element is access.element else replace(access, element=element)
