"""The one-walk subtree facts read children off node slots: hold that to pycparser's own
iteration for every node class, and the facts to a direct reading of a small function."""

from __future__ import annotations

import inspect

import pytest
from pycparser import c_ast, c_parser

from aiscan.frontends.c.subtree import _children, subtree_facts

_NODE_CLASSES = [
    kind
    for kind in vars(c_ast).values()
    if inspect.isclass(kind) and issubclass(kind, c_ast.Node) and "__slots__" in vars(kind)
    if kind is not c_ast.Node
]


@pytest.mark.parametrize("kind", _NODE_CLASSES, ids=lambda kind: kind.__name__)
def test_children_are_the_nodes_pycparser_iterates(kind: type) -> None:
    node = object.__new__(kind)
    for slot in kind.__slots__:
        if slot != "__weakref__":
            setattr(node, slot, None)
    for slot in kind.__slots__:
        if slot in ("coord", "__weakref__") or slot in kind.attr_names:
            continue
        pair = [c_ast.ID("a"), c_ast.ID("b")]
        setattr(node, slot, pair)
        if any(child is pair for child in node):  # a field of one node, not a list
            setattr(node, slot, c_ast.ID("c"))
    assert sorted(map(id, node)) == sorted(map(id, _children(node, kind)))


def test_facts_of_a_loop_nest() -> None:
    source = """
void f(int n, double *a) {
    int s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            a[i] += 1.0;
            s++;
        }
    s = s + 1;
}
"""
    body = c_parser.CParser().parse(source).ext[0].body
    facts = subtree_facts(body)
    outer = body.block_items[1]
    inner = outer.stmt
    # The last line is the last node's (`s++`): a closing brace has no coordinate.
    assert facts[id(outer)] == (7, True, frozenset({"i", "j", "s"}))
    assert facts[id(inner)] == (7, True, frozenset({"j", "s"}))
    assert facts[id(inner.stmt)] == (7, False, frozenset({"s"}))
    assert facts[id(body)] == (9, True, frozenset({"i", "j", "s"}))
