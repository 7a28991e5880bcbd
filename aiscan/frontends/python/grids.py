"""`np.mgrid`, `np.ogrid` and `np.meshgrid`: coordinate arrays, and gathers by them.

A grid is a new array NumPy writes in full (`np.indices` for `mgrid`, copies of broadcast
views for `meshgrid`), so each part is an `Allocation` whose work is its writes: integer
ranges fill by index arithmetic (0 FLOPs, as `np.arange`). An `mgrid`/`ogrid` part holds a
known integer at each element (`start + step * i` on its axis), which makes a gather by it
(`np.linspace(a, b, n)[I]`) a view with an affine index: the gather reads the index array
and the elements it names, and writes a new array of the index's shape.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.arguments import _keyword, _positional
from aiscan.frontends.python.constructions import Construction
from aiscan.frontends.python.expressions import Allocation, number_literal, string_literal
from aiscan.frontends.python.shapes import same_extent
from aiscan.frontends.python.values import (
    Apply,
    ArrayValue,
    Leaf,
    Scalar,
    Shape,
    coordinate,
    substituted,
)

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader
    from aiscan.frontends.python.nests import Namer
    from aiscan.span import Span

__all__ = ["GridPart", "gather_by_grid", "grid_parts", "is_grid", "whole_grid"]

_INDEX_GRIDS = frozenset({"numpy.mgrid", "numpy.ogrid"})


@dataclass(frozen=True, slots=True)
class GridPart:
    """One array a grid unpacks into: a new array (or, `copy=False`, a view) and, for an
    `mgrid`/`ogrid` part, the integer each element holds in view coordinates."""

    value: Allocation | Leaf
    holds: sympy.Expr | None = None


@dataclass(frozen=True, slots=True)
class _Range:
    start: sympy.Expr
    step: int
    length: sympy.Expr


def is_grid(reader: ExpressionReader, node: cst.BaseExpression) -> bool:
    """`np.mgrid[...]`, `np.ogrid[...]` or `np.meshgrid(...)`."""
    if isinstance(node, cst.Subscript):
        return reader.names.canonical(node.value) in _INDEX_GRIDS
    if isinstance(node, cst.Call):
        return reader.names.canonical(node.func) == "numpy.meshgrid"
    return False


def grid_parts(reader: ExpressionReader, node: cst.BaseExpression) -> list[GridPart] | None:
    """The arrays `I, J = np.mgrid[0:n, 0:m]` (or `ogrid`, `meshgrid`) unpacks; None (noted)
    for a form not modeled."""
    if isinstance(node, cst.Call):
        return _meshgrid(reader, node)
    assert isinstance(node, cst.Subscript)
    ranges = _ranges(reader, node)
    if ranges is None:
        return None
    sparse = reader.names.canonical(node.value) == "numpy.ogrid"
    full = tuple(r.length for r in ranges)
    text = reader.names.text(node)
    parts = []
    for axis, part in enumerate(ranges):
        shape = (
            tuple(e if d == axis else sympy.Integer(1) for d, e in enumerate(full))
            if sparse
            else full
        )
        holds = sympy.expand(part.start + part.step * coordinate(axis))
        parts.append(GridPart(_filled(shape, f"{text}[{axis}]"), holds))
    return parts


def whole_grid(reader: ExpressionReader, node: cst.Subscript) -> Allocation | None:
    """`G = np.mgrid[0:n, 0:m]` kept whole: one `(2, n, m)` array (`np.mgrid[0:n]` is
    `np.arange(n)`); an `ogrid` of several ranges is a tuple, modeled only unpacked."""
    ranges = _ranges(reader, node)
    if ranges is None:
        return None
    text = reader.names.text(node)
    shape = tuple(r.length for r in ranges)
    if len(ranges) == 1:
        return _filled(shape, text)
    if reader.names.canonical(node.value) == "numpy.ogrid":
        reader.unsupported(node, f"`{text}` not unpacked (a tuple of arrays)")
        return None
    return _filled((sympy.Integer(len(ranges)), *shape), text)


def _filled(shape: Shape, text: str) -> Allocation:
    """An integer array NumPy writes in full, by index arithmetic (no FLOPs)."""

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        return Construction(((leaf, Scalar(leaf.element, False, text, constant=True)),))

    return Allocation(shape, dtypes.INT64, True, text, build)


def _ranges(reader: ExpressionReader, node: cst.Subscript) -> list[_Range] | None:
    """The integer ranges `start:stop:step` of a grid's subscript (noted otherwise)."""
    text = reader.names.text(node)
    ranges = []
    for element in node.slice:
        item = element.slice
        if not isinstance(item, cst.Slice) or item.upper is None:
            reader.unsupported(node, f"`{text}`: a grid axis that is not a `start:stop` range")
            return None
        step = 1 if item.step is None else number_literal(item.step)
        if not isinstance(step, int) or isinstance(step, bool) or step == 0:
            reader.unsupported(
                node, f"`{text}`: only integer ranges with a literal integer step are modeled"
            )
            return None
        start = sympy.Integer(0) if item.lower is None else reader.integer(item.lower)
        stop = reader.integer(item.upper)
        if start is None or stop is None:
            return None
        distance = sympy.expand(stop - start)
        length = distance if step == 1 else sympy.ceiling(distance / step)
        ranges.append(_Range(start, step, length))
    return ranges


