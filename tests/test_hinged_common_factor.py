"""A hinged stencil's placed intensity without sympy (issue 33): where the ratio's two sides
share a factor that is no monomial, `cancelled_by_common_factor` is `simplify_hinged`'s
result, text and expression, and the placement's limit is sympy's."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.algebra import ONE, Poly, constant, hinge, symbol, to_sympy
from aiscan.analysis.hinged_simplify import (
    cancelled_by_common_factor,
    common_factor_form,
    simplify_hinged,
)
from aiscan.roofline import placement

m, n, T = (symbol(name, "size") for name in ("m", "n", "T"))


def _hinge(bend: int, size: Poly) -> Poly:
    made = hinge(bend - size)
    assert made is not None
    return made


H = _hinge(4, n)
JACOBI2D = (
    4 * m * n - 8 * m - 8 * n + 16,
    40 * m * n - 8 * m * H - 64 * m - 80 * n + 16 * H + 128,
)


def _sympy_limit(intensity: sympy.Expr) -> sympy.Expr | None:
    """The placement's limit as it is taken on sympy's form (`_limit`)."""
    return placement._limit(intensity)


def test_jacobi2d_on_a_cpu_is_simplifys_text_and_limit() -> None:
    flops, bytes_moved = JACOBI2D
    intensity = cancelled_by_common_factor(flops, bytes_moved)
    assert intensity is not None
    assert str(intensity) == "(n - 2)/(2*(5*n - Max(0, 4 - n) - 8))"
    expected = simplify_hinged(to_sympy(flops) / to_sympy(bytes_moved))
    assert to_sympy(intensity) == expected
    placed = placement._simplified_hinged(flops, bytes_moved)
    assert placed is not None
    assert placed[0] is not None and str(placed[1]) == "1/10"
    assert placed[1] == _sympy_limit(expected)


def test_a_ratio_without_a_common_sum_is_left_to_sympy() -> None:
    """`(2*n - 4)/(72*n - 8*Max(0, 4 - n) - 128)`: `simplify` keeps the sign its first step
    chose, `(2 - n)/(4*(-9*n + Max(0, 4 - n) + 16))`, which the cancelled form is not."""
    assert cancelled_by_common_factor(2 * n - 4, 72 * n - 8 * H - 128) is None
    assert cancelled_by_common_factor(T * (2 * n - 4), T * (72 * n - 8 * H - 128)) is None


def test_a_coefficient_spread_over_the_top_is_left_to_sympy() -> None:
    """`(n + 6)/(6*(n*Max(0, 2 - n) + ...))`: `count_ops` reads it as `cancel`'s form, 13
    operations, and `powsimp`'s `(n/6 + 1)/(n*Max(0, 2 - n) + ...)` has 12: `simplify`
    gives that one."""
    bend = _hinge(2, n)
    bottom = (m - 2) * (6 * n * bend + 54 * n + 6 * bend + 18)
    assert cancelled_by_common_factor((m - 2) * (n + 6), bottom) is None
    assert str(simplify_hinged(to_sympy((m - 2) * (n + 6)) / to_sympy(bottom))) == (
        "(n/6 + 1)/(n*Max(0, 2 - n) + 9*n + Max(0, 2 - n) + 3)"
    )


_small = st.integers(-6, 6).filter(bool)
_terms = st.sampled_from([ONE, n, m, n * m, n**2, T * n, T])
_hinges = st.builds(_hinge, st.integers(2, 5), st.sampled_from([n, m]))
_factors = st.sampled_from(
    [m - 2, n - 2, m - 1, 2 * m - 3, T - 1, (m - 2) * (n - 2), T * (m - 2), m + n, ONE, T]
)


@st.composite
def _stencil_ratios(draw: st.DrawFn) -> tuple[Poly, Poly]:
    """A hinged stencil's shapes: a common factor times a polynomial over the factor times
    a polynomial plus hinges times polynomials, each side times a number."""
    top = sum((draw(_small) * draw(_terms) for _ in range(draw(st.integers(1, 3)))), n)
    bottom = sum((draw(_small) * draw(_terms) for _ in range(draw(st.integers(0, 3)))), 9 * n)
    for _ in range(draw(st.integers(1, 2))):
        bottom += draw(_small) * draw(_terms) * draw(_hinges) ** draw(st.integers(1, 2))
    factor = draw(_factors)
    above = constant(draw(st.sampled_from([1, 2, 4, 3])))
    below = constant(draw(st.sampled_from([1, 8, 16, 6])))
    return factor * top * above, factor * bottom * below


@settings(max_examples=60, deadline=None)  # `simplify` takes a tenth of a second
@given(_stencil_ratios())
def test_the_common_factor_form_is_simplify_hinged(ratio: tuple[Poly, Poly]) -> None:
    flops, bytes_moved = ratio
    if not bytes_moved.hinged:  # the hinges cancelled
        return
    fast = cancelled_by_common_factor(flops, bytes_moved)
    if fast is None:
        return
    expected = simplify_hinged(to_sympy(flops) / to_sympy(bytes_moved))
    assert str(fast) == str(expected)
    assert to_sympy(fast) == expected
    placed = placement._simplified_hinged(flops, bytes_moved)
    if placed is not None:
        assert placed[1] == _sympy_limit(expected)


_ridges = st.sampled_from([Fraction(1, 20), Fraction(1, 8), Fraction(3, 10), Fraction(6, 1), 2])


@settings(max_examples=40, deadline=None)
@given(_stencil_ratios(), _ridges, st.sampled_from(["mnT", "mnT", "mn", "n"]))
def test_a_hinged_crossover_is_the_one_taken_through_sympy(
    ratio: tuple[Poly, Poly], ridge: Fraction, swept: str
) -> None:
    """The swept sizes' hinges settled on the Poly before `x` is put for them give the
    crossover the sympy `Max(0, c - x)` and `past_bends` gave (`_settled_swept`), and
    the counts at the crossing are judged alike."""
    flops, bytes_moved = ratio
    sweep = frozenset(swept)
    crossover = placement._swept_crossover.__wrapped__
    fast = crossover(flops, bytes_moved, constant(ridge), sweep)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(placement, "_settled_swept", lambda expr, _: expr)
        patch.setattr(placement, "_counts_hold", _counts_hold_through_sympy)
        assert fast == crossover(flops, bytes_moved, constant(ridge), sweep)


def _counts_hold_through_sympy(
    flops: Poly, bytes_moved: Poly, crossing: object, sweep: frozenset[str]
) -> bool:
    """`_counts_hold` as it was: each count put in one size through sympy's `subs`."""
    values = []
    for expr in (flops, bytes_moved):
        one_size, x, _ = placement._one_size(expr, sweep)
        value = placement.finite_value(placement._at(one_size, x, crossing.value))  # type: ignore[attr-defined]
        if value is None:
            return True
        values.append(value)
    return values[0] >= 0 and values[1] > 0


