"""Block pointers: `tl.make_block_ptr`, `tl.advance`, and `boundary_check` on their loads
and stores.

A block pointer is a window of `block_shape` into a tensor of `shape` with `strides`, at
`offsets`: it addresses what `base + sum((offset_d + lane_d) * stride_d)` does, and a
`boundary_check` on dimension d keeps the lanes with `offset_d + lane_d < shape_d`, the
same mask the pointer-arithmetic spelling writes by hand, so both count alike.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import libcst as cst

from aiscan.algebra import SYMPY, as_expression
from aiscan.frontends.triton.tiles import Pointer, Tile, axis_symbol
from aiscan.ir.nodes import UnknownKind

if TYPE_CHECKING:
    import sympy

    from aiscan.frontends.triton.kernel import KernelLowering, Value
else:
    sympy = SYMPY

__all__ = ["BlockPointer", "advance", "advanced", "boundary_mask", "make_block_ptr"]


@dataclass(frozen=True, slots=True)
class BlockPointer:
    """What a block pointer adds to a pointer: the tensor's extents and strides, and the
    window's offsets, per dimension."""

    shape: tuple[sympy.Expr, ...]
    strides: tuple[sympy.Expr, ...]
    offsets: tuple[sympy.Expr, ...]
    base: sympy.Expr
    """The base pointer's own offset (`a_ptr + head * stride_h`)."""


def _index(block: BlockPointer) -> sympy.Expr:
    rank = len(block.offsets)
    return block.base + sum(
        (
            (offset + axis_symbol(rank - 1 - d)) * stride
            for d, (offset, stride) in enumerate(zip(block.offsets, block.strides, strict=True))
        ),
        sympy.Integer(0),
    )


def _pointer(pointer: Pointer, block: BlockPointer, extents: tuple[sympy.Expr, ...]) -> Pointer:
    return replace(pointer, offset=Tile(extents, index=as_expression(_index(block))), block=block)


def make_block_ptr(lowering: KernelLowering, node: cst.Call) -> Value:
    base = lowering.value(lowering.required(node, 0, "base"))
    if not isinstance(base, Pointer) or base.offset.rank or base.offset.index is None:
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}`: base is not a pointer", node
        )
    fields = [
        _integers(lowering, lowering.required(node, position, keyword))
        for position, keyword in enumerate(("shape", "strides", "offsets", "block_shape"), 1)
    ]
    shape, strides, offsets, extents = fields
    if len({len(f) for f in fields}) != 1:
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED,
            f"`{lowering.text(node)}`: shape, strides, offsets and block_shape differ in rank",
            node,
        )
    block = BlockPointer(shape, strides, offsets, base.offset.index)
    return _pointer(base, block, extents)


def advance(lowering: KernelLowering, node: cst.Call) -> Value:
    pointer = lowering.value(lowering.required(node, 0, "base"))
    deltas = _integers(lowering, lowering.required(node, 1, "offsets"))
    if not isinstance(pointer, Pointer) or pointer.block is None:
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}`: not a block pointer", node
        )
    if len(deltas) != len(pointer.block.offsets):
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}`: offsets of another rank", node
        )
    return advanced(pointer, deltas, sympy.Integer(1))


def advanced(pointer: Pointer, deltas: tuple[sympy.Expr, ...], times: sympy.Expr) -> Pointer:
    """`pointer` advanced `times` times by `deltas` (a loop's carried `tl.advance`)."""
    assert pointer.block is not None
    offsets = tuple(
        as_expression(sympy.expand(o + times * d))
        for o, d in zip(pointer.block.offsets, deltas, strict=True)
    )
    return _pointer(pointer, replace(pointer.block, offsets=offsets), pointer.offset.shape)


def boundary_mask(lowering: KernelLowering, node: cst.Call, pointer: Pointer) -> Tile | None:
    """The lanes a load's or store's `boundary_check=(0, 1)` keeps; None without one."""
    found = lowering.argument(node, 99, "boundary_check")
    if found is None or pointer.block is None:
        return None
    dims = _integers(lowering, found)
    rank = len(pointer.block.offsets)
    conditions = []
    for dim in dims:
        position = int(dim) if sympy.sympify(dim).is_Integer else -1
        if not 0 <= position < rank:
            raise lowering.unknown(
                UnknownKind.UNSUPPORTED, f"`{lowering.text(found)}`: dimension not read", found
            )
        lane = pointer.block.offsets[position] + axis_symbol(rank - 1 - position)
        conditions.append(sympy.StrictLessThan(lane, pointer.block.shape[position]))
    return Tile(pointer.offset.shape, is_bool=True, condition=sympy.And(*conditions))


def _integers(lowering: KernelLowering, node: cst.BaseExpression) -> tuple[sympy.Expr, ...]:
    if not isinstance(node, cst.Tuple | cst.List):
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}`: expected a tuple", node
        )
    return tuple(as_expression(lowering.scalar_index(e.value)) for e in node.elements)
