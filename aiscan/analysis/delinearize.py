"""Flat subscripts split into the dimensions their strides encode, where the loops prove it.

`u[i*nx*ny + j*nx + k - nx]` is `u[i][j - 1][k]` of an array of rows of `nx` and planes
of `nx*ny` elements, as long as no reference of `u` leaves its row or its plane. That
holds when, over every reference of the array and its whole loop nest, each stride is
larger than the span of addresses the finer dimensions cover (`0 <= k < nx` and `0 <= j
< ny` for the stencil, proven by the loops' ranges, not assumed): the dimensions then map
one to one onto the addresses touched, so footprints, unions and reuse distances counted
on the dimensions are those of the flat array. This is the delinearization of the
polyhedral literature (Grosser et al., "Optimistic delinearization of parametrically
sized arrays", ICS 2015), without its run-time check: where the ranges do not prove it,
the array stays flat and the footprint rules say what they can.

The cache model asks for it: on a flat index, references a row or a plane apart differ
by symbolic offsets (`-nx`, `+nx*ny`), whose unions over an inner loop the box rules
cannot count, and the reuse was undecidable (the streaming end). Split, they are shifts
of one box, as in the VLA form.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from aiscan.algebra import ONE, SYMPY, ZERO, expand
from aiscan.analysis.footprint import (
    extreme_over,
    nearest_quotient,
    provably_nonnegative,
    stride_rank,
)
from aiscan.analysis.polynomials import linear_coefficient
from aiscan.analysis.walk import placed_statements
from aiscan.ir.nodes import Access, Branch, Loop, Node, Statement
from aiscan.ir.symbols import loop_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["array_strides", "delinearized"]

Strides = tuple["sympy.Expr", ...]
"""An array's strides in elements, coarsest first; the last is 1."""


def delinearized(body: tuple[Node, ...]) -> tuple[Node, ...]:
    """`body` with the references of every array whose flat subscripts split exactly
    rewritten as multi-dimensional ones (the same elements, one to one)."""
    strides = array_strides(body)
    if not strides:
        return body
    return tuple(_rewrite(node, strides, ()) for node in body)


def array_strides(body: tuple[Node, ...]) -> dict[str, Strides]:
    """The arrays of `body` whose flat subscripts split exactly, with their strides."""
    references: dict[str, list[tuple[Access, tuple[Loop, ...]]]] = defaultdict(list)
    for placed in placed_statements(body):
        for access in placed.statement.accesses:
            references[access.array].append((access, placed.loops))
    found = {}
    for array, refs in references.items():
        strides = _proven_strides(refs)
        if strides is not None:
            found[array] = strides
    return found


def _proven_strides(refs: Sequence[tuple[Access, tuple[Loop, ...]]]) -> Strides | None:
    """The strides every reference of one array splits by, where the split is one to
    one over everything the references touch; None otherwise."""
    parts = []
    for access, loops in refs:
        if access.index is None or len(access.index) != 1:
            return None
        linear = _linear(expand(access.index[0]), loops)
        if linear is None:
            return None
        parts.append((linear, loops))
    coarse = {abs(c) for coefficients, _ in (p for p, _ in parts) for c in coefficients.values()}
    coarse.discard(ONE)
    if not coarse or any(s.is_number or not s.is_positive for s in coarse):
        return None  # nothing to split, or a numeric stride (`x[2*i]`): a stride, not a row
    strides = (*sorted(coarse, key=stride_rank, reverse=True), ONE)
    dims = []
    for (coefficients, constant), loops in parts:
        split = _split(coefficients, constant, strides)
        if split is None:
            return None
        dims.append((split, loops))
    return strides if _one_to_one(dims, strides) else None


def _linear(
    expr: sympy.Expr, loops: tuple[Loop, ...]
) -> tuple[dict[sympy.Symbol, sympy.Expr], sympy.Expr] | None:
    """The subscript as (coefficient per loop variable, constant); None if not affine."""
    variables = [loop_symbol(loop.var) for loop in loops]
    coefficients = {}
    constant = expr
    for var in variables:
        coefficient = linear_coefficient(expr, var)
        if coefficient.free_symbols & set(variables):
            return None
        if coefficient != 0:
            coefficients[var] = coefficient
            constant = constant - coefficient * var
    constant = expand(constant)
    if constant.free_symbols & set(variables):
        return None
    return coefficients, constant


