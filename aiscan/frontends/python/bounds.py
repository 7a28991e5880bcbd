"""`min` and `max` in `range` bounds: `range(i, min(i + B, n))`, `range(max(0, i - 1), n)`.

Each argument of the `min`/`max` is one alternative bound, taken where it is the smallest
(largest): `min(a, b)` is `a` where `a <= b` and `b` where `a > b`. The loop is lowered once
per alternative, under a branch whose guard is that condition; where the guard is affine in
loop variables the analysis counts each side's iterations exactly (as for C's `if`), and
otherwise the branch keeps a named fraction (docs/python.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst
import sympy

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader

__all__ = ["Choice", "bound_choices"]

Choice = tuple[sympy.Expr, tuple[sympy.Basic, ...]]
"""A bound and the conditions under which the bound is that value."""


def bound_choices(reader: ExpressionReader, node: cst.BaseExpression) -> list[Choice] | None:
    """The alternatives of one bound: `[(value, ())]` for a plain integer expression, one
    per argument for `min(...)`/`max(...)` of integer expressions; None (with the reader's
    note) when a bound is not an integer expression."""
    if isinstance(node, cst.Call) and reader.names.canonical(node.func) in (
        "builtins.min",
        "builtins.max",
    ):
        arguments = [a.value for a in node.args if a.keyword is None and not a.star]
        if len(arguments) >= 2 and len(arguments) == len(node.args):
            values = [reader.integer(a) for a in arguments]
            if any(v is None for v in values):
                return None
            smallest = reader.names.canonical(node.func) == "builtins.min"
            return _choices([v for v in values if v is not None], smallest)
    value = reader.integer(node)
    return None if value is None else [(value, ())]


def _choices(values: list[sympy.Expr], smallest: bool) -> list[Choice]:
    """Argument `k` is chosen where it beats every earlier argument strictly and every later
    one or ties (Python returns the first of equal values): the conditions partition."""
    found: list[Choice] = []
    for k, value in enumerate(values):
        conditions: list[sympy.Basic] = []
        possible = True
        for other_index, other in enumerate(values):
            if other_index == k:
                continue
            strict = other_index < k
            if smallest:
                relation = sympy.Lt(value, other) if strict else sympy.Le(value, other)
            else:
                relation = sympy.Gt(value, other) if strict else sympy.Ge(value, other)
            if relation is sympy.false:
                possible = False
                break
            if relation is not sympy.true:
                conditions.append(relation)
        if possible:
            found.append((value, tuple(conditions)))
    return found
