"""Intensities in lowest terms: the fast path through sparse polynomials gives exactly the
normal form sympy's `Poly.cancel` gives."""

from __future__ import annotations

import sympy
from hypothesis import assume, given, settings
from polynomial_strategies import SYMBOLS, ratios_sharing_a_factor

from aiscan.analysis.intensity import _cancelled_polynomials, _cancelled_with_poly, intensity
from aiscan.ir.symbols import size_symbol
from aiscan.options import PipelineOptions
from aiscan.pipeline import analyze_text


@settings(max_examples=300, deadline=None)
@given(ratios_sharing_a_factor())
def test_fast_cancel_matches_poly_cancel(ratio: tuple[sympy.Expr, sympy.Expr]) -> None:
    numerator, denominator = ratio
    assume(denominator != 0)
    symbols = sorted(numerator.free_symbols | denominator.free_symbols, key=str)
    assume(symbols)
    fast = _cancelled_polynomials(numerator, denominator, symbols)
    assume(fast is not None)
    assert fast == _cancelled_with_poly(numerator, denominator, symbols)


def test_cancelled_intensities_in_their_documented_form() -> None:
    n, m = SYMBOLS[:2]
    p = SYMBOLS[5]
    assert str(intensity(n**2 + 3 * n, 4 * n**2 + 20 * n).expr) == "(n + 3)/(4*n + 20)"
    assert str(intensity(n * p + n, 20 * n).expr) == "(p_L12 + 1)/20"
    assert str(intensity(2 * m * n, 4 * m * n + 4 * m + 4 * n).expr) == "m*n/(2*m*n + 2*m + 2*n)"
    assert intensity(sympy.Integer(0), n + 1).expr == 0


def test_small_size_corrections_keep_a_positive_bottom_and_a_limit() -> None:
    """Bytes exact at small sizes carry `Min`/`Max` of sizes (NPBench's deriche: a read of
    two rows less `Min(1, n - 1)`); the ratio keeps a positive bottom, and its limit is
    taken past the bend instead of being unknown."""
    n, m = SYMBOLS[:2]
    flops = 2 * n * m + 6 * m
    traffic = 24 * n * m - 16 * m * sympy.Min(1, n - 1) + 32 * m
    found = intensity(flops, traffic)
    assert str(found.expr) == "(n + 3)/(12*n - 8*Min(1, n - 1) + 16)"
    assert found.limit == sympy.Rational(1, 12)
    for size in range(1, 8):  # the same ratio at every size, the first one included
        at = {n: size, m: 3}
        assert found.expr.subs(at) == (flops / traffic).subs(at)


def test_past_bends_picks_the_side_that_wins_as_sizes_grow() -> None:
    from aiscan.analysis.intensity import past_bends

    n, m = SYMBOLS[:2]
    assert past_bends(sympy.Min(1, n - 1) + sympy.Max(0, 4 - n), [n]) == 1
    assert past_bends(sympy.Max(2 * n, n + 5) - sympy.Min(m, 3), [n, m]) == 2 * n - 3
    undecided = sympy.Max(n, m)  # grows on both sides at the same rate: left as it is
    assert past_bends(undecided, [n, m]) == undecided


def test_flops_that_vanish_with_all_sizes_equal_have_a_limit_of_zero() -> None:
    """A loop from `m` to `n` inside one over `n`: FLOPs `n**2 - m*n` are 0 where the sizes
    grow together (`m = n`), and the limit of `0 / (16*t)` once raised an internal error
    (the zero polynomial has no leading term)."""
    kernel = """\
void f(int n, int m, double *a, const double *b)
{
    for (int i = 0; i < n; i++)
        for (int j = m; j < n; j++)
            a[i] += b[j];
}
"""
    result = analyze_text(kernel, "k.c", PipelineOptions())
    assert result.analysis is not None, result.diagnostics
    [function] = result.analysis.functions
    n, m = size_symbol("n"), size_symbol("m")
    compulsory = function.intensity["compulsory"]
    assert sympy.simplify(compulsory.expr - (n * n - m * n) / (24 * n - 8 * m)) == 0
    assert compulsory.limit == 0
    assert function.intensity["streaming"].limit == sympy.Rational(1, 24)


def test_a_rational_intensity_at_given_sizes_is_exact() -> None:
    """The value at given sizes is the exact rational, not sympy's `nsimplify` of it, which
    rounded 4194304/16777217 to 1/4 and wrote 20477/82156 as a product of fractional
    powers of primes (issue 33: fixtures/c/linearized_rows.c, fixtures/python/vectorized.py)."""
    n = size_symbol("n")
    across_rows = intensity(2 * n**2, 8 * n**2 + 8, {"n": 4096})
    assert str(across_rows.expr) == "n**2/(4*n**2 + 4)"
    assert str(across_rows.value) == "4194304/16777217"
    mirrors = intensity(5 * n - 3, 20 * n + 140 + 96, {"n": 4096})
    assert str(mirrors.expr) == "(5*n - 3)/(20*n + 236)"
    assert str(mirrors.value) == "20477/82156"
