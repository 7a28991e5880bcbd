"""The cancelled ratio of polynomials in sizes and their floors, ceilings, `Min`s and
`Max`s (`width // heads`, clamped extents) is `sympy.cancel`'s, term for term, without it."""

from __future__ import annotations

import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from polynomial_strategies import SYMBOLS, ratios_sharing_a_factor

from aiscan.analysis.atom_cancel import cancelled_over_atoms
from aiscan.analysis.intensity import intensity

n, m, N, k = SYMBOLS[:4]
width, heads = (sympy.Symbol(name, integer=True, positive=True) for name in ("width", "heads"))
ATOMS = [
    sympy.floor(width / heads),
    sympy.floor(n / 2 - sympy.Rational(1, 2)),
    sympy.floor(-k / 2 + n / 2 + sympy.Rational(1, 2)),
    sympy.ceiling(m / 8),
    sympy.Min(n, m - 1),
    sympy.Max(0, 4 - N),
]
FACTORS = [*SYMBOLS[:4], width, heads, *ATOMS]

coefficients = st.fractions(min_value=-30, max_value=30, max_denominator=6)
monomials = st.lists(st.tuples(st.sampled_from(FACTORS), st.integers(1, 2)), max_size=3)


@st.composite
def polynomials(draw: st.DrawFn) -> sympy.Expr:
    total = sympy.Integer(0)
    for coefficient, factors in draw(
        st.lists(st.tuples(coefficients, monomials), min_size=1, max_size=4)
    ):
        term = sympy.Rational(coefficient.numerator, coefficient.denominator)
        for factor, power in factors:
            term *= factor**power
        total += term
    return sympy.expand(total)


@settings(max_examples=300, deadline=None)
@given(ratios_sharing_a_factor(polynomials))
def test_cancel_over_atoms_is_sympys_cancel(ratio: tuple[sympy.Expr, sympy.Expr]) -> None:
    numerator, denominator = ratio
    assume(numerator != 0 and denominator != 0)
    found = cancelled_over_atoms(numerator, denominator)
    assume(found is not None)
    expected = sympy.fraction(sympy.cancel(numerator / denominator))
    # Structurally, not only as values: later steps compare and hash these expressions.
    assert tuple(map(sympy.srepr, found)) == tuple(map(sympy.srepr, expected))


def test_a_ratio_with_a_floor_of_sizes_is_cancelled_without_sympys_cancel() -> None:
    """Grouped-query attention's counts (`torch_llama.py`): the head width is a floor."""
    head = sympy.floor(width / heads)
    flops = 2 * heads * width * head - heads * head
    traffic = 4 * heads * head * width + 8 * heads * width * head
    top, bottom = cancelled_over_atoms(sympy.expand(flops), sympy.expand(traffic))
    assert (str(top), str(bottom)) == ("2*width - 1", "12*width")
    assert str(intensity(flops, traffic).expr) == "(2*width - 1)/(12*width)"


def test_an_atom_is_the_generator_cancel_makes_of_it() -> None:
    """`cancel` expands inside a floor: its result holds `floor(m*n/3 + m/3)` where the
    ratio held `floor(m*(n + 1)/3)` (the intensity's sums are expanded before, so there the
    two agree)."""
    atom = sympy.floor(m * (n + 1) / 3)
    found = cancelled_over_atoms(n * atom + 1, 2 * atom)
    assert found is not None
    assert tuple(map(sympy.srepr, found)) == tuple(
        map(sympy.srepr, sympy.fraction(sympy.cancel((n * atom + 1) / (2 * atom))))
    )
    assert str(found[1]) == "2*floor(m*n/3 + m/3)"


def test_shapes_left_to_sympy() -> None:
    R, K = sympy.symbols("R K", positive=True, integer=True)
    assert cancelled_over_atoms(n + 1, 2 * n) is None  # no atom: `sympy.Poly`'s
    assert cancelled_over_atoms(2 * R * R**K, 8 * R**2) is None  # a symbolic power
    piecewise = sympy.Piecewise((K, sympy.Eq(R, 1)), (R**K, True))
    assert cancelled_over_atoms(6 * R * piecewise, 16 * R) is None
    assert cancelled_over_atoms(n / heads + 1, 2 * sympy.floor(n / heads)) is None  # `1/heads`
