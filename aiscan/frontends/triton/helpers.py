"""`@triton.jit` helpers called from a kernel, inlined at each call.

Triton inlines every `@triton.jit` function a kernel calls, so a helper's loads, stores
and arithmetic are the caller's, once per call, with the call's arguments as its
parameters (block values, pointers and constants alike). The helper is lowered in a scope
of its own; its `return` (one value, or a tuple of them) is the call's value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import libcst as cst

from aiscan.algebra import as_expression
from aiscan.frontends.triton.tiles import Tile
from aiscan.ir.nodes import UnknownKind

if TYPE_CHECKING:
    from aiscan.frontends.triton.kernel import KernelLowering, Value

__all__ = ["Returned", "called_helpers", "inline"]

Returned = tuple["Value", ...]
"""What a helper returns: one value per element of its `return` (one for a plain value)."""


def called_helpers(jitted: Mapping[str, cst.FunctionDef]) -> frozenset[str]:
    """The `@triton.jit` functions another one calls by name: helpers, not kernels."""
    called: set[str] = set()
    for function in jitted.values():
        for node in _walk(function.body):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                name = node.func.value
                if name in jitted and name != function.name.value:
                    called.add(name)
    return frozenset(called)


def inline(lowering: KernelLowering, node: cst.Call, helper: cst.FunctionDef) -> Returned:
    """The helper's body lowered into the caller's, its parameters bound to the call's
    arguments; the values it returns."""
    name = helper.name.value
    if name in lowering.inlining:
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"recursive call to `{name}` is not analyzed", node
        )
    params = helper.params.params
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    if len(positional) > len(params) or any(a.star for a in node.args):
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"call `{lowering.text(node)}`: arguments not read", node
        )
    scope: dict[str, Value] = {}
    for position, param in enumerate(params):
        argument = positional[position] if position < len(positional) else None
        argument = keywords.get(param.name.value, argument)
        if argument is not None:
            scope[param.name.value] = lowering.value(argument)
        elif param.default is not None:
            scope[param.name.value] = _default(lowering, param.default)
        else:
            raise lowering.unknown(
                UnknownKind.UNSUPPORTED,
                f"call `{lowering.text(node)}`: no value for `{param.name.value}`",
                node,
            )
    caller = lowering.env
    lowering.env = scope
    lowering.inlining.append(name)
    lowering.returns.append(())
    try:
        body = helper.body
        lowering.block(body.body if isinstance(body, cst.IndentedBlock) else ())
    finally:
        returned = lowering.returns.pop()
        lowering.inlining.pop()
        lowering.env = caller
    return returned


def _default(lowering: KernelLowering, node: cst.BaseExpression) -> Value:
    if isinstance(node, cst.Integer):
        return Tile((), index=as_expression(int(node.value.replace("_", ""), 0)))
    return lowering.value(node)


def _walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    found = [node]
    for child in node.children:
        found.extend(_walk(child))
    return found
