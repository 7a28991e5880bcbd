"""The text report's factored counts without sympy (issue 33): `factored_text` factors a
`Poly` and prints the product as `sympy.factor` and sympy's `Mul` do, and `readable` gives
the same text for a Poly or a Quotient as it gives for its sympy form (which takes the
sympy path), wherever it decides without sympy."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from aiscan.algebra import Poly, Quotient, constant, hinge, symbol, to_sympy
from aiscan.report import readable as readable_module
from aiscan.report.factored_text import factor_list, product_text, sum_factors
from aiscan.report.readable import readable

NAMES = ["m", "n", "ni", "nj", "T", "NI"]

names = st.lists(st.sampled_from(NAMES), min_size=2, max_size=4, unique=True)


def _var(name: str) -> Poly:
    return symbol(name, "size")


@st.composite
def linear_factors(draw: st.DrawFn, pool: list[str]) -> Poly:
    """`a*x + b`, small a and root: `n - 2`, `3*n + 2`, `2*m - 1`."""
    a, b = draw(st.integers(1, 5)), draw(st.integers(-8, 8).filter(bool))
    return constant(a) * _var(draw(st.sampled_from(pool))) + constant(b)


@st.composite
def multilinear_sums(draw: st.DrawFn, pool: list[str]) -> Poly:
    """A sum of products of distinct symbols: `m*n - m - n`, `ni*nj + ni*nk + nj*nk + 2`."""
    count = draw(st.integers(2, 4))
    total = constant(0)
    for _ in range(count):
        chosen = draw(st.lists(st.sampled_from(pool), max_size=3, unique=True))
        term = constant(draw(st.integers(-4, 4).filter(bool)))
        for name in chosen:
            term = term * _var(name)
        total = total + term
    return total


@st.composite
def other_sums(draw: st.DrawFn, pool: list[str]) -> Poly:
    """Sums that are no product of the shapes above: `n**2 + m + 3`, `2*m**2 - n`."""
    x, y = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
    a, b = draw(st.integers(1, 3)), draw(st.integers(-5, 5))
    return constant(a) * _var(x) ** 2 + _var(y) + constant(b)


@st.composite
def counts(draw: st.DrawFn, common: bool = False, most: int = 3) -> Poly:
    """A product of the factor shapes counts have, times a content and a monomial; with
    `common`, only the shapes shown irreducible (linear factors and their powers)."""
    pool = draw(names)
    shapes = [linear_factors(pool)]
    if not common:
        shapes += [multilinear_sums(pool), other_sums(pool)]
    product = constant(draw(st.fractions(min_value=1, max_value=48, max_denominator=6)))
    for factor in draw(st.lists(st.one_of(*shapes), min_size=1, max_size=most)):
        power = draw(st.integers(1, 2)) if len(factor.terms) == 2 else 1
        product = product * factor**power
    for name in draw(st.lists(st.sampled_from(pool), max_size=2)):
        product = product * _var(name)
    return product


@st.composite
def hinged(draw: st.DrawFn) -> Poly:
    """A count with a footprint's small-size hinges added (`- 8*Max(0, 4 - m)*Max(0, 4 - n)`)."""
    count = draw(counts())
    names_ = sorted({v[0] for m in count.terms for v, _ in m}) or ["n"]
    term = constant(draw(st.integers(-8, 8).filter(bool)))
    for name in draw(st.lists(st.sampled_from(names_), min_size=1, max_size=2, unique=True)):
        atom = hinge(constant(draw(st.integers(2, 5))) - _var(name))
        assert atom is not None
        term = term * atom
    return count + term


sizes = st.dictionaries(st.sampled_from(NAMES), st.integers(1, 8), max_size=2)


def _sympy_text(expr: object, given: dict[str, int]) -> str:
    """`readable` of the sympy form: the sympy path, as before this module."""
    return readable(to_sympy(expr), given)


@settings(max_examples=150, deadline=None)
@given(counts())
def test_the_factors_are_sympys(poly: Poly) -> None:
    factoring = factor_list(poly)
    if factoring is None:
        return
    content, factors = sympy.factor_list(to_sympy(poly))
    assert factoring[0] == Fraction(int(content.p), int(content.q))
    assert {str(f): p for f, p in factoring[1].items()} == {str(f): p for f, p in factors}
    if sum_factors(factoring) >= 2:
        assert product_text(factoring) == str(sympy.factor(to_sympy(poly)))


