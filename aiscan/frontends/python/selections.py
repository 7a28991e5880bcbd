"""Reading a boolean selection `x[mask]` (NumPy's boolean indexing) as a named fraction.

A selection packs the elements where the mask holds into a new array whose length depends
on the data. Its work is modeled as a branch per element of the mask, as a data-dependent
`if` is: the mask is evaluated for every element, and what is done with the selected
elements runs for the share `p_L<line>` of them that the mask selects (a named fraction,
never a guess). The selection then has `p_L<line> * N` elements for a mask of N.

Elementwise operations on selections by one mask stay one selection (`x[m] * 2.0` is the
selection of `x * 2.0`); a full reduction of a selection counts as a reduction of its
`p * N` elements (`k - 1` adds for `k` of them). What the frontend cannot place (two masks
in one expression, a selection beside an array of the mask's shape, a reduction along some
axes only) is a located `unsupported` unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.shapes import broadcast_shapes, same_extent, shape_text
from aiscan.frontends.python.symbols import fraction_symbol
from aiscan.frontends.python.values import Apply, ArrayValue, Leaf, Reduce, Select, Shape
from aiscan.ir.nodes import Unknown, UnknownKind

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader, Value

__all__ = [
    "NOT_A_MASK",
    "is_mask",
    "mask_fraction",
    "misplaced_selection",
    "read_selection",
    "select_elementwise",
]

NOT_A_MASK = object()
"""`read_selection`'s answer when the index is not a boolean array (an ordinary index)."""

_MASK_SYNTAX = (cst.Comparison, cst.BinaryOperation, cst.UnaryOperation, cst.Call)


def is_mask(value: object) -> bool:
    """A boolean array (`x > 0`, a named `m = x > y`, `~m`, `a & b`)."""
    return isinstance(value, (Leaf, Apply)) and bool(value.shape) and value.element == dtypes.BOOL


def mask_fraction(
    reader: ExpressionReader, mask_node: cst.BaseExpression, line: int
) -> sympy.Symbol:
    """The fraction a mask selects: `p_L<line>` of the line where a named mask is bound
    (`m = x > y`: every selection and masked store by `m` shares it), else of `line`, the
    line of the selection or the masked store."""
    if isinstance(mask_node, cst.Name):
        binding = reader.scope.names.get(mask_node.value)
        if isinstance(binding, Leaf) and binding.array == mask_node.value:
            line = binding.span.line
    return fraction_symbol(f"p_L{line}")


def read_selection(
    reader: ExpressionReader, base: Leaf, mask_node: cst.BaseExpression, node: cst.Subscript
) -> Value | object | None:
    """`base[mask_node]` as a `Select`; None (with a note) for a mask that does not fit
    `base`; `NOT_A_MASK` (nothing noted) when the index is not a boolean array."""
    if isinstance(mask_node, cst.Name):
        if not is_mask(reader.scope.names.get(mask_node.value)):
            return NOT_A_MASK
    elif not isinstance(mask_node, _MASK_SYNTAX):
        return NOT_A_MASK
    noted, constructed = len(reader.unknowns), len(reader.pending)
    mask = reader.value(mask_node)
    if not is_mask(mask):
        del reader.unknowns[noted:]  # an ordinary index: the view reads it again
        del reader.pending[constructed:]
        return NOT_A_MASK
    assert isinstance(mask, (Leaf, Apply))
    text = reader.names.text(node)
    if len(mask.shape) <= len(base.shape) and _inferred(reader, mask.shape, base.shape):
        # NumPy raises unless a mask has the shape of the axes it selects: where either
        # side is an extent aiscan named (`radius_d0`, `data_d0`), they are the same one.
        reader.unify(mask.shape, base.shape[: len(mask.shape)])
    elif not (len(mask.shape) <= len(base.shape) and all(map(same_extent, mask.shape, base.shape))):
        return _refuse(
            reader,
            node,
            f"`{text}`: a mask of shape {shape_text(mask.shape)} does not match the leading "
            f"axes of {shape_text(base.shape)} (NumPy raises an IndexError)",
        )
    span = reader.span(node)
    fraction = mask_fraction(reader, mask_node, span.line)
    unknown = Unknown(
        UnknownKind.BRANCH_FRACTION,
        f"boolean mask `{mask.text}`: the fraction of elements it selects is named {fraction}",
        span,
        str(fraction),
    )
    count = fraction * sympy.Mul(*mask.shape)
    shape = (count, *base.shape[len(mask.shape) :])
    return Select(base, mask, fraction, unknown, base.element, shape, text, span)


