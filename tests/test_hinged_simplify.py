"""`simplify_hinged` is sympy's `simplify` of a ratio holding footprint hinges, bit for bit,
without the steps that cannot change it (issue 33: a third of jacobi2d's placement)."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.analysis.hinged_simplify import is_hinged_ratio, simplify_hinged

m, n, T = (sympy.Symbol(name, integer=True, positive=True) for name in ("m", "n", "T"))
H = sympy.Max(0, 4 - n)

# Ratios the fixtures' placements hand to `simplify` (jacobi2d on a CPU, the time-stepped
# Jacobi, a stencil whose gcd is a number only), with `simplify`'s own text.
FIXTURE_RATIOS = [
    (
        (4 * m * n - 8 * m - 8 * n + 16)
        / (40 * m * n - 8 * m * H - 64 * m - 80 * n + 16 * H + 128),
        "(n - 2)/(2*(5*n - Max(0, 4 - n) - 8))",
    ),
    ((2 * n - 4) / (72 * n - 8 * H - 128), "(2 - n)/(4*(-9*n + Max(0, 4 - n) + 16))"),
    (
        (4 * T * n**2 - 16 * T * n + 16 * T)
        / (48 * T * n**2 - 160 * T * n - 8 * T * H**2 + 128 * T),
        "(n**2 - 4*n + 4)/(2*(6*n**2 - 20*n - Max(0, 4 - n)**2 + 16))",
    ),
    (
        (sympy.Rational(2, 3) * n**3 - n**2 / 2 - n / 6)
        / (
            sympy.Rational(8, 3) * n**3
            + 24 * n**2
            - sympy.Rational(320, 3) * n
            + 8 * sympy.Max(0, 3 - n)
            + 48 * H
            - 40
        ),
        "n*(4*n**2 - 3*n - 1)"
        "/(16*(n**3 + 9*n**2 - 40*n + 3*Max(0, 3 - n) + 18*Max(0, 4 - n) - 15))",
    ),
]


@pytest.mark.parametrize(("ratio", "text"), FIXTURE_RATIOS)
def test_the_fixtures_hinged_ratios_are_simplifys_text(ratio: sympy.Expr, text: str) -> None:
    assert is_hinged_ratio(ratio)
    assert str(sympy.simplify(ratio)) == text  # the text the reports have printed
    assert str(simplify_hinged(ratio)) == text


@pytest.mark.parametrize("version", ["1.13.3", "1.15.0", "2.0"])
def test_another_sympy_is_left_to_simplify(version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The steps follow one release's `simplify`; under another, `simplify` decides."""
    ratio = FIXTURE_RATIOS[0][0]
    assert simplify_hinged(ratio) is not None  # this sympy: the mirrored one
    monkeypatch.setattr(sympy, "__version__", version)
    assert simplify_hinged(ratio) is None


@pytest.mark.parametrize(
    "ratio",
    [
        n / (4 * n + 8),  # no hinge: the placement's own fast paths or `simplify`
        n / (4 * n + sympy.Max(0, 4 - 2 * n)),  # `simplify` factors 4 - 2*n inside the Max
        n / (4 * n + sympy.Max(1, 4 - n)),  # not a hinge at 0
        n / (4 * n + sympy.Min(0, 4 - n)),
        n / (4 * n + sympy.Max(0, 4 - n) + sympy.ceiling(n / 3)),
        n / (4 * n + sympy.Max(0, 4 - n)) ** sympy.Rational(1, 2),
    ],
)
def test_other_shapes_are_left_to_simplify(ratio: sympy.Expr) -> None:
    assert not is_hinged_ratio(ratio)


@pytest.mark.parametrize("name", ["n", "a", "N", "z_d0", "trip_L3", "_x"])
@pytest.mark.parametrize("bend", [2, 3, 4, 17])
def test_a_hinges_argument_is_its_own_simplification(name: str, bend: int) -> None:
    """What lets `simplify_hinged` skip `simplify`'s pass over every `Max`'s arguments."""
    size = sympy.Symbol(name, integer=True, positive=True)
    assert sympy.simplify(bend - size) == bend - size
    hinge = sympy.Max(0, bend - size)
    assert hinge.func(*(sympy.simplify(a) for a in hinge.args)) == hinge


_small = st.integers(-6, 6)
_monomials = st.sampled_from([1, n, m, n * m, n**2, T * n, T])


@st.composite
def _hinged_ratios(draw: st.DrawFn) -> sympy.Expr:
    """Footprint shapes: a polynomial over a polynomial plus hinges times polynomials."""
    top = sum((draw(_small) * draw(_monomials) for _ in range(draw(st.integers(1, 4)))), n)
    bottom = sum((draw(_small) * draw(_monomials) for _ in range(draw(st.integers(1, 4)))), 9 * n)
    for _ in range(draw(st.integers(1, 2))):
        hinge = sympy.Max(0, draw(st.integers(2, 5)) - n)
        bottom += (
            draw(st.sampled_from([-8, -3, -1, 1, 2, 16]))
            * draw(_monomials)
            * hinge ** draw(st.integers(1, 2))
        )
    factor = draw(st.sampled_from([1, 2, m - 2, n - 2, T]))
    return sympy.expand(factor * top) / sympy.expand(factor * bottom)


@settings(max_examples=40, deadline=None)  # `simplify` takes a tenth of a second
@given(_hinged_ratios())
def test_simplify_hinged_is_simplify(ratio: sympy.Expr) -> None:
    if not is_hinged_ratio(ratio):  # the hinges cancelled, or sympy folded them
        return
    expected = sympy.simplify(ratio)
    fast = simplify_hinged(ratio)
    assert str(fast) == str(expected)
    assert fast == expected
