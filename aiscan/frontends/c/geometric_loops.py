"""Loops whose counter is multiplied, divided or shifted by a constant between constant
bounds (`for (s = 128; s > 0; s >>= 1)`, a tree reduction; `offset /= 2`, a warp
shuffle's): they run a handful of times, each with a known counter, so the C lowering
unrolls them and every pass is counted exactly with its own value of the counter."""

from __future__ import annotations

from collections.abc import Callable

from pycparser import c_ast

from aiscan.frontends.c.literals import integer_literal

__all__ = ["MAX_PASSES", "geometric_update", "passes"]

MAX_PASSES = 64
"""More passes than this are not unrolled (the loop keeps its named trip)."""

_UPDATES: dict[str, Callable[[int, int], int]] = {
    "/": lambda v, k: int(v / k),  # C truncates toward zero
    ">>": lambda v, k: v >> k,
    "*": lambda v, k: v * k,
    "<<": lambda v, k: v << k,
}
_TESTS: dict[str, Callable[[int, int], bool]] = {
    "<": lambda v, b: v < b,
    "<=": lambda v, b: v <= b,
    ">": lambda v, b: v > b,
    ">=": lambda v, b: v >= b,
    "!=": lambda v, b: v != b,
}


def geometric_update(node: c_ast.Node | None) -> tuple[str, str, int] | None:
    """`s >>= 1`, `s /= 2`, `s *= 2`, `s = s / 2`: the counter, the operator and the
    constant; None for anything else."""
    if isinstance(node, c_ast.ExprList) and len(node.exprs) == 1:
        return geometric_update(node.exprs[0])
    if not isinstance(node, c_ast.Assignment) or not isinstance(node.lvalue, c_ast.ID):
        return None
    name = node.lvalue.name
    if node.op in ("/=", ">>=", "*=", "<<="):
        operator, value = node.op[:-1], node.rvalue
    elif (
        node.op == "="
        and isinstance(node.rvalue, c_ast.BinaryOp)
        and node.rvalue.op in _UPDATES
        and isinstance(node.rvalue.left, c_ast.ID)
        and node.rvalue.left.name == name
    ):
        operator, value = node.rvalue.op, node.rvalue.right
    else:
        return None
    if not isinstance(value, c_ast.Constant) or not value.type.endswith("int"):
        return None
    amount = integer_literal(value.value)
    if amount is None or amount <= 0 or (operator in "/*" and amount == 1):
        return None
    return name, operator, amount


def passes(start: int, test: str, bound: int, operator: str, amount: int) -> list[int] | None:
    """The counter's value in each pass, or None past `MAX_PASSES` or where it stalls."""
    values: list[int] = []
    value = start
    while _TESTS[test](value, bound):
        values.append(value)
        following = _UPDATES[operator](value, amount)
        if following == value or len(values) > MAX_PASSES:
            return None
        value = following
    return values
