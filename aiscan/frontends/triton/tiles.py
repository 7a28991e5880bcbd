"""Triton block values as the kernel lowering tracks them.

A block of rank r names its axes from the right: the last axis is `ax0`, the one before it
`ax1`, and so on, so NumPy-style broadcasting (shapes aligned on the right) never renames an
axis; `x[:, None]` and reductions do, by substitution. An index block (`pid * BLOCK +
tl.arange(0, BLOCK)`) carries its value as an affine expression in program ids, loop
counters and these axis variables; a data block (a load, arithmetic on floats) carries only
its shape, its dtype and `valid`, the lanes whose inputs were masked in (for useful FLOPs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY
from aiscan.ir.nodes import ElementType
from aiscan.ir.symbols import loop_symbol

if TYPE_CHECKING:
    import sympy

    from aiscan.frontends.triton.blocks import BlockPointer
else:
    sympy = SYMPY

__all__ = [
    "Pointer",
    "Tile",
    "axis_name",
    "axis_symbol",
    "broadcast_shapes",
    "cdiv",
    "reduced",
    "reshaped",
    "without_axis",
]


def axis_name(from_right: int) -> str:
    return f"ax{from_right}"


def axis_symbol(from_right: int) -> sympy.Expr:
    return loop_symbol(axis_name(from_right))


@dataclass(frozen=True, slots=True)
class Tile:
    """A block (rank 0: a scalar) with its extents, 1 where broadcast."""

    shape: tuple[sympy.Expr, ...]
    index: sympy.Expr | None = None
    """The integer value of every lane, affine; None for data or unknown integers."""
    element: ElementType | None = None
    """None for index arithmetic (never a FLOP)."""
    valid: sympy.Basic = sympy.true
    """The lanes whose loaded inputs are masked in."""
    is_bool: bool = False
    condition: sympy.Basic | None = None
    """A boolean block's relation in its lanes (`offsets < n`); None if it reads data."""
    weak: bool = False
    """A Python float literal: it takes the other operand's dtype."""

    @property
    def rank(self) -> int:
        return len(self.shape)

    def substituted(self, mapping: dict[sympy.Expr, sympy.Expr]) -> Tile:
        if not mapping:
            return self
        return replace(
            self,
            index=None if self.index is None else _subs(self.index, mapping),
            valid=_subs(self.valid, mapping),
            condition=None if self.condition is None else _subs(self.condition, mapping),
        )


@dataclass(frozen=True, slots=True)
class Pointer:
    """A block of addresses into one pointer argument: `array + offset`."""

    array: str
    element: ElementType
    offset: Tile
    block: BlockPointer | None = None
    """`tl.make_block_ptr`'s window, for `tl.advance` and `boundary_check`."""


def _subs(expr: sympy.Basic, mapping: dict[sympy.Expr, sympy.Expr]) -> sympy.Basic:
    return sympy.sympify(expr).subs(mapping, simultaneous=True)


def broadcast_shapes(
    first: Sequence[sympy.Expr], second: Sequence[sympy.Expr]
) -> tuple[sympy.Expr, ...] | None:
    """NumPy's rule, aligned on the right; None when two extents differ."""
    rank = max(len(first), len(second))
    a = (1,) * (rank - len(first)) + tuple(first)
    b = (1,) * (rank - len(second)) + tuple(second)
    shape: list[sympy.Expr] = []
    for x, y in zip(a, b, strict=True):
        if x == 1:
            shape.append(y)
        elif y == 1 or sympy.simplify(sympy.sympify(x) - y) == 0:
            shape.append(x)
        else:
            return None
    return tuple(shape)


def reshaped(tile: Tile, entries: Sequence[str]) -> Tile | None:
    """`tile[:, None]`: entries are `slice` (keep the next axis) or `none` (a new axis of
    extent 1); None when they do not fit the tile's rank."""
    if sum(1 for e in entries if e == "slice") != tile.rank:
        return None
    new_rank = len(entries)
    shape: list[sympy.Expr] = []
    mapping: dict[sympy.Expr, sympy.Expr] = {}
    old = 0
    for position, entry in enumerate(entries):
        if entry == "none":
            shape.append(sympy.Integer(1))
            continue
        mapping[axis_symbol(tile.rank - 1 - old)] = axis_symbol(new_rank - 1 - position)
        shape.append(tile.shape[old])
        old += 1
    moved = {k: v for k, v in mapping.items() if k != v}
    return replace(tile.substituted(moved), shape=tuple(shape))


def without_axis(condition: sympy.Basic, axis: sympy.Expr) -> sympy.Basic:
    """The conjuncts of `condition` that do not mention `axis` (lanes of a reduction's
    result are valid where every other condition holds)."""
    parts = condition.args if isinstance(condition, sympy.And) else (condition,)
    kept = [p for p in parts if axis not in sympy.sympify(p).free_symbols]
    return sympy.And(*kept) if kept else sympy.true


def reduced(tile: Tile, position: int) -> Tile:
    """`tile` with axis `position` (from the left) reduced away: the axes left of it move
    one step to the right in the naming."""
    removed = axis_symbol(tile.rank - 1 - position)
    valid = without_axis(tile.valid, removed)
    mapping = {
        axis_symbol(tile.rank - 1 - p): axis_symbol(tile.rank - 2 - p) for p in range(position)
    }
    shape = tile.shape[:position] + tile.shape[position + 1 :]
    result = replace(tile, valid=valid, index=None, condition=None)
    return replace(result.substituted(mapping), shape=shape)


def cdiv(numerator: sympy.Expr, denominator: sympy.Expr) -> sympy.Expr:
    """`triton.cdiv`: the tile count `aiscan.ir.tiles` recognises over masked lanes."""
    return sympy.ceiling(sympy.sympify(numerator) / denominator)
