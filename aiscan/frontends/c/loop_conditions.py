"""Loop conditions in any affine form, reduced to `counter OP bound`.

`i + 1 < n`, `n > i`, `2*i < n`, `i + k <= n` all say the same kind of thing as `i < n`:
moving every term but the counter's to one side gives a bound free of the counter, so the
trip count comes out exactly as for the plain form. Unsigned arithmetic adds one trap: a
subtraction that can go below zero wraps around to a huge value, so such a bound is flagged
rather than trusted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pycparser import c_ast

from aiscan.algebra import SYMPY, expand, normal
from aiscan.frontends.c.expressions import ExpressionReader, Variable
from aiscan.frontends.c.text import source_text
from aiscan.frontends.c.types import CType, element_type_named
from aiscan.ir.symbols import loop_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["counter_bound", "unsigned_wrap"]

_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
# For an integer counter: `a*v < q` is `v < ceiling(q/a)`, `a*v <= q` is `v <= floor(q/a)`.
_ROUNDING = {"<": "ceiling", "<=": "floor", ">": "floor", ">=": "ceiling"}
_INT_CTYPE = CType(element_type_named(["int"]))


def counter_bound(
    reader: ExpressionReader, condition: c_ast.Node | None, var: str
) -> tuple[str, sympy.Expr] | None:
    """The condition as (`<`, `<=`, `>`, `>=` or `!=`, bound) on the counter `var`, when both
    sides are affine and the counter appears with a nonzero integer coefficient."""
    if not isinstance(condition, c_ast.BinaryOp) or condition.op not in _FLIPPED:
        return None
    left, right = _with_counter(reader, var, (condition.left, condition.right))
    if left is None or right is None:
        return None
    counter = loop_symbol(var)
    if left == counter and counter not in right.free_symbols:
        return condition.op, expand(right)  # `i < n`, the usual form, as below
    if right == counter and counter not in left.free_symbols:
        return _FLIPPED[condition.op], expand(left)
    difference = expand(left - right)  # the condition is `difference OP 0`
    if not difference.is_polynomial(counter):
        return None
    # Degree one in the counter, without building a Poly (a seventh of a C file's time):
    # a nonzero integer coefficient, and no power of the counter left in the rest.
    coefficient = difference.coeff(counter, 1)
    if not coefficient.is_Integer or coefficient == 0:
        return None
    rest = expand(difference - coefficient * counter)
    if counter in rest.free_symbols:
        return None
    operator = condition.op
    scale = int(coefficient)
    if scale < 0:
        scale, rest, operator = -scale, -rest, _FLIPPED[operator]
    bound = -rest / scale
    if scale == 1:
        return operator, bound
    if operator == "!=":
        return None  # `2*i != n` stops only when n is even: no closed form without parity
    return operator, normal(getattr(sympy, _ROUNDING[operator])(bound))


def _with_counter(
    reader: ExpressionReader, var: str, nodes: tuple[c_ast.Node, c_ast.Node]
) -> tuple[sympy.Expr | None, sympy.Expr | None]:
    """Both sides as affine expressions, the counter read as the loop's symbol."""
    scope = reader.scope
    previous = scope.lookup(var)
    scope.variables[var] = Variable(var, previous.ctype if previous else _INT_CTYPE, True)
    try:
        return reader.affine(nodes[0]), reader.affine(nodes[1])
    finally:
        if previous is None:
            del scope.variables[var]
        else:
            scope.variables[var] = previous


def unsigned_wrap(reader: ExpressionReader, condition: c_ast.Node | None) -> str | None:
    """The first subtraction in `condition` done in unsigned arithmetic that may go below
    zero (`i - 1` with `size_t i`, `n - 2`): it wraps to a huge value instead."""
    if condition is None:
        return None
    stack = [condition]
    while stack:
        node = stack.pop()
        stack.extend(child for _, child in node.children())
        if not (isinstance(node, c_ast.BinaryOp) and node.op == "-"):
            continue
        if not (_is_unsigned(reader, node.left) or _is_unsigned(reader, node.right)):
            continue
        value = reader.affine(node)
        if value is None or not expand(value).is_nonnegative:
            return source_text(node)
    return None


def _is_unsigned(reader: ExpressionReader, node: c_ast.Node) -> bool:
    if isinstance(node, c_ast.Constant):
        return "u" in node.value.lower().lstrip("0x")
    if isinstance(node, c_ast.Cast):
        element = reader.types.resolve(node.to_type).element
    elif isinstance(node, c_ast.ID):
        variable = reader.scope.lookup(node.name)
        element = variable.ctype.element if variable and variable.ctype.is_scalar else None
    elif isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*"):
        return _is_unsigned(reader, node.left) or _is_unsigned(reader, node.right)
    else:
        return False
    return element is not None and "unsigned" in element.name
