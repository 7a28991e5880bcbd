"""Data-dependent ranges and integer-array gathers (issue 28, construct 5), as CSR code
writes them: `cols = A_col[A_row[i]:A_row[i + 1]]`, then `vals @ x[cols]`.

A slice whose bounds are consecutive entries of one array (`P[e]` to `P[e + 1]`) runs over
a data-dependent number of elements. It is named, never guessed: `len_L<line>` (a trip-like
symbol, after the first line slicing by that pair), the mean length over the passes, so
counts linear in it are exact at that mean. The runs are taken as contiguous and in order
(`P` holds pointers, as CSR's row pointers do): pass `e` starts at `e * len_L<line>`, so
the passes cover distinct elements, as they do in CSR.

`x[cols]` with `cols` an array of integers is a gather: a new array of `cols`'s length,
each element read from `x` at a position the data gives (0 FLOPs, `cols` and the gathered
elements read, the result written). Which elements of `x` it reads is not known: they are
counted as distinct per gathered position, an upper bound on compulsory traffic where
positions repeat, said on the line.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.symbols import trip_symbol
from aiscan.frontends.python.values import Apply, Integer, Leaf, coordinate, substituted
from aiscan.ir.nodes import Unknown, UnknownKind

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader, Value

__all__ = ["NOT_A_GATHER", "pointer_range", "read_gather"]

NOT_A_GATHER = object()
"""`read_gather`'s answer when the index is not an array of integers."""


def pointer_range(
    reader: ExpressionReader, item: cst.Slice, node: cst.CSTNode
) -> tuple[sympy.Expr, sympy.Expr] | None:
    """`(length, offset)` of `a[P[e]:P[e + 1]]` (no step): `len_L<line>` elements from
    `e * len_L<line>`; None (nothing noted) for any other slice."""
    bounds = (item.lower, item.upper)
    if item.step is not None or not all(isinstance(b, cst.Subscript) for b in bounds):
        return None
    lower, upper = bounds
    assert isinstance(lower, cst.Subscript) and isinstance(upper, cst.Subscript)
    pointers = reader.names.text(lower.value)
    if pointers != reader.names.text(upper.value) or not isinstance(lower.value, cst.Name):
        return None
    array = reader.scope.names.get(pointers)
    if not (isinstance(array, Leaf) and len(array.shape) == 1):
        return None
    positions = [_position(reader, b) for b in (lower, upper)]
    if positions[0] is None or positions[1] is None:
        return None
    if sympy.expand(positions[1] - positions[0]) != 1:
        return None
    key = (pointers, str(positions[0]))
    length = reader.pointer_lengths.get(key)
    text = f"{reader.names.text(lower)}:{reader.names.text(upper)}"
    if length is None:
        length = trip_symbol(f"len_L{reader.span(node).line}")
        reader.pointer_lengths[key] = length
    message = (
        f"gathered length: `{text}` spans a data-dependent number of elements, named "
        f"{length} (the mean over the passes; the runs of `{pointers}` taken as contiguous "
        "and in order, as CSR's row pointers are)"
    )
    reader.unknowns.append(
        Unknown(UnknownKind.DATA_DEPENDENT_BOUND, message, reader.span(node), str(length))
    )
    return length, sympy.expand(positions[0] * length)


def _position(reader: ExpressionReader, bound: cst.Subscript) -> sympy.Expr | None:
    """The integer index `e` of a slice bound `P[e]`, or None."""
    if len(bound.slice) != 1 or not isinstance(bound.slice[0].slice, cst.Index):
        return None
    noted = len(reader.unknowns)
    value = reader.value(bound.slice[0].slice.value)
    del reader.unknowns[noted:]
    return value.value if isinstance(value, Integer) else None


def read_gather(
    reader: ExpressionReader, base: Leaf, index_node: cst.BaseExpression, node: cst.Subscript
) -> Value | object | None:
    """`base[cols]`, `cols` a named 1-d array that is not a mask: a gather of `cols`'s
    length along `base`'s first axis; `NOT_A_GATHER` for any other index."""
    if not isinstance(index_node, cst.Name):
        return NOT_A_GATHER
    index = reader.scope.names.get(index_node.value)
    if not (isinstance(index, Leaf) and len(index.shape) == 1 and base.shape):
        return NOT_A_GATHER
    if index.element == dtypes.BOOL:
        return NOT_A_GATHER
    text = reader.names.text(node)
    # One element of `base` per gathered position, where `cols` itself sits (distinct per
    # position): the rest of `base`'s axes as they are.
    at = {coordinate(0): index.index[0]} if index.index else {}
    positions = tuple(substituted(e, at, simultaneous=True) for e in base.index)
    shape = (index.shape[0], *base.shape[1:])
    read = Leaf(base.array, base.element, shape, positions, text, reader.span(node))
    message = (
        f"`{text}` gathers {index.shape[0]} elements of `{base.array}` at positions read "
        f"from `{index.array}`: counted as distinct elements (an upper bound where they "
        "repeat)"
    )
    reader.unknowns.append(
        Unknown(UnknownKind.DATA_DEPENDENT_BOUND, f"gathered: {message}", reader.span(node))
    )
    gathered = reader.elementwise("free", "take", (read, index), node, text)
    if isinstance(gathered, Apply):
        return replace(gathered, element=base.element)  # `x`'s elements, whatever `cols` is
    return gathered
