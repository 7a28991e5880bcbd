"""Shapes that model code computes as Python sequences, to reshape or view a tensor with.

llama2.c's rotary embedding reshapes with `xq.shape[:-1] + (-1, 2)` and views its
frequencies with `[d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]`.
Where the tensor's rank is known, such a sequence is a fixed list of extents: read here
element by element (the comprehension unrolled over the axes, its condition decided per
axis), and bound to its name (`Scope.shapes`) for the reshape that uses it. A condition that
is not decided for a given axis leaves the list unread (None), and the reshape says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.frontends.python.values import Integer, Leaf

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader

__all__ = ["shape_list"]

Extents = list[sympy.Expr]


def shape_list(
    reader: ExpressionReader, node: cst.BaseExpression, local: dict[str, sympy.Expr] | None = None
) -> Extents | None:
    """The extents `node` lists (`x.shape[:-1] + (-1, 2)`, a name bound to such a list, a
    comprehension over `enumerate(x.shape)`), or None where it is no such list."""
    local = local or {}
    if isinstance(node, cst.Name) and node.value in reader.scope.shapes:
        return list(reader.scope.shapes[node.value])
    if isinstance(node, (cst.Tuple, cst.List)):
        items = [_integer(reader, e.value, local) for e in node.elements]
        return None if any(i is None for i in items) else items
    if isinstance(node, cst.Attribute) and node.attr.value == "shape":
        base = reader.value(node.value)
        return list(base.shape) if isinstance(base, Leaf) else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left, right = shape_list(reader, node.left, local), shape_list(reader, node.right, local)
        return None if left is None or right is None else left + right
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        whole = shape_list(reader, node.value, local)
        item = node.slice[0].slice
        if whole is None or not isinstance(item, cst.Slice) or item.step is not None:
            return None
        bounds = [
            _integer(reader, b, local) if b is not None else None for b in (item.lower, item.upper)
        ]
        if any(b is not None and not b.is_Integer for b in bounds):
            return None
        lower, upper = (int(b) if b is not None else None for b in bounds)
        return whole[lower:upper]
    if isinstance(node, cst.ListComp):
        return _comprehension(reader, node, local)
    return None


def _comprehension(
    reader: ExpressionReader, node: cst.ListComp, local: dict[str, sympy.Expr]
) -> Extents | None:
    """`[f(i, d) for i, d in enumerate(S)]`, `[f(d) for d in S]`, S a shape list: each
    element read with `i` and `d` bound to the axis and its extent."""
    loop = node.for_in
    if loop.inner_for_in is not None or loop.ifs:
        return None
    source = loop.iter
    numbered = (
        isinstance(source, cst.Call)
        and isinstance(source.func, cst.Name)
        and source.func.value == "enumerate"
        and len(source.args) == 1
    )
    extents = shape_list(reader, source.args[0].value if numbered else source, local)  # type: ignore[attr-defined]
    if extents is None:
        return None
    target = loop.target
    if numbered:
        if not (
            isinstance(target, cst.Tuple)
            and len(target.elements) == 2
            and all(isinstance(e.value, cst.Name) for e in target.elements)
        ):
            return None
        names = [e.value.value for e in target.elements]  # type: ignore[attr-defined]
    elif isinstance(target, cst.Name):
        names = ["", target.value]
    else:
        return None
    found: Extents = []
    for axis, extent in enumerate(extents):
        bound = {**local, names[1]: extent}
        if names[0]:
            bound[names[0]] = sympy.Integer(axis)
        value = _integer(reader, node.elt, bound)
        if value is None:
            return None
        found.append(value)
    return found


def _integer(
    reader: ExpressionReader, node: cst.BaseExpression, local: dict[str, sympy.Expr]
) -> sympy.Expr | None:
    """An integer expression with the comprehension's names bound; a conditional whose
    test is decided by the bound values picks its branch."""
    if isinstance(node, cst.Name) and node.value in local:
        return local[node.value]
    if isinstance(node, cst.IfExp):
        test = _truth(reader, node.test, local)
        if test is None:
            return None
        return _integer(reader, node.body if test else node.orelse, local)
    if isinstance(node, cst.BinaryOperation) and _names(node) & set(local):
        left, right = _integer(reader, node.left, local), _integer(reader, node.right, local)
        if left is None or right is None:
            return None
        operator = type(node.operator)
        if operator is cst.Add:
            return left + right
        if operator is cst.Subtract:
            return left - right
        if operator is cst.Multiply:
            return left * right
        return None
    saved, pending = reader.unknowns, reader.pending
    reader.unknowns, reader.pending = [], []
    try:
        value = reader.value(node)
    finally:
        reader.unknowns, reader.pending = saved, pending
    if isinstance(value, Integer) and value.value is not None:
        return value.value
    return None


def _truth(
    reader: ExpressionReader, node: cst.BaseExpression, local: dict[str, sympy.Expr]
) -> bool | None:
    """`i == 1 or i == ndim - 1` at one axis: True or False, None where undecided."""
    if isinstance(node, cst.BooleanOperation):
        left, right = _truth(reader, node.left, local), _truth(reader, node.right, local)
        if isinstance(node.operator, cst.Or):
            return True if True in (left, right) else None if None in (left, right) else False
        return False if False in (left, right) else None if None in (left, right) else True
    if not (isinstance(node, cst.Comparison) and len(node.comparisons) == 1):
        return None
    relation = {
        cst.Equal: sympy.Eq,
        cst.NotEqual: sympy.Ne,
        cst.LessThan: sympy.Lt,
        cst.LessThanEqual: sympy.Le,
        cst.GreaterThan: sympy.Gt,
        cst.GreaterThanEqual: sympy.Ge,
    }.get(type(node.comparisons[0].operator))
    left = _integer(reader, node.left, local)
    right = _integer(reader, node.comparisons[0].comparator, local)
    if relation is None or left is None or right is None:
        return None
    decided = relation(left, right)
    return bool(decided) if decided in (sympy.true, sympy.false) else None


def _names(node: cst.CSTNode) -> set[str]:
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.BinaryOperation):
        return _names(node.left) | _names(node.right)
    return set()
