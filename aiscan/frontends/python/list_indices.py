"""Indexing by a list of integer literals: `x[:, [-1], :]` (nanoGPT keeps the last position
as an axis of one), NumPy's and PyTorch's advanced indexing.

The result is a copy of the positions the list names along its axis, the other axes as
they are. A list whose integers step evenly in one direction of one sign (one integer,
`[0, 2, 4]`, `[-2, -1]`) names the positions a slice names, so it is read as that slice,
then copied: its counts are exact. Any other list (several lists, which broadcast against
each other, or integers of both signs, whose positions depend on the extent) is not read.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

__all__ = ["listed_as_slice"]


def listed_as_slice(
    elements: Sequence[cst.SubscriptElement],
) -> list[cst.SubscriptElement] | str | None:
    """`elements` with its one list of integer literals replaced by the slice naming the
    same positions; None where no element is a list; why not, where it cannot be one."""
    lists = [
        k
        for k, e in enumerate(elements)
        if isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.List)
    ]
    if not lists:
        return None
    if len(lists) > 1:
        return "several list indices (they broadcast against each other)"
    (at,) = lists
    item = elements[at].slice
    assert isinstance(item, cst.Index) and isinstance(item.value, cst.List)
    values = [_integer(e.value) for e in item.value.elements]
    integers = [v for v in values if v is not None]
    if not integers or len(integers) != len(values):
        return "a list index of other than integer literals"
    text = _slice_text(integers)
    if text is None:
        return f"the list index {integers} is not evenly spaced upwards in one sign"
    parsed = cst.parse_expression(f"_[{text}]")
    assert isinstance(parsed, cst.Subscript)
    return [*elements[:at], parsed.slice[0], *elements[at + 1 :]]


def _integer(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
    ):
        return -int(node.expression.value, 0)
    return None


def _slice_text(integers: list[int]) -> str | None:
    """`first:stop:step` naming `integers` (stepping up, all of one sign); None otherwise."""
    first, last = integers[0], integers[-1]
    step = integers[1] - first if len(integers) > 1 else 1
    if step <= 0 or integers != list(range(first, last + 1, step)):
        return None
    if first < 0 <= last:
        return None
    stop = "" if last == -1 else str(last + 1)
    return f"{first}:{stop}:{step}"
