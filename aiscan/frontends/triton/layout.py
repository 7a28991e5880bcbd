"""Pointer offsets as multi-dimensional indices.

Triton kernels address a tensor as `base + row * stride_row + col * stride_col`. With the
strides symbolic, the offset is one affine expression whose distinct values the footprint
cannot count; read as an index per stride (`[row, col]`), it can. The tensors' strides are
taken to lay distinct indices at distinct addresses (what torch's strides of a tensor
that is not a view with overlapping elements do), and the report says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY
from aiscan.ir.nodes import Access, Branch, Loop, Node, Statement

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["with_stride_dimensions"]

_CONTIGUOUS = "1"


def with_stride_dimensions(body: tuple[Node, ...], strides: frozenset[str]) -> tuple[Node, ...]:
    """`body` with every flat pointer offset split into one index per stride symbol (plus
    the unit-stride rest), the same dimensions, in the same order, for every access to
    one array."""
    if not strides:
        return body
    dimensions: dict[str, list[str]] = {}
    for access in _accesses(body):
        if access.index is None:
            continue
        keys = dimensions.setdefault(access.array, [])
        for key in _split(access.index[0], strides):
            if key not in keys:
                keys.append(key)
    for keys in dimensions.values():
        keys.sort(key=lambda k: (k == _CONTIGUOUS, k))
    return tuple(_rewritten(node, dimensions, strides) for node in body)


def _split(offset: sympy.Expr, strides: frozenset[str]) -> dict[str, sympy.Expr]:
    parts: dict[str, sympy.Expr] = {}
    for term in sympy.Add.make_args(sympy.expand(offset)):
        names = sorted(s.name for s in term.free_symbols if s.name in strides)
        if names:
            symbol = next(s for s in term.free_symbols if s.name == names[0])
            key, value = names[0], sympy.cancel(term / symbol)
        else:
            key, value = _CONTIGUOUS, term
        parts[key] = parts.get(key, sympy.Integer(0)) + value
    return parts


def _accesses(body: Iterable[Node]) -> Iterable[Access]:
    for node in body:
        if isinstance(node, Statement):
            yield from node.accesses
        elif isinstance(node, Loop):
            yield from _accesses(node.body)
        elif isinstance(node, Branch):
            yield from _accesses((node.condition, *node.then_body, *node.else_body))


def _rewritten(node: Node, dimensions: dict[str, list[str]], strides: frozenset[str]) -> Node:
    if isinstance(node, Loop):
        return replace(node, body=tuple(_rewritten(n, dimensions, strides) for n in node.body))
    if isinstance(node, Branch):
        return replace(
            node,
            then_body=tuple(_rewritten(n, dimensions, strides) for n in node.then_body),
            else_body=tuple(_rewritten(n, dimensions, strides) for n in node.else_body),
        )
    accesses = tuple(_indexed(a, dimensions, strides) for a in node.accesses)
    return replace(node, accesses=accesses) if accesses != node.accesses else node


def _indexed(access: Access, dimensions: dict[str, list[str]], strides: frozenset[str]) -> Access:
    keys = dimensions.get(access.array)
    if access.index is None or not keys or keys == [_CONTIGUOUS]:
        return access
    parts = _split(access.index[0], strides)
    index = tuple(sympy.expand(parts.get(k, sympy.Integer(0))) for k in keys)
    return replace(access, index=index)
