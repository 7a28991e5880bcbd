"""Facts about every subtree of a function body, gathered in one walk.

Lowering asks, for each loop, where it ends, whether it holds a loop, and which integers
it assigns. Walking each loop's subtree to answer costs time quadratic in the nesting
depth; one post-order walk answers for every node. The facts are plain tuples: there is
one per node of the file, and building anything richer was a visible share of the time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pycparser import c_ast

__all__ = ["LOOPS", "SubtreeFacts", "nodes_of", "subtree_facts"]

LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)

SubtreeFacts = tuple[int, bool, frozenset[str]]
"""The last source line any node of the subtree is on (0 if none has a coordinate),
whether it holds a loop, and the names it assigns (`=`, `+=`, ..., `++`, `--`)."""

_NOTHING: frozenset[str] = frozenset()
_STEPS = ("++", "--", "p++", "p--")


def subtree_facts(root: c_ast.Node, called: set[str] | None = None) -> dict[int, SubtreeFacts]:
    """Facts for `root` and each node below it but the leaves, keyed by `id(node)` (the
    tree must live). `called`, when given, gets the name of every function called by
    name: whether there are calls to inline, without a walk of its own.

    Recursive: a tree pycparser managed to parse nests far less deeply than the parser's
    own recursion went, and a RecursionError is a located error for the caller anyway."""
    facts: dict[int, SubtreeFacts] = {}
    facts[id(root)] = _visit(root, facts, set() if called is None else called)
    return facts


def _visit(node: c_ast.Node, facts: dict[int, SubtreeFacts], called: set[str]) -> SubtreeFacts:
    """A module-level function, not a closure: a recursive closure is a reference cycle."""
    coord = node.coord
    last = coord.line if coord is not None else 0
    kind = type(node)
    if kind is c_ast.ID or kind is c_ast.Constant:
        # Leaves are most of a tree: their facts are not kept (asked for, they are
        # computed again), and pycparser's generator-based iteration is skipped.
        return (last, False, _NOTHING)
    if kind is c_ast.BinaryOp:
        children: Iterable[c_ast.Node] = (node.left, node.right)
    elif kind is c_ast.ArrayRef:
        children = (node.name, node.subscript)
    else:
        if kind is c_ast.FuncCall and node.name.__class__ is c_ast.ID:
            called.add(node.name.name)
        children = _children(node, kind)
    has_loop = isinstance(node, LOOPS)
    assigned = _NOTHING
    for child in children:
        child_last, child_loop, child_assigned = _visit(child, facts, called)
        if child_last > last:
            last = child_last
        if child_loop:
            has_loop = True
        if child_assigned:
            assigned = assigned | child_assigned if assigned else child_assigned
    target = None
    if isinstance(node, c_ast.Assignment):
        target = node.lvalue
    elif isinstance(node, c_ast.UnaryOp) and node.op in _STEPS:
        target = node.expr
    if isinstance(target, c_ast.ID):
        assigned = assigned | {target.name}
    result = (last, has_loop, assigned)
    facts[id(node)] = result
    return result


_CHILD_FIELDS: dict[type[c_ast.Node], tuple[str, ...]] = {}


def _children(node: c_ast.Node, kind: type[c_ast.Node]) -> list[c_ast.Node]:
    """The node's children, in any order (the facts are a maximum, a disjunction and a
    union), read off its slots: pycparser's generator-based `__iter__` was a fifth of the
    walk."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        skip = {*kind.attr_names, "coord", "__weakref__"}
        fields = _CHILD_FIELDS[kind] = tuple(f for f in kind.__slots__ if f not in skip)
    children = []
    for field in fields:
        value = getattr(node, field)
        if value is None:
            continue
        if value.__class__ is list:
            children += value
        else:
            children.append(value)
    return children


def nodes_of(node: c_ast.Node) -> Iterator[c_ast.Node]:
    """`node` and every node below it, in no particular order (iteratively: no recursion
    limit on deep trees)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack += _children(current, type(current))  # not pycparser's tuples of (name, child)