def _meshgrid(reader: ExpressionReader, node: cst.Call) -> list[GridPart] | None:
    """`np.meshgrid(x, y, ..., indexing="xy", sparse=False, copy=True)` of 1-d arrays: part
    `k` is `x_k` broadcast along its own axis (the first two axes swapped for `"xy"`),
    copied into a new array (`copy=False`: the broadcast view itself, no traffic)."""
    text = reader.names.text(node)
    known = {"indexing", "sparse", "copy"}
    if any(a.star or (a.keyword is not None and a.keyword.value not in known) for a in node.args):
        reader.unsupported(node, f"`{text}`: an argument that is not modeled")
        return None
    indexing_node = _keyword(node, "indexing")
    indexing = "xy"
    if indexing_node is not None:
        if not isinstance(indexing_node, cst.SimpleString):
            reader.unsupported(node, f"`{text}`: `indexing=` is not a literal")
            return None
        indexing = string_literal(indexing_node)
    sparse, copy = _flag(node, "sparse", False), _flag(node, "copy", True)
    if indexing not in ("xy", "ij") or sparse is None or copy is None:
        reader.unsupported(node, f"`{text}`: `indexing=`, `sparse=` or `copy=` not literal")
        return None
    vectors = [reader.array(a) for a in _positional(node)]
    if not vectors or any(v is None for v in vectors):
        return None
    leaves = [v for v in vectors if isinstance(v, Leaf) and len(v.shape) == 1]
    if len(leaves) != len(vectors):
        reader.unsupported(node, f"`{text}`: only 1-d arrays in memory are modeled")
        return None
    axes = list(range(len(leaves)))
    if indexing == "xy" and len(axes) >= 2:
        axes[0], axes[1] = 1, 0
    full: list[sympy.Expr] = [sympy.Integer(1)] * len(leaves)
    for leaf, axis in zip(leaves, axes, strict=True):
        full[axis] = leaf.shape[0]
    parts = []
    for position, (leaf, axis) in enumerate(zip(leaves, axes, strict=True)):
        shape = tuple(
            e if (d == axis or not sparse) else sympy.Integer(1) for d, e in enumerate(full)
        )
        index = tuple(substituted(e, {coordinate(0): coordinate(axis)}) for e in leaf.index)
        view = Leaf(leaf.array, leaf.element, shape, index, f"{text}[{position}]", leaf.span)
        parts.append(GridPart(view if not copy else _copied(view)))
    return parts


def _copied(view: Leaf) -> Allocation:
    """A new array holding `view` (`meshgrid`'s copy of a broadcast view)."""

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        return Construction(((leaf, view),))

    return Allocation(view.shape, view.element, False, view.text, build)


def _flag(node: cst.Call, name: str, default: bool) -> bool | None:
    found = _keyword(node, name)
    if found is None:
        return default
    if isinstance(found, cst.Name) and found.value in ("True", "False"):
        return found.value == "True"
    return None


def gather_by_grid(
    reader: ExpressionReader, base: ArrayValue | Allocation, node: cst.Subscript
) -> ArrayValue | bool | None:
    """`a[I]`, `A[I, J]` with `I`, `J` parts of an `mgrid`/`ogrid` still bound to their
    names: the gathered elements are known (`a[start + step * i]`), so the gather is the
    index arrays and a view of `a` read, and a new array of the index's shape written.
    False when the subscript is not such a gather; None (noted) when it cannot be read."""
    indices = []
    for element in node.slice:
        item = element.slice
        if not isinstance(item, cst.Index) or not isinstance(item.value, cst.Name):
            return False
        name = item.value.value
        known = reader.scope.grids.get(name)
        if known is None or reader.scope.names.get(name) != known[0]:
            return False
        indices.append(known)
    if not indices:
        return False
    if isinstance(base, Allocation):
        made = reader.materialize(base, node.value)
        if made is None:
            return None
        base = made
    text = reader.names.text(node)
    if not isinstance(base, Leaf) or len(base.shape) != len(indices):
        reader.unsupported(node, f"`{text}`: a gather by grid indices of another rank")
        return None
    shape = indices[0][0].shape
    if any(not all(map(same_extent, i.shape, shape)) for i, _ in indices):
        reader.unsupported(node, f"`{text}`: grid indices of different shapes")
        return None
    at = {coordinate(d): holds for d, (_, holds) in enumerate(indices)}
    index = tuple(substituted(e, at, simultaneous=True) for e in base.index)
    gathered = Leaf(base.array, base.element, shape, index, text, reader.span(node))
    taken = reader.elementwise("free", "take", (gathered, *(i for i, _ in indices)), node)
    if not isinstance(taken, Apply):
        return None
    return replace(taken, element=base.element, weak=False)