def test_polybench_jacobi_2d_level_ratio_is_simplifys() -> None:
    """Two plain sums sharing `n - 2` (PolyBench/C's jacobi_2d, issue 33): `simplify`'s
    text and expression, and `_limit`'s limit, without sympy."""
    flops = 10 * n**2 * T - 40 * n * T + 40 * T
    bytes_moved = 80 * n**2 * T - 288 * n * T + 256 * T
    placed = placement._simplified_hinged(flops, bytes_moved)
    assert placed is not None
    expected = sympy.simplify(to_sympy(flops) / to_sympy(bytes_moved))
    assert str(placed[0]) == str(expected) == "5*(n - 2)/(8*(5*n - 8))"
    assert to_sympy(placed[0]) == expected
    assert placed[1] == _sympy_limit(expected) == Fraction(1, 8)


@st.composite
def _plain_ratios(draw: st.DrawFn) -> tuple[Poly, Poly]:
    """Two sums without hinges sharing a factor, each side times a number."""
    top = sum((draw(_small) * draw(_terms) for _ in range(draw(st.integers(1, 3)))), n)
    bottom = sum((draw(_small) * draw(_terms) for _ in range(draw(st.integers(1, 3)))), 9 * n)
    factor = draw(_factors)
    above = constant(draw(st.sampled_from([1, 2, 4, 3, 10])))
    below = constant(draw(st.sampled_from([1, 8, 16, 6, 80])))
    return factor * top * above, factor * bottom * below


_positive = st.integers(1, 40)
_monomials = st.sampled_from([ONE, n, m, n * m, n**2, T * n, T, m**2 * n, T * m * n])


@st.composite
def _positive_ratios(draw: st.DrawFn) -> tuple[Poly, Poly]:
    """Two sums of positive terms with no factor in common but numbers and monomials (most
    of the time), times a common monomial: PolyBench's 2mm, syrk, covariance."""
    sides = []
    for _ in range(2):
        count = draw(st.integers(2, 4))
        sides.append(sum((draw(_positive) * draw(_monomials) for _ in range(count)), ONE * 0))
    shared = draw(st.sampled_from([ONE, n, T * m, n * m]))
    return shared * sides[0], shared * sides[1]


@settings(max_examples=140, deadline=None)  # `simplify` takes a tenth of a second
@given(st.one_of(_plain_ratios(), _positive_ratios()))
def test_the_common_factor_form_of_plain_sums_is_simplifys(ratio: tuple[Poly, Poly]) -> None:
    """Two plain sums sharing a factor, or two sums of positive terms sharing only numbers
    and monomials: `common_factor_form` is `simplify`'s text and expression, and the
    placement's limit sympy's."""
    _is_simplifys(*ratio)


