"""Facts about every subtree of a function body, gathered in one walk.

Lowering asks, for each loop, where it ends, whether it holds a loop, and which integers
it assigns. Walking each loop's subtree to answer costs time quadratic in the nesting
depth and was a third of the C frontend's time; one post-order walk answers for all.
"""

from __future__ import annotations

from typing import NamedTuple

from pycparser import c_ast

__all__ = ["LOOPS", "SubtreeFacts", "subtree_facts"]

LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


class SubtreeFacts(NamedTuple):
    last_line: int | None
    """The last source line any node of the subtree has a coordinate on."""
    has_loop: bool
    assigned: frozenset[str]
    """Names assigned (`=`, `+=`, ..., `++`, `--`) anywhere in the subtree."""


def subtree_facts(root: c_ast.Node) -> dict[int, SubtreeFacts]:
    """Facts for `root` and each node below it, keyed by `id(node)` (the tree must live)."""
    preorder: list[tuple[c_ast.Node, list[c_ast.Node]]] = []
    stack = [root]
    while stack:  # iterative: deep nesting must not exhaust the Python stack
        node = stack.pop()
        children = list(node)
        preorder.append((node, children))
        stack.extend(children)
    facts: dict[int, SubtreeFacts] = {}
    for node, children in reversed(preorder):  # every child before its parent
        coord = node.coord
        last = coord.line if coord is not None else None
        has_loop = isinstance(node, LOOPS)
        assigned = _NOTHING
        for child in children:
            below_last, below_loop, below_assigned = facts[id(child)]
            if below_last is not None and (last is None or below_last > last):
                last = below_last
            if below_loop:
                has_loop = True
            if below_assigned:
                assigned = assigned | below_assigned if assigned else below_assigned
        if isinstance(node, (c_ast.Assignment, c_ast.UnaryOp)):
            target = _assigned_name(node)
            if target is not None:
                assigned = assigned | {target}
        facts[id(node)] = SubtreeFacts(last, has_loop, assigned)
    return facts


_NOTHING: frozenset[str] = frozenset()


def _assigned_name(node: c_ast.Node) -> str | None:
    target = None
    if isinstance(node, c_ast.Assignment):
        target = node.lvalue
    elif isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
        target = node.expr
    return target.name if isinstance(target, c_ast.ID) else None
