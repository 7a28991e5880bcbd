"""A call's arguments as the call readers take them: by position, by keyword, as a shape, a dtype.

Every reader of calls needs these, and they need no reader, only the evaluator's interface
(`expressions.ExpressionReader`): below all the readers, they spare each one an import of
the dispatcher (`calls.py`) that imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.expressions import string_literal
from aiscan.frontends.python.values import Integer, Leaf, Shape
from aiscan.ir.nodes import ElementType

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader

__all__ = ["_dtype_argument", "_dtype_node", "_keyword", "_positional", "_shape"]


def _positional(node: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in node.args if a.keyword is None and not a.star]


def _keyword(node: cst.Call, name: str) -> cst.BaseExpression | None:
    return next(
        (a.value for a in node.args if a.keyword is not None and a.keyword.value == name), None
    )


def _shape(reader: ExpressionReader, node: cst.BaseExpression) -> Shape | None:
    prototype = _attribute_of(reader, node, "shape")
    if prototype is not None:
        # `np.zeros(A.shape)`: the whole shape of another array.
        return prototype.shape
    items = [e.value for e in node.elements] if isinstance(node, cst.Tuple | cst.List) else [node]
    extents: list[sympy.Expr] = []
    for item in items:
        value = reader.value(item)
        if not isinstance(value, Integer) or value.value is None:
            return None
        extents.append(value.value)
    return tuple(extents)


def _dtype_argument(reader: ExpressionReader, node: cst.Call) -> ElementType | None:
    dtype = _keyword(node, "dtype")
    return _dtype_node(reader, dtype) if dtype is not None else None


def _attribute_of(reader: ExpressionReader, node: cst.BaseExpression, name: str) -> Leaf | None:
    """The array `A` of `A.shape` / `A.dtype`, when `A` is an array the reader knows."""
    if not (isinstance(node, cst.Attribute) and node.attr.value == name):
        return None
    base = reader.value(node.value)
    return base if isinstance(base, Leaf) else None


def _dtype_node(reader: ExpressionReader, node: cst.BaseExpression) -> ElementType | None:
    """`np.float32`, `jnp.bfloat16`, `torch.float16`, `"float32"`, `float`, `A.dtype`."""
    named = reader.scope.dtypes.get(reader.names.text(node))
    if named is not None:
        return named  # `self.dtype` of a Flax module whose field defaults to a dtype
    prototype = _attribute_of(reader, node, "dtype")
    if prototype is not None:
        return prototype.element
    if isinstance(node, cst.SimpleString):
        return dtypes.dtype_named(string_literal(node))
    canonical = reader.names.canonical(node)
    if canonical is not None:
        return dtypes.dtype_qualified(canonical)
    if isinstance(node, cst.Name):
        return dtypes.dtype_named(node.value)
    return None