def _is_simplifys(flops: Poly, bytes_moved: Poly) -> None:
    """Where `common_factor_form` decides, it is `simplify`'s text and expression, and the
    placement's limit sympy's."""
    fast = common_factor_form(flops, bytes_moved)
    if fast is None:
        return
    expected = sympy.simplify(to_sympy(flops) / to_sympy(bytes_moved))
    assert str(fast) == str(expected)
    assert to_sympy(fast) == expected
    placed = placement._simplified_hinged(flops, bytes_moved)
    if placed is not None:
        assert placed[1] == _sympy_limit(expected)


def test_polybench_2mm_level_ratio_is_simplifys() -> None:
    """2mm's `(2*ni*nj*nl + ni*nl)/(72*ni*nj*nl + 256*ni*nl)`: two sums of positive terms
    sharing only `ni*nl` and numbers, `simplify`'s `(2*nj + 1)/(8*(9*nj + 32))`."""
    ni, nj, nl = (symbol(name, "size") for name in ("ni", "nj", "nl"))
    flops = 2 * ni * nj * nl + ni * nl
    bytes_moved = 72 * ni * nj * nl + 256 * ni * nl
    fast = common_factor_form(flops, bytes_moved)
    assert str(fast) == "(2*nj + 1)/(8*(9*nj + 32))"
    assert str(sympy.simplify(to_sympy(flops) / to_sympy(bytes_moved))) == str(fast)
    # A sign `signsimp` leaves (as many negative terms as positive, the first positive).
    mixed = common_factor_form(flops - 2 * ni * nl, bytes_moved)
    assert str(mixed) == "(2*nj - 1)/(8*(9*nj + 32))"
    assert str(sympy.simplify(to_sympy(flops - 2 * ni * nl) / to_sympy(bytes_moved))) == str(mixed)


def test_a_side_signsimp_turns_over_is_left_to_sympy() -> None:
    """`(4*M*N - M - N)/(16*M*N + 16*M + 16*N)` (a fixture's level ratio): the top has more
    negative terms than positive, `signsimp` turns it over and `simplify` writes
    `(M*N/4 - M/16 - N/16)/(M*N + M + N)`, which the cancelled form is not."""
    M, N = (symbol(name, "size") for name in ("M", "N"))
    flops, bytes_moved = 4 * M * N - M - N, 16 * M * N + 16 * M + 16 * N
    assert common_factor_form(flops, bytes_moved) is None
    expected = sympy.simplify(to_sympy(flops) / to_sympy(bytes_moved))
    assert str(expected) == "(M*N/4 - M/16 - N/16)/(M*N + M + N)"


_signed = st.one_of(_positive, _positive, st.integers(-40, -1))
"""Mostly positive coefficients: a side turned over is left to sympy, and not compared."""


@st.composite
def _signed_ratios(draw: st.DrawFn) -> tuple[Poly, Poly]:
    """Two sums with terms of either sign, sharing only numbers and a monomial (most of the
    time): the level ratios of model code with a causal mask or a halo."""
    sides = []
    for _ in range(2):
        count = draw(st.integers(2, 5))
        sides.append(sum((draw(_signed) * draw(_monomials) for _ in range(count)), ONE * 0))
    shared = draw(st.sampled_from([ONE, n, T * m, n * m]))
    return shared * sides[0], shared * sides[1] * draw(st.sampled_from([1, 8, 16]))


@settings(max_examples=120, deadline=None)  # `simplify` takes a tenth of a second
@given(_signed_ratios())
def test_the_common_factor_form_with_signs_is_simplifys(ratio: tuple[Poly, Poly]) -> None:
    """Where `signsimp` turns no side over and `cancel` no sign either, the cancelled form
    is `simplify`'s, text and expression (the placement decides these without sympy)."""
    flops, bytes_moved = ratio
    if flops.terms and bytes_moved.terms:  # terms drawn may cancel to nothing
        _is_simplifys(flops, bytes_moved)


def test_polybench_gemm_level_ratio_keeps_its_tops_monomial() -> None:
    """gemm's `(3*ni*nj*nk + ni*nj)/(24*ni*nj*nk + 16*ni*nj + 64*ni*nk)`: after `ni` is
    cancelled the top keeps `nj` of its own, which `simplify` writes before the sum."""
    ni, nj, nk = (symbol(name, "size") for name in ("ni", "nj", "nk"))
    flops = 3 * ni * nj * nk + ni * nj
    bytes_moved = 24 * ni * nj * nk + 16 * ni * nj + 64 * ni * nk
    fast = common_factor_form(flops, bytes_moved)
    assert str(fast) == "nj*(3*nk + 1)/(8*(3*nj*nk + 2*nj + 8*nk))"
    expected = sympy.simplify(to_sympy(flops) / to_sympy(bytes_moved))
    assert str(expected) == str(fast)
    assert to_sympy(fast) == expected
