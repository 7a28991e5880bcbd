"""The limit of an intensity holding footprint hinges (`Max(0, 4 - n)`, exact at small sizes)
as the sizes grow (issue 33). sympy's series fail on every such `Max`: the hinge is 0 past
its argument's largest root, so the limit is that of the expression without it."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from aiscan.algebra import ZERO, as_expression, is_poly, to_sympy
from aiscan.analysis.intensity import limit_at_infinity, settled_hinges
from aiscan.ir.symbols import size_symbol
from aiscan.roofline.devices import load_devices
from aiscan.roofline.placement import _intensity_and_limit, _limit, place

m, n = size_symbol("m"), size_symbol("n")
x = sympy.Symbol("x", positive=True)
t = sympy.Symbol("t", positive=True)

# jacobi2d's placed traffic on a CPU with a cache model: the footprint of its reads is exact
# at small sizes, where the stencil's four neighbours do not yet cover the interior.
JACOBI_FLOPS = 4 * m * n - 8 * m - 8 * n + 16
JACOBI_BYTES = (
    40 * m * n - 8 * m * sympy.Max(0, 4 - n) - 64 * m - 80 * n + 16 * sympy.Max(0, 4 - n) + 128
)


def test_jacobi2ds_placed_intensity_has_the_limit_one_tenth() -> None:
    intensity, limit = _intensity_and_limit(as_expression(JACOBI_FLOPS), JACOBI_BYTES)
    assert str(intensity) == "(n - 2)/(2*(5*n - Max(0, 4 - n) - 8))"
    assert limit == sympy.Rational(1, 10)


def test_jacobi2d_attains_a_tenth_of_the_bandwidth_as_sizes_grow() -> None:
    """The JSON's `attainable_limit_flops_per_s` was null here: sympy's limit failed."""
    placed = place(JACOBI_FLOPS, JACOBI_BYTES, "fp64", load_devices().get("xeon-8480plus"))
    assert placed.bandwidth_bytes_per_s == 307.2e9
    assert placed.intensity_limit == sympy.Rational(1, 10)
    assert placed.attainable_limit_flops_per_s == pytest.approx(30.72e9, rel=1e-12)


@pytest.mark.parametrize(
    ("expr", "settled"),
    [
        (x / (3 * x + sympy.Max(0, 4 - x)), x / (3 * x)),
        (x + sympy.Max(0, 4 - x) * sympy.Max(0, 5 - 2 * x), x),
        (sympy.Max(0, -(x**2) + 100 * x) + 1, sympy.Integer(1)),  # falls past x = 100
        (sympy.Max(0, 4 - x), ZERO),
    ],
)
def test_a_falling_hinge_settles_at_zero(expr: sympy.Expr, settled: sympy.Expr) -> None:
    assert to_sympy(settled_hinges(expr, x)) == to_sympy(settled)


@pytest.mark.parametrize(
    "hinge",
    [
        sympy.Max(0, x - 4),  # rises: it is x - 4 past 4, not 0
        sympy.Max(0, x**2 - 100 * x),  # rises past x = 100
        sympy.Max(0, 4 - t),  # in another symbol: x's growth does not move it
        sympy.Max(1, 4 - x),  # no hinge at 0: it settles at 1
        sympy.Max(0, 4 - x, t - x),  # three arguments
    ],
)
def test_a_hinge_that_does_not_fall_is_kept(hinge: sympy.Expr) -> None:
    assert settled_hinges(x + hinge, x) == x + hinge


def test_a_rising_hinge_is_left_to_sympy() -> None:
    """sympy's limit fails on it, so the limit stays unknown rather than guessed."""
    assert limit_at_infinity(sympy.Max(0, x - 4) / (2 * x), x) is None
    assert limit_at_infinity(sympy.Max(0, 4 - x) / (2 * x) + 3, x) == 3


def test_a_constant_hinge_argument_is_not_growth() -> None:
    """`Max(0, 4 - m + n)` with all sizes equal is the number 4, sympy's own evaluation."""
    assert _limit(to_sympy(n / (2 * n + 1)) + sympy.Max(0, 4 - to_sympy(m) + to_sympy(n))) == (
        sympy.Rational(9, 2)
    )


_coefficients = st.lists(st.integers(-9, 9), min_size=1, max_size=3)


def _polynomial(coefficients: list[int], var: sympy.Symbol) -> sympy.Expr:
    return sum((c * var**k for k, c in enumerate(coefficients)), sympy.Integer(0))


@settings(max_examples=25, deadline=None)  # sympy's limit takes a tenth of a second or more
@given(
    _coefficients,
    _coefficients,
    st.lists(st.integers(-9, 9), min_size=1, max_size=2),
    st.integers(1, 9),
    st.sampled_from([-9, -4, -1, 1, 2, 8]),
    st.booleans(),
)
def test_the_limit_past_a_falling_hinge_is_sympys(
    above: list[int],
    below: list[int],
    hinge_low: list[int],
    hinge_lead: int,
    weight: int,
    hinge_above: bool,
) -> None:
    """Held to sympy's limit of the same expression moved past the hinge's roots: with
    x = 100 + y every coefficient of the hinge's argument in y is negative (its roots and
    its derivative's lie below 1 + 9), so sympy itself evaluates the hinge to 0 there."""
    size = to_sympy(n)
    falling = _polynomial(hinge_low, size) - hinge_lead * size ** len(hinge_low)
    hinge = weight * sympy.Max(0, falling)
    top = _polynomial(above, size) + (hinge if hinge_above else 0)
    bottom = _polynomial(below, size) + 2 * size ** (len(below) + 1)  # grows, positive
    bottom += 0 if hinge_above else hinge
    expr = top / bottom
    y = sympy.Symbol("y", positive=True)
    moved = expr.subs(size, 100 + y)
    assume(not moved.has(sympy.Max))  # sympy could not settle it: nothing to hold us to
    expected = sympy.limit(moved, y, sympy.oo)
    assert _limit(expr) == expected
    assert limit_at_infinity(expr.subs(size, x), x) == expected


def test_a_settled_expression_is_a_poly_when_it_is_one() -> None:
    assert is_poly(settled_hinges(x + sympy.Max(0, 4 - x), x))