def select_elementwise(
    reader: ExpressionReader,
    op: str,
    name: str,
    operands: Sequence[ArrayValue],
    node: cst.CSTNode,
    text: str | None,
    repeat: int,
) -> ArrayValue | None:
    """An elementwise operation with a selection among its operands: the selection of the
    operation on the full arrays, when every other operand is a selection by the same
    mask, a scalar, or an array broadcast along the axes the mask leaves (`A[keep] * w`)."""
    first = next(o for o in operands if isinstance(o, Select))
    said = reader.names.text(node)
    kept = len(first.shape) - 1  # the axes after the selected one
    inner: list[ArrayValue] = []
    for operand in operands:
        if isinstance(operand, Select):
            if operand.mask_text != first.mask_text or operand.fraction != first.fraction:
                return _refuse(
                    reader,
                    node,
                    f"`{said}` combines selections by two masks (NumPy raises unless they "
                    "select as many elements)",
                )
            inner.append(operand.operand)
        elif all(e == 1 for e in operand.shape) and len(operand.shape) <= len(first.shape):
            inner.append(operand)  # a scalar, or a reduction kept with unit axes
        elif len(operand.shape) <= kept and broadcast_shapes(
            first.shape[1:], operand.shape
        ) == tuple(first.shape[1:]):
            inner.append(operand)
        else:
            return _refuse(
                reader,
                node,
                f"`{said}` combines the selection `{first.text}` (a data-dependent length) "
                f"with `{operand.text}` of shape {shape_text(operand.shape)}",
            )
    value = reader.elementwise(op, name, inner, node, text, repeat)
    if value is None:
        return None
    if not isinstance(value, (Leaf, Apply)):
        return _refuse(reader, node, f"`{said}` on a selection")
    shape = (first.shape[0], *value.shape[len(first.mask.shape) :])
    return replace(first, operand=value, element=value.element, shape=shape, text=text or said)


def misplaced_selection(value: ArrayValue, root: bool) -> Select | None:
    """A selection where the lowering cannot place it: anywhere but the value itself
    (`root`, assigned to a new name or returned) or the operand of a full reduction. The
    reader builds no other; library code that builds its own trees might."""
    if isinstance(value, Select):
        if not root:
            return value
        return misplaced_selection(value.operand, False) or misplaced_selection(value.mask, False)
    if isinstance(value, Reduce):
        if isinstance(value.operand, Select):
            return misplaced_selection(value.operand, True)
        return misplaced_selection(value.operand, False)
    if isinstance(value, Apply):
        for child in value.operands:
            found = misplaced_selection(child, False)
            if found is not None:
                return found
        return None
    children = getattr(value, "operands", ())
    for child in children:
        found = misplaced_selection(child, False)
        if found is not None:
            return found
    return None


def _inferred(reader: ExpressionReader, mask: Shape, base: Shape) -> bool:
    """Do the mask's extents differ from the base's only where one of them is an extent
    aiscan named for an un-annotated array (matched by a second lowering)?"""
    different = [(m, b) for m, b in zip(mask, base, strict=False) if not same_extent(m, b)]
    return bool(different) and all(
        any(s in reader.free for s in (m.free_symbols | b.free_symbols)) for m, b in different
    )


def _refuse(reader: ExpressionReader, node: cst.CSTNode, message: str) -> ArrayValue | None:
    """Say what is not modeled (an `unsupported` unknown at `node`); the value is None."""
    reader.unsupported(node, message)
    return None
