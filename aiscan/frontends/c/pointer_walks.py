"""Pointers a loop body walks: `x++; y++;`, `*y++ = s * *x++`, `p += 4`.

A pointer moved by the same constant on every iteration points, at iteration `t`, `t`
times that constant further than where it started: `*x` in the body is then `x[t]`, not
one element. A pointer moved anywhere else (in a branch, in an inner loop, by an amount
that varies) is reported as varying, so its accesses count as indirect.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from pycparser import c_ast

from aiscan.frontends.c.literals import integer_literal
from aiscan.frontends.c.subtree import nodes_of

__all__ = ["pointer_steps"]

_CONDITIONAL = (c_ast.If, c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.Switch, c_ast.TernaryOp)
_INCREMENTS = {"++": 1, "p++": 1, "--": -1, "p--": -1}


def pointer_steps(body: c_ast.Node, is_pointer: Callable[[str], bool]) -> dict[str, int | None]:
    """Each pointer the body moves, with its step per iteration, or None when the body
    moves it other than by a constant on every pass. A pointer the body also sets afresh
    (`p = &A[i*n]`) is left out: where it points follows from that assignment."""
    steps: dict[str, int | None] = {}
    reset: set[str] = set()
    for move in _moves(body, always=True):
        if not is_pointer(move.name):
            continue
        if move.is_reset:
            reset.add(move.name)
        elif (
            move.step is None
            or not move.always
            or (move.name in steps and steps[move.name] is None)
        ):
            steps[move.name] = None
        else:
            steps[move.name] = (steps.get(move.name) or 0) + move.step
    return {name: step for name, step in steps.items() if name not in reset}


class _Move(NamedTuple):
    name: str
    step: int | None
    always: bool
    is_reset: bool = False


def _moves(node: c_ast.Node, *, always: bool) -> Iterator[_Move]:
    """Every change of a named pointer in `node`, and whether it happens on every pass."""
    if isinstance(node, c_ast.UnaryOp) and node.op in _INCREMENTS:
        if isinstance(node.expr, c_ast.ID):
            yield _Move(node.expr.name, _INCREMENTS[node.op], always)
    elif isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID):
        name = node.lvalue.name
        relative = node.op != "=" or any(
            isinstance(n, c_ast.ID) and n.name == name for n in nodes_of(node.rvalue)
        )
        yield _Move(name, _step(node), always, is_reset=not relative)
    elif isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"):
        yield from _moves(node.left, always=always)
        yield from _moves(node.right, always=False)
        return
    conditional = isinstance(node, _CONDITIONAL)
    for _, child in node.children():
        yield from _moves(child, always=always and not conditional)


def _step(node: c_ast.Assignment) -> int | None:
    """`p += 2` -> 2, `p -= 1` -> -1, `p = p + 4` -> 4; anything else -> None."""
    name = node.lvalue.name
    amount: c_ast.Node | None = None
    sign = 1
    if node.op in ("+=", "-="):
        amount, sign = node.rvalue, 1 if node.op == "+=" else -1
    elif (
        node.op == "="
        and isinstance(node.rvalue, c_ast.BinaryOp)
        and node.rvalue.op in "+-"
        and isinstance(node.rvalue.left, c_ast.ID)
        and node.rvalue.left.name == name
    ):
        amount, sign = node.rvalue.right, 1 if node.rvalue.op == "+" else -1
    if not (isinstance(amount, c_ast.Constant) and amount.type == "int"):
        return None
    value = integer_literal(amount.value)
    return None if value is None else sign * value