@settings(max_examples=100, deadline=None)
@given(counts(common=True))
def test_the_common_shapes_are_factored_without_sympy(poly: Poly) -> None:
    assert factor_list(poly) is not None


@settings(max_examples=150, deadline=None)
@given(counts(), sizes)
def test_a_count_reads_as_on_the_sympy_path(poly: Poly, given_sizes: dict[str, int]) -> None:
    assert readable(poly, given_sizes) == _sympy_text(poly, given_sizes)


@settings(max_examples=100, deadline=None)
@given(hinged(), sizes)
def test_a_hinged_count_reads_as_on_the_sympy_path(poly: Poly, given_sizes: dict[str, int]) -> None:
    assert readable(poly, given_sizes) == _sympy_text(poly, given_sizes)


@settings(max_examples=150, deadline=None)
@given(counts(most=2), counts(most=2), st.booleans(), sizes)
def test_a_quotient_reads_as_on_the_sympy_path(
    top: Poly, bottom: Poly, hinged_bottom: bool, given_sizes: dict[str, int]
) -> None:
    if len(bottom.terms) < 2 or not top.terms:
        return  # a Quotient's bottom is a sum here (a monomial's is `Quotient.simplified`'s)
    # A Quotient is in lowest terms: the intensity's cancellation made it.
    assume(sympy.gcd(to_sympy(top), to_sympy(bottom)).is_number)
    if hinged_bottom:
        (name, _), _power = next(iter(next(m for m in bottom.terms if m)))
        atom = hinge(constant(4) - _var(name))
        assert atom is not None
        bottom = bottom - constant(2) * atom
    quotient = Quotient(top, bottom)
    assert readable(quotient, given_sizes) == _sympy_text(quotient, given_sizes)


def _decided(expr: Poly | Quotient, given_sizes: dict[str, int] | None = None) -> str | None:
    return readable_module._readable_exact(expr, given_sizes or {}, str(expr))


m, n, ni, nj, nk, tsteps = (_var(name) for name in ("m", "n", "ni", "nj", "nk", "tsteps"))


@pytest.mark.parametrize(
    ("expr", "shown"),
    [
        # jacobi2d's counts and hinged intensity
        (constant(4) * (m - constant(2)) * (n - constant(2)), "4*(m - 2)*(n - 2)"),
        (
            Quotient(
                (m - constant(2)) * (n - constant(2)),
                constant(4) * m * n
                - constant(4) * m
                - constant(4) * n
                - constant(2) * hinge(constant(4) - m) * hinge(constant(4) - n),  # type: ignore[operator]
            ),
            "(m - 2)*(n - 2)/(4*(m*n - m - n)) (for m >= 4, n >= 4)",
        ),
        # PolyBench: lu's flops, jacobi-2d's bytes, cholesky's and gemm's intensities
        (
            constant(Fraction(32, 3)) * n**3 - constant(4) * n**2 - constant(Fraction(20, 3)) * n,
            "4*n*(n - 1)*(8*n + 5)/3",
        ),
        (constant(8) * tsteps * (n - constant(2)) ** 2, "8*tsteps*(n - 2)**2"),
        (
            Quotient(
                constant(2) * n**2 + constant(3) * n - constant(5),
                constant(32) * n**2 + constant(48) * n + constant(16),
            ),
            "(n - 1)*(2*n + 5)/(16*(n + 1)*(2*n + 1))",
        ),
        (
            Quotient(
                constant(3) * ni * nj * nk + ni * nj,
                constant(16) * ni * nj + constant(8) * ni * nk + constant(8) * nj * nk,
            ),
            "ni*nj*(3*nk + 1)/(8*(2*ni*nj + ni*nk + nj*nk))",
        ),
    ],
)
def test_the_benchmark_kernels_counts_are_decided_without_sympy(
    expr: Poly | Quotient, shown: str
) -> None:
    assert _decided(expr) == shown


def test_a_factor_not_shown_irreducible_is_left_to_sympy() -> None:
    """`(m + n)*(m + 2)` multiplied out is multilinear in n but splits: sympy's to factor."""
    split = (m + n) * (ni + nj) * (n - constant(2))
    assert factor_list(split) is None
    assert _decided(split) is None
    assert readable(split) == "(m + n)*(n - 2)*(ni + nj)"
