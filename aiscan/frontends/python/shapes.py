"""Array shapes: jaxtyping dimension strings, broadcasting, and exact slice extents.

Extents are sympy expressions in the program's size names; two extents agree when their
difference simplifies to zero. Like the analysis, slices assume sizes large enough that
bounds are in range (`a[1:-1]` of `n` elements has `n - 2`).
"""

from __future__ import annotations

import ast
import operator
import re
from functools import lru_cache

import sympy

from aiscan.frontends.python.symbols import size_symbol
from aiscan.frontends.python.values import Shape

__all__ = [
    "SliceView",
    "broadcast_shapes",
    "parse_dimensions",
    "same_extent",
    "shape_text",
    "slice_view",
]

_DIMENSION = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$|^\d+$")
_EXPRESSION = re.compile(r"^[A-Za-z0-9_+\-* ()]+$")


@lru_cache(maxsize=4096)
def parse_dimensions(text: str) -> Shape | str:
    """`"m k"` -> (m, k); a message saying why when the string has no fixed shape."""
    dims: list[sympy.Expr] = []
    for word in text.split():
        if word in ("...", "_") or word.startswith(("*", "#", "?")):
            return f'dimension `{word}` in "{text}" has no fixed extent'
        word = word.split("=", 1)[-1]
        if _DIMENSION.match(word):
            dims.append(sympy.Integer(int(word)) if word.isdigit() else size_symbol(word))
        elif _EXPRESSION.match(word) and (extent := _extent_expression(word)) is not None:
            dims.append(extent)
        else:
            return f'cannot read dimension `{word}` in "{text}"'
    return tuple(dims)


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def _extent_expression(text: str) -> sympy.Expr | None:
    """`n+1`, `2*n`, `(m-1)*k`: parsed, never evaluated (no sympify/eval of user text)."""
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        return sympy.expand(_build(tree))
    except (_NotAnExtent, RecursionError):
        return None


class _NotAnExtent(Exception):
    pass


def _build(node: ast.expr) -> sympy.Expr:
    if isinstance(node, ast.Name):
        return size_symbol(node.id)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sympy.Integer(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_build(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        result: sympy.Expr = _OPERATORS[type(node.op)](_build(node.left), _build(node.right))
        return result
    raise _NotAnExtent


def same_extent(a: sympy.Expr, b: sympy.Expr) -> bool:
    return a == b or bool(sympy.expand(a - b) == 0)


def shape_text(shape: Shape) -> str:
    """`(n, m)`, `(n,)`: a shape as Python prints a tuple."""
    return "(" + ", ".join(str(e) for e in shape) + ("," if len(shape) == 1 else "") + ")"


def broadcast_shapes(a: Shape, b: Shape) -> Shape | None:
    """NumPy broadcasting; None when extents differ and neither is 1."""
    rank = max(len(a), len(b))
    padded_a = (sympy.Integer(1),) * (rank - len(a)) + tuple(a)
    padded_b = (sympy.Integer(1),) * (rank - len(b)) + tuple(b)
    out: list[sympy.Expr] = []
    one = sympy.S.One
    for x, y in zip(padded_a, padded_b, strict=True):
        # Identity first: it decides most extents without a sympy comparison.
        if x is one or x is y or x == 1:
            out.append(y)
        elif y == 1 or same_extent(x, y):
            out.append(x)
        else:
            return None
    return tuple(out)


class SliceView:
    """One sliced dimension: `length` elements at base index `offset + step * t`."""

    def __init__(self, length: sympy.Expr, offset: sympy.Expr, step: int) -> None:
        self.length = length
        self.offset = offset
        self.step = step


def slice_view(
    extent: sympy.Expr, start: sympy.Expr | None, stop: sympy.Expr | None, step: int
) -> SliceView:
    """Python slice semantics with negative bounds counted from the end (`-1` is `extent-1`)."""

    def absolute(bound: sympy.Expr) -> sympy.Expr:
        return extent + bound if bound.is_number and bound < 0 else bound

    if step > 0:
        low = sympy.Integer(0) if start is None else absolute(start)
        high = extent if stop is None else absolute(stop)
        distance = sympy.expand(high - low)
    else:
        low = extent - 1 if start is None else absolute(start)
        high = sympy.Integer(-1) if stop is None else absolute(stop)
        distance = sympy.expand(low - high)
    magnitude = abs(step)
    length = distance if magnitude == 1 else sympy.ceiling(distance / magnitude)
    if length.is_number and length < 0:
        length = sympy.Integer(0)
    return SliceView(sympy.expand(length), sympy.expand(low), step)
