"""Trip counts as loops run them: never below zero.

A loop's closed-form trip (`n - 5` for `i < n - 5`) goes negative where the loop does not
run, and every count multiplied by it would too (`i < -5` once counted -5 FLOPs and -80
streaming bytes, issue 35). Both frontends pass their trips through here.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import ceil
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, ZERO, is_poly, normal, probe_values
from aiscan.ir.symbols import is_size_symbol, loop_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["Enclosing", "may_go_negative", "never_below_zero", "nonnegative_from"]


def never_below_zero(trip: sympy.Expr) -> sympy.Expr:
    """`trip`, or 0 where it is at most 0 at every size (`-5`, `n - 5 - n`, `-n`: the
    loop never runs). A trip whose sign depends on the sizes (`n - 5`) stays as it is:
    its counts hold where it runs, and the analysis drops the loop at given sizes where
    it does not (`analysis.idle_loops`)."""
    if is_poly(trip) and any(value > 0 for value in probe_values(trip)):
        return trip  # not nonpositive everywhere: sympy cannot say it is, nor need asking
    return ZERO if trip.is_nonpositive is True else trip


def nonnegative_from(trip: sympy.Expr) -> tuple[str, int] | None:
    """`("n", 5)` for `n - 5`: the size from which a trip in one size, negative at the
    smaller ones, is not, so a report can say where its polynomial counts hold. None for
    a trip never negative at sizes of at least 1, or in more than one size or a counter."""
    trip = normal(trip)  # the Python frontend's trips are sympy's
    if not is_poly(trip):
        return None
    # Read off the terms: `slope*size + offset` is one monomial of degree 1 and at most a
    # constant (subs, degree and coeff built Polys for it, on every loop of a scan).
    sloped = [monomial for monomial in trip.terms if monomial]
    if len(sloped) != 1 or len(sloped[0]) != 1:
        return None
    ((var, power),) = sloped[0]
    if power != 1 or var[1] != "size":
        return None  # a counter, a hinge (no symbol: what it holds is another question)
    slope, offset = trip.terms[sloped[0]], trip.terms.get((), 0)
    if slope + offset >= 0 or slope <= 0:
        return None
    return var[0], ceil(Fraction(-offset) / slope)


Enclosing = tuple[str, "sympy.Expr", int, "sympy.Expr"]
"""An enclosing loop as a frontend knows it: counter, start, step, trip."""


def may_go_negative(trip: sympy.Expr, enclosing: Sequence[Enclosing]) -> bool:
    """Can `trip`, which follows the counters of `enclosing` (outermost first), be negative
    at some iteration of theirs (`j = i + 2; j < n` at i = n - 1)? Then the closed-form sum
    over them counts that iteration's -1, and the loop needs the guard `trip >= 1`. Told
    from the trip's least value over their ranges, each counter at the end its slope
    favours, innermost first; False where the ranges are no polynomials (a strided
    `ceiling(n/3)`) or a slope's sign is unknown, which keeps the closed form as before."""
    counters = {loop_symbol(var) for var, *_ in enclosing}
    if not is_poly(trip) or counters.isdisjoint(trip.free_symbols):
        return False
    least = trip
    for var, start, step, outer in reversed(enclosing):
        counter = loop_symbol(var)
        if counter not in least.free_symbols:
            continue
        last = start + step * (outer - 1)
        if least.degree(counter) != 1 or not (is_poly(start) and is_poly(last)):
            return False
        low, high = (start, last) if step > 0 else (last, start)
        slope = least.coeff(counter)
        if slope.is_nonnegative is True:
            least = least.subs(counter, low)
        elif slope.is_nonpositive is True:
            least = least.subs(counter, high)
        else:
            return False
    if not is_poly(least) or not counters.isdisjoint(least.free_symbols):
        return False
    # Sizes are at least 1: written as 1 + a positive symbol, a sum of positive terms is >= 0.
    shifted = least.subs({s: s + 1 for s in least.free_symbols if is_size_symbol(s)})
    return shifted.is_nonnegative is not True
