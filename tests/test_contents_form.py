"""A placement's intensity where `simplify` writes the cancelled ratio with each side's
content and common monomial taken out: `contents_form` gives the same text and expression
without sympy, and the placement's limit is the one sympy's form gives (issue 33)."""

from __future__ import annotations

from fractions import Fraction

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.algebra import ONE, Poly, constant, symbol, to_sympy
from aiscan.analysis.hinged_simplify import contents_form
from aiscan.ir.symbols import fraction_symbol
from aiscan.roofline import placement

B, T, d, n, x_d0 = (symbol(name, "size") for name in ("B", "T", "d", "n", "x_d0"))
p = fraction_symbol("p_L5")


def _simplify(flops: Poly, bytes_moved: Poly) -> sympy.Expr:
    return sympy.simplify(to_sympy(flops) / to_sympy(bytes_moved))


def _is_simplifys(flops: Poly, bytes_moved: Poly) -> bool:
    """Where `contents_form` decides, it is `simplify`'s text and expression, and the
    placement (`_intensity_and_limit`) keeps it with sympy's limit of it."""
    fast = contents_form(flops, bytes_moved)
    if fast is None:
        return False
    expected = _simplify(flops, bytes_moved)
    assert str(fast) == str(expected)
    assert to_sympy(fast) == expected
    intensity, limit = placement._intensity_and_limit.__wrapped__(flops, bytes_moved)
    assert str(intensity) == str(expected)
    assert limit == placement._limit(expected)
    return True


def test_a_models_level_ratio_takes_out_each_sides_content_and_monomial() -> None:
    """A fixture's attention level ratio: the top keeps `x_d0`, the bottom's content is 4."""
    flops = 2 * B * d * x_d0 + 2 * d * T * x_d0 + 8 * d * x_d0 - T * x_d0
    bytes_moved = 4 * B * d + 4 * B * x_d0 + 4 * d * T + 4 * d + 4 * T * x_d0
    assert str(contents_form(flops, bytes_moved)) == (
        "x_d0*(2*B*d + 2*T*d - T + 8*d)/(4*(B*d + B*x_d0 + T*d + T*x_d0 + d))"
    )
    assert _is_simplifys(flops, bytes_moved)


def test_a_bottoms_monomial_stands_before_its_sum() -> None:
    assert str(contents_form(2 * n - 1, 4 * n**2 + 84 * n)) == "(2*n - 1)/(4*n*(n + 21))"
    assert _is_simplifys(2 * n - 1, 4 * n**2 + 84 * n)
    assert str(contents_form(2 * n - 1, 4 * n**3 + 84 * n**2)) == "(2*n - 1)/(4*n**2*(n + 21))"
    assert _is_simplifys(2 * n - 1, 4 * n**3 + 84 * n**2)


def test_a_branch_fractions_ratio_keeps_sympys_limit() -> None:
    """The fraction does not grow, so the limit is `_limit`'s (sympy's, on the form)."""
    flops, bytes_moved = n * p + n, 8 * n * p + 16 * n + 8
    assert str(contents_form(flops, bytes_moved)) == "n*(p_L5 + 1)/(8*(n*p_L5 + 2*n + 1))"
    assert _is_simplifys(flops, bytes_moved)


def test_a_spread_form_and_a_turned_sign_are_left_to_sympy() -> None:
    """`(4*M*N - M - N)/(16*(M*N + M + N))` is longer than `simplify`'s spread form
    `(M*N/4 - M/16 - N/16)/(M*N + M + N)`; a top `signsimp` turns over (more negative
    terms than positive) is sympy's to write, `(-d*n - n + 1)/(8*(n + 1))`."""
    M, N = symbol("M", "size"), symbol("N", "size")
    assert contents_form(4 * M * N - M - N, 16 * M * N + 16 * M + 16 * N) is None
    assert contents_form(1 - n * d - n, 8 * n + 8) is None


def test_a_shorter_spread_form_or_a_monomial_below_is_left_to_sympy() -> None:
    """Counterexamples the property test found: the coefficient spread over the top's sum
    is shorter (with a monomial above and without), or each term over a monomial bottom
    is (`x_d0 + 1/T`); a monomial bottom is always left to sympy."""
    half, third = constant(Fraction(1, 2)), constant(Fraction(1, 3))
    cases = [
        (
            12 * B**2 * T * d * n**2 + 9 * half * B * T * n**3,
            4 * B**2 * T**2 * d + 4 * B * T * d**2 * n + 8 * B * T * d * p + 16 * B * T * d,
            "n**2*(3*B*d + 9*n/8)/(d*(B*T + d*n + 2*p_L5 + 4))",
        ),
        (
            24 * B * T * d * n + 6 * B * d * n + 3 * half * T * d * n + 6 * d**3 * n,
            48 * B * T * d * n * x_d0 + 72 * d**2 * n**2 * x_d0,
            "(B*T + B/4 + T/16 + d**2/4)/(x_d0*(2*B*T + 3*d*n))",
        ),
        (T * x_d0 + 1, T, "x_d0 + 1/T"),
        (third * (T * x_d0 + 1), 3 * T, "(T*x_d0 + 1)/(9*T)"),
    ]
    for flops, bytes_moved, simplified in cases:
        assert contents_form(flops, bytes_moved) is None
        assert str(_simplify(flops, bytes_moved)) == simplified


_coefficients = st.sampled_from([1, 1, 2, 3, 4, 6, 8, 12, 16, 24, -1, -2, -3])
"""Mostly positive: a side `signsimp` turns over is left to sympy, and not compared."""
_monomials = st.sampled_from(
    [ONE, n, d, T, B * T, n**2, d * n, T * x_d0, x_d0, n * p, p, d**2, B, B * d * n]
)
_kept = st.sampled_from([ONE, ONE, n, d, x_d0, B * T])
_contents = st.sampled_from([Fraction(1), Fraction(1, 2), Fraction(1, 3), Fraction(3, 2)])


@st.composite
def _level_ratios(draw: st.DrawFn) -> tuple[Poly, Poly]:
    """Two sums with a monomial shared by both, one kept by a side, and each side's own
    content (a model's level ratios: bytes per level with a halo or a mask)."""
    sides = []
    for _ in range(2):
        count = draw(st.integers(1, 5))
        total = sum((draw(_coefficients) * draw(_monomials) for _ in range(count)), ONE * 0)
        sides.append(total * draw(_kept) * constant(draw(_contents)))
    shared = draw(st.sampled_from([ONE, n, B * T, x_d0, n * d]))
    scale = draw(st.sampled_from([1, 4, 8, 16, 24, 40]))
    return shared * sides[0], shared * sides[1] * scale


@settings(max_examples=150, deadline=None)  # `simplify` takes a tenth of a second
@given(_level_ratios())
def test_the_contents_form_is_simplifys(ratio: tuple[Poly, Poly]) -> None:
    """2,400 such ratios at seven seeds: 899 decided, each `simplify`'s (the session's
    stress run; here a sample)."""
    flops, bytes_moved = ratio
    if flops.terms and bytes_moved.terms:  # terms drawn may cancel to nothing
        _is_simplifys(flops, bytes_moved)
