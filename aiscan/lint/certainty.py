"""Deciding "surely" about symbolic quantities, so that rules that cannot be sure say nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, expand
from aiscan.analysis.intensity import leading_limit, substitute_sizes
from aiscan.ir.symbols import is_size_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["grows_with_size", "surely_positive"]


def surely_positive(expr: sympy.Expr, sizes: Mapping[str, int]) -> bool:
    """Positive at the given sizes; without them, positive as every size grows.

    Symbols other than sizes (branch fractions, unnamed trip counts) make it unsure.
    """
    expr = expand(substitute_sizes(expr, sizes))
    if expr.is_number:
        return bool(expr > 0)
    if not all(getattr(s, "is_Symbol", False) and is_size_symbol(s) for s in expr.free_symbols):
        return False
    if expr.is_positive:
        return True
    limit = leading_limit(expr)
    return limit is not None and bool(limit.is_extended_positive)


def grows_with_size(expr: sympy.Expr) -> bool:
    """Does the count depend on a problem size (a hot loop rather than a fixed few runs)?"""
    return any(getattr(s, "is_Symbol", False) and is_size_symbol(s) for s in expr.free_symbols)
