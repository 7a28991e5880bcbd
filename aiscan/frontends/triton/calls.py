"""The `tl.*` calls a kernel makes: what each does to the block values, and the IR work
and accesses it adds through the kernel lowering (`kernel.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from aiscan.algebra import SYMPY, as_expression
from aiscan.frontends.triton import blocks, dtypes, operations
from aiscan.frontends.triton.tiles import (
    Pointer,
    Tile,
    axis_name,
    axis_symbol,
    broadcast_shapes,
    cdiv,
    reduced,
    without_axis,
)
from aiscan.ir.nodes import ElementType, FlopTally, UnknownKind
from aiscan.ir.symbols import loop_symbol, size_symbol

if TYPE_CHECKING:
    import sympy

    from aiscan.frontends.triton.kernel import KernelLowering, Value
else:
    sympy = SYMPY

__all__ = ["HANDLERS", "called_name", "cast", "elementwise", "reduction"]

_DOT_AXIS = "axk"


def cast(lowering: KernelLowering, node: cst.Call) -> Value:
    assert isinstance(node.func, cst.Attribute)
    operand = lowering.value(node.func.value)
    element = lowering.dtype(lowering.argument(node, 0, "dtype"))
    if isinstance(operand, Pointer) or element is None:
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"cast `{lowering.text(node)}` is not analyzed", node
        )
    if operand.element is None and not element.is_float:
        return operand  # an index stays an index
    return replace(operand, element=element, index=None, weak=False)


def _program_id(lowering: KernelLowering, node: cst.Call) -> Value:
    return Tile((), index=lowering.grid.program_id(_literal_axis(lowering, node)))


def _num_programs(lowering: KernelLowering, node: cst.Call) -> Value:
    axis = _literal_axis(lowering, node)
    grid = lowering.binding.grid
    if grid is not None and axis < len(grid):
        return Tile((), index=as_expression(grid[axis]))
    return Tile((), index=size_symbol(f"grid{axis}"))


def _literal_axis(lowering: KernelLowering, node: cst.Call) -> int:
    found = lowering.argument(node, 0, "axis")
    if isinstance(found, cst.Integer) and int(found.value) in (0, 1, 2):
        return int(found.value)
    raise lowering.unknown(
        UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}`: axis must be 0, 1 or 2", node
    )


def _arange(lowering: KernelLowering, node: cst.Call) -> Value:
    start = lowering.scalar_index(lowering.required(node, 0, "start"))
    end = lowering.scalar_index(lowering.required(node, 1, "end"))
    return Tile((as_expression(end - start),), index=start + axis_symbol(0))


def _cdiv(lowering: KernelLowering, node: cst.Call) -> Value:
    first = lowering.scalar_index(lowering.required(node, 0, "x"))
    second = lowering.scalar_index(lowering.required(node, 1, "div"))
    return Tile((), index=cdiv(first, second))


def _zeros(lowering: KernelLowering, node: cst.Call) -> Value:
    shape_node = lowering.required(node, 0, "shape")
    element = lowering.dtype(
        lowering.argument(node, 1 if called_name(node) == "tl.zeros" else 2, "dtype")
    )
    if not isinstance(shape_node, cst.Tuple | cst.List) or element is None:
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}`: shape or dtype not read", node
        )
    shape = tuple(as_expression(lowering.scalar_index(e.value)) for e in shape_node.elements)
    return Tile(shape, element=element)


def _load(lowering: KernelLowering, node: cst.Call) -> Value:
    pointer = lowering.value(lowering.required(node, 0, "pointer"))
    if not isinstance(pointer, Pointer):
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}`: not a pointer block", node
        )
    mask = _mask(lowering, node, 1) or blocks.boundary_mask(lowering, node, pointer)
    other = lowering.argument(node, 2, "other")
    if other is not None:
        lowering.value(other)
    valid = lowering.access(node, pointer, mask, is_write=False)
    return Tile(pointer.offset.shape, element=pointer.element, valid=valid)


def _store(lowering: KernelLowering, node: cst.Call) -> Value:
    pointer = lowering.value(lowering.required(node, 0, "pointer"))
    if not isinstance(pointer, Pointer):
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}`: not a pointer block", node
        )
    lowering.value(lowering.required(node, 1, "value"))
    mask = _mask(lowering, node, 2) or blocks.boundary_mask(lowering, node, pointer)
    lowering.access(node, pointer, mask, is_write=True)
    return Tile(())


def _atomic(lowering: KernelLowering, node: cst.Call) -> Value:
    """`tl.atomic_add(ptr, val, mask=)` and the other read-modify-writes: a read and a
    write per masked-in lane, an add FLOP per lane for a floating-point `atomic_add`
    (comparisons for `atomic_max`/`atomic_min` are none). Every program updating the
    same addresses is said on the line: those updates serialize."""
    name = called_name(node) or ""
    pointer = lowering.value(lowering.required(node, 0, "pointer"))
    if not isinstance(pointer, Pointer):
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}`: not a pointer block", node
        )
    value = lowering.value(lowering.required(node, 1, "val"))
    mask = _mask(lowering, node, 2)
    adds = name.endswith("atomic_add") and pointer.element.is_float
    tally = FlopTally(add=1) if adds else FlopTally()
    lowering.access(node, pointer, mask, is_write=False, atomic=tally)
    index = pointer.offset.index
    if index is not None and not (sympy.sympify(index).free_symbols & lowering.grid.variables()):
        lowering.note(
            node,
            f"every program's `{name}` updates the same address(es) of "
            f"{pointer.array}: the updates serialize there, which may bound the launch",
            UnknownKind.ATOMIC_CONTENTION,
        )
    del value
    return Tile(pointer.offset.shape, element=pointer.element)


def _mask(lowering: KernelLowering, node: cst.Call, position: int) -> Tile | None:
    found = lowering.argument(node, position, "mask")
    if found is None:
        return None
    mask = lowering.value(found)
    if isinstance(mask, Pointer) or not mask.is_bool:
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"mask `{lowering.text(found)}` is not a condition", found
        )
    return mask


def elementwise(lowering: KernelLowering, node: cst.Call, short: str) -> Value:
    operands = [lowering.value(a.value) for a in node.args if a.keyword is None]
    tiles = [o for o in operands if isinstance(o, Tile)]
    if len(tiles) != len(operands) or not tiles:
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}` is not analyzed", node
        )
    if short == "where":
        condition, tiles = tiles[0], tiles[1:]
        valid_extra = condition.valid
    else:
        valid_extra = sympy.true
    shape: tuple[sympy.Expr, ...] | None = ()
    element: ElementType | None = None
    valid: sympy.Basic = valid_extra
    for tile in tiles:
        shape = broadcast_shapes(shape or (), tile.shape) if shape is not None else None
        element = (
            tile.element
            if element is None
            else (element if tile.element is None else dtypes.wider(element, tile.element))
        )
        valid = sympy.And(valid, tile.valid)
    if shape is None:
        raise lowering.unknown(
            UnknownKind.UNKNOWN_SHAPE, f"shapes in `{lowering.text(node)}` do not broadcast", node
        )
    if element is None and any(t.weak for t in tiles):
        element = dtypes.FLOAT32
    if element is None:
        return Tile(shape, index=_index_of(short, tiles))
    if short in operations.SPECIALS:
        lowering.work(node, shape, FlopTally(special=1), valid, specials=(short,))
    elif short == "fma":
        lowering.work(node, shape, FlopTally(add=1, mul=1), valid)
    return Tile(shape, element=element, valid=valid)


def _index_of(short: str, tiles: list[Tile]) -> sympy.Expr | None:
    """The integer an element-wise call on index blocks gives, where it is one."""
    indices = [t.index for t in tiles]
    if short == "abs":
        return indices[0]
    if short in ("minimum", "maximum", "min", "max") and None not in indices:
        return (sympy.Min if short in ("minimum", "min") else sympy.Max)(
            *(sympy.sympify(i) for i in indices)
        )
    return None


def reduction(lowering: KernelLowering, node: cst.Call, short: str) -> Value:
    tile = lowering.value(lowering.required(node, 0, "input"))
    axis_node = lowering.argument(node, 1, "axis")
    if isinstance(tile, Pointer) or (tile.element is None and not tile.weak):
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}` on an index block", node
        )
    if axis_node is None or (isinstance(axis_node, cst.Name) and axis_node.value == "None"):
        axes = list(range(tile.rank - 1, -1, -1))
    elif isinstance(axis_node, cst.Integer) and 0 <= int(axis_node.value) < tile.rank:
        axes = [int(axis_node.value)]
    else:
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}`: axis not read", node
        )
    combine = operations.REDUCTIONS[short]
    for position in axes:
        if combine is not None:
            reduced_axis = axis_name(tile.rank - 1 - position)
            lowering.work(node, tile.shape, FlopTally(add=1), tile.valid, reduce=reduced_axis)
        tile = reduced(tile, position)
    return tile if short not in ("argmax", "argmin") else Tile(tile.shape, valid=tile.valid)


def _dot(lowering: KernelLowering, node: cst.Call) -> Value:
    first = lowering.value(lowering.required(node, 0, "input"))
    second = lowering.value(lowering.required(node, 1, "other"))
    acc_node = lowering.argument(node, 2, "acc")
    acc = lowering.value(acc_node) if acc_node is not None else None
    if (
        not isinstance(first, Tile)
        or not isinstance(second, Tile)
        or first.rank != 2
        or second.rank != 2
        or isinstance(acc, Pointer)
    ):
        raise lowering.unknown(
            UnknownKind.UNSUPPORTED, f"`{lowering.text(node)}`: 2-D blocks expected", node
        )
    rows, inner = first.shape
    columns = second.shape[1]
    k = loop_symbol(_DOT_AXIS)
    valid_a = (
        first.valid.subs({axis_symbol(0): k}, simultaneous=True)
        if first.valid is not sympy.true
        else sympy.true
    )
    valid_b = (
        second.valid.subs({axis_symbol(1): k}, simultaneous=True)
        if second.valid is not sympy.true
        else sympy.true
    )
    valid = sympy.And(valid_a, valid_b)
    lowering.work(
        node,
        (rows, columns),
        FlopTally(add=1, mul=1),
        valid,
        contraction=True,
        loops=[(_DOT_AXIS, inner, 0)],
    )
    element = first.element or dtypes.FLOAT32
    if element.precision == "fp32" and lowering.tf32 is None and _tf32_allowed(lowering, node):
        lowering.tf32 = "tl.dot runs float32 inputs in TF32 by default (input_precision='tf32')"
    result_element = (
        acc.element
        if acc is not None and acc.element
        else (dtypes.FLOAT32 if element.is_float else dtypes.INT32)
    )
    result_valid = without_axis(valid, k)
    if acc is not None:
        result_valid = sympy.And(result_valid, acc.valid)
    return Tile((rows, columns), element=result_element, valid=result_valid)


def _tf32_allowed(lowering: KernelLowering, node: cst.Call) -> bool:
    precision = lowering.argument(node, 99, "input_precision")
    if isinstance(precision, cst.SimpleString) and "ieee" in precision.value:
        return False
    allow = lowering.argument(node, 99, "allow_tf32")
    return not (isinstance(allow, cst.Name) and allow.value == "False")


HANDLERS: dict[str, Callable[[KernelLowering, cst.Call], Value]] = {
    "program_id": _program_id,
    "num_programs": _num_programs,
    "arange": _arange,
    "cdiv": _cdiv,
    "zeros": _zeros,
    "full": _zeros,
    "load": _load,
    "store": _store,
    "dot": _dot,
    "make_block_ptr": blocks.make_block_ptr,
    "advance": blocks.advance,
    "atomic_add": _atomic,
    "atomic_max": _atomic,
    "atomic_min": _atomic,
}


def called_name(node: cst.Call) -> str | None:
    """`tl.load` for `tl.load(...)`, `triton.language.load` spelled out reads as `tl.load`."""
    parts: list[str] = []
    func: cst.BaseExpression = node.func
    while isinstance(func, cst.Attribute):
        parts.append(func.attr.value)
        func = func.value
    if not isinstance(func, cst.Name):
        return None
    parts.append(func.value)
    dotted = ".".join(reversed(parts))
    for long in ("triton.language.", "tl.math.", "tl.extra.cuda.libdevice.", "libdevice."):
        if dotted.startswith(long):
            return "tl." + dotted.removeprefix(long)
    return dotted
