"""FLOP totals of a region: each statement's tally times its executions, by kind."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, ZERO, expand, normal
from aiscan.analysis.domain import Bounds, LoopLike, bounds_of, sum_over_loops
from aiscan.analysis.polynomials import expanded
from aiscan.analysis.walk import Placed

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["FlopCounts", "count_flops", "executions", "executions_over", "weighted_sum"]

_KINDS = ("add", "sub", "mul", "div", "special")


@dataclass(frozen=True, slots=True)
class FlopCounts:
    """Exact FLOP counts. `total` is add+sub+mul+div plus `special_weight` per special op."""

    total: sympy.Expr
    add: sympy.Expr
    sub: sympy.Expr
    mul: sympy.Expr
    div: sympy.Expr
    special: sympy.Expr

    def __add__(self, other: FlopCounts) -> FlopCounts:
        return FlopCounts(*(getattr(self, k) + getattr(other, k) for k in ("total", *_KINDS)))

    @staticmethod
    def zero() -> FlopCounts:
        zero = ZERO
        return FlopCounts(zero, zero, zero, zero, zero, zero)


def executions(placed: Placed) -> sympy.Expr:
    """How many times the statement runs: its weight summed over its loops; under
    branches with affine conditions, the iterations that satisfy them, counted exactly."""
    return guarded_executions(placed.weight, placed.loops, placed.guards)


def guarded_executions(
    weight: sympy.Expr, loops: Sequence[LoopLike], guards: tuple[sympy.Basic, ...] | None
) -> sympy.Expr:
    """`executions_over`, or with `guards` (affine branch conditions) the exact number of
    iterations satisfying them, when integer sets can count it."""
    if guards:
        from aiscan.analysis.polyhedral import guarded_runs

        runs = guarded_runs(loops, guards)
        if runs is not None:
            return runs
    return executions_over(weight, loops)


def executions_over(weight: sympy.Expr, loops: Sequence[LoopLike]) -> sympy.Expr:
    return _expanded_sum(weight, bounds_of(loops))


@lru_cache(maxsize=8192)
def _expanded_sum(weight: sympy.Expr, bounds: tuple[Bounds, ...]) -> sympy.Expr:
    return expanded(sum_over_loops(weight, bounds))


def count_flops(statements: Sequence[Placed], special_weight: int = 0) -> FlopCounts:
    """Sum FLOPs over a region. Statements with equal context share one domain sum."""
    per_kind: dict[str, Counter[sympy.Expr]] = {kind: Counter() for kind in _KINDS}
    for placed in statements:
        tally = placed.statement.flops
        if tally.is_zero():
            continue
        runs = executions(placed)
        for kind in _KINDS:
            count = getattr(tally, kind)
            if count:
                per_kind[kind][runs] += count
    expanded = {kind: weighted_sum(counts) for kind, counts in per_kind.items()}
    total = (
        sum((expanded[k] for k in ("add", "sub", "mul", "div")), ZERO)
        + special_weight * expanded["special"]
    )
    return FlopCounts(total=expand(total), **expanded)


def weighted_sum(counts: Counter[sympy.Expr]) -> sympy.Expr:
    """`sum(weight * expr)` for integer weights and expanded `expr`s (execution counts are
    expanded): statements that run equally often share one product. A number times an
    expanded sum distributes, so the total is expanded without another `expand` pass."""
    return normal(sum((weight * expr for expr, weight in counts.items() if weight), ZERO))