def _split(
    coefficients: dict[sympy.Symbol, sympy.Expr], constant: sympy.Expr, strides: Strides
) -> tuple[sympy.Expr, ...] | None:
    """One subscript per stride, coarsest first: its variables' terms over the stride and
    its share of the constant offset."""
    dims = []
    remainder = constant
    for position, stride in enumerate(strides):
        terms = ZERO
        for var, coefficient in coefficients.items():
            if abs(coefficient) == stride:
                terms = terms + (ONE if coefficient == stride else -ONE) * var
        if position == len(strides) - 1:
            dims.append(expand(terms + remainder))
            break
        quotient = nearest_quotient(remainder, stride, strides[position + 1])
        if quotient is None:
            return None
        remainder = expand(remainder - quotient * stride)
        dims.append(expand(terms + quotient))
    return tuple(dims)


def _one_to_one(
    dims: Sequence[tuple[tuple[sympy.Expr, ...], tuple[Loop, ...]]], strides: Strides
) -> bool:
    """Whether each stride exceeds the span of addresses its finer dimensions cover over
    every reference's whole domain: then the split is one to one on what they touch."""
    spans = []
    for d in range(len(strides)):
        ends = [_range_of(split[d], loops) for split, loops in dims]
        if any(end is None for end in ends):
            return False
        low = _lowest([end[0] for end in ends if end is not None])
        high = _highest([end[1] for end in ends if end is not None])
        if low is None or high is None:
            return False
        spans.append(expand(high - low))
    covered = ZERO
    for d in reversed(range(len(strides))):
        if d < len(strides) - 1 and not provably_nonnegative(strides[d] - covered - 1):
            return False
        covered = expand(covered + strides[d] * spans[d])
    return True


def _range_of(expr: sympy.Expr, loops: tuple[Loop, ...]) -> tuple[sympy.Expr, sympy.Expr] | None:
    """Lowest and highest value of an affine `expr` over the loops' domain (innermost
    variables eliminated first, so triangular ranges are followed)."""
    low = high = expr
    for loop in reversed(loops):
        var = loop_symbol(loop.var)
        last = loop.start + loop.step * (loop.trip - 1)
        first_end, last_end = (loop.start, last) if loop.step > 0 else (last, loop.start)
        new_low = extreme_over(low, var, expand(first_end), expand(last_end), want_max=False)
        new_high = extreme_over(high, var, expand(first_end), expand(last_end), want_max=True)
        if new_low is None or new_high is None:
            return None
        low, high = new_low, new_high
    return low, high


def _lowest(candidates: Sequence[sympy.Expr]) -> sympy.Expr | None:
    """The candidate provably at most every other one; None when none is."""
    for candidate in candidates:
        if all(provably_nonnegative(other - candidate) for other in candidates):
            return candidate
    return None


def _highest(candidates: Sequence[sympy.Expr]) -> sympy.Expr | None:
    for candidate in candidates:
        if all(provably_nonnegative(candidate - other) for other in candidates):
            return candidate
    return None


def _rewrite(node: Node, strides: dict[str, Strides], loops: tuple[Loop, ...]) -> Node:
    if isinstance(node, Statement):
        return _rewrite_statement(node, strides, loops)
    if isinstance(node, Loop):
        inside = (*loops, node)
        return replace(node, body=tuple(_rewrite(n, strides, inside) for n in node.body))
    assert isinstance(node, Branch)
    return replace(
        node,
        condition=_rewrite_statement(node.condition, strides, loops),
        then_body=tuple(_rewrite(n, strides, loops) for n in node.then_body),
        else_body=tuple(_rewrite(n, strides, loops) for n in node.else_body),
    )


def _rewrite_statement(
    statement: Statement, strides: dict[str, Strides], loops: tuple[Loop, ...]
) -> Statement:
    if not any(a.array in strides for a in statement.accesses):
        return statement
    accesses = []
    for access in statement.accesses:
        if access.array in strides:
            # Every reference of a split array was split once already, with these strides.
            assert access.index is not None
            linear = _linear(expand(access.index[0]), loops)
            assert linear is not None
            split = _split(*linear, strides[access.array])
            assert split is not None
            access = replace(access, index=split)
        accesses.append(access)
    return replace(statement, accesses=tuple(accesses))
