"""`q, k, v = x.split(n, dim=2)`, `a, b = x.chunk(2, dim=-1)`, `r, i = x.unbind(-1)`: a
tensor cut into views.

PyTorch's `split` and `chunk` return views of their input, so the parts move nothing: the
tensor is computed once (its own eager kernel when it is an expression, as `self.c_attn(x)`
in GPT's attention) and each target is the slice `x[..., i*w:(i + 1)*w]` along the axis,
read by the frontend's slicing like any other view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from aiscan.frontends.python.arguments import _keyword, _positional

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader

__all__ = ["Pieces", "split_pieces"]

_SPLITTERS = {"split": "split", "chunk": "chunk", "torch.split": "split", "torch.chunk": "chunk"}


@dataclass(frozen=True, slots=True)
class Pieces:
    """A `split` (each part `size` wide) or `chunk` (`size` parts) of `base` along `axis`."""

    base: cst.BaseExpression
    kind: str
    size: cst.BaseExpression
    axis: int
    width_name: str
    """The name the part width is bound to, for the slices' bounds."""

    def part(self, base: cst.Name, index: int) -> cst.BaseExpression:
        """`base[:, :, i*w:(i + 1)*w]`: the `index`-th part as a slice of `base` (`base[...,
        i]` for `unbind`, which drops the axis)."""
        bounds = f"{index} * {self.width_name}:{index + 1} * {self.width_name}"
        if self.kind == "unbind":
            bounds = str(index)
        if self.axis >= 0:
            index_text = ", ".join([":"] * self.axis + [bounds])
        else:
            index_text = ", ".join(["...", bounds] + [":"] * (-self.axis - 1))
        return cst.parse_expression(f"{base.value}[{index_text}]")


def split_pieces(node: cst.BaseExpression, count: int, reader: ExpressionReader) -> Pieces | None:
    """The pieces `node` cuts when it is `x.split(n, dim)`, `x.chunk(k, dim)` or their
    `torch.` forms with a literal axis; None for anything else (a list of sizes too)."""
    if not isinstance(node, cst.Call) or reader.framework != "torch":
        return None
    arguments = list(_positional(node))
    canonical = reader.names.canonical(node.func)
    if canonical in _SPLITTERS:
        kind = _SPLITTERS[canonical]
        if not arguments:
            return None
        base = arguments.pop(0)
    elif isinstance(node.func, cst.Attribute) and node.func.attr.value in ("split", "chunk"):
        if canonical is not None:
            return None
        kind = node.func.attr.value
        base = node.func.value
    elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "unbind":
        # `xq_r, xq_i = x.reshape(..., -1, 2).unbind(-1)` (llama2.c's rotary embedding):
        # `count` views, each `x[..., i]`.
        axis_node = arguments[0] if arguments else _keyword(node, "dim")
        axis = _literal_axis(axis_node) if axis_node is not None else 0
        if axis is None or canonical is not None:
            return None
        return Pieces(node.func.value, "unbind", cst.Integer(str(count)), axis, "")
    else:
        return None
    size = arguments[0] if arguments else _keyword(node, "split_size_or_sections")
    size = size or _keyword(node, "split_size") or _keyword(node, "chunks")
    axis_node = arguments[1] if len(arguments) > 1 else _keyword(node, "dim")
    axis = _literal_axis(axis_node) if axis_node is not None else 0
    if size is None or axis is None or isinstance(size, (cst.List, cst.Tuple)) or count < 1:
        return None
    line = reader.names.span(node).line
    return Pieces(base, kind, size, axis, f"{kind}_width_L{line}")


def _literal_axis(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
    ):
        return -int(node.expression.value)
    return None
