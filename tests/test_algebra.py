"""`aiscan.algebra.Poly` against sympy: the same values, hashes, equalities and text."""

from __future__ import annotations

import pickle
from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan import algebra
from aiscan.algebra import KIND_ASSUMPTIONS, Poly, constant, normal, symbol, to_sympy

NAMES = ("n", "m", "N", "k", "nnz", "i", "p_L12", "trip_L3")
KINDS = tuple(KIND_ASSUMPTIONS)

symbols = st.builds(symbol, st.sampled_from(NAMES), st.sampled_from(KINDS))
coefficients = st.fractions(min_value=-50, max_value=50, max_denominator=12)


@st.composite
def polys(draw: st.DrawFn) -> Poly:
    """A random polynomial, built with Poly's own arithmetic."""
    total = algebra.ZERO
    for _ in range(draw(st.integers(0, 5))):
        term = constant(draw(coefficients))
        for _ in range(draw(st.integers(0, 3))):
            term = term * draw(symbols) ** draw(st.integers(1, 3))
        total = total + term
    return total


@pytest.mark.parametrize("kind", KINDS)
def test_symbols_hash_and_compare_equal_to_sympy_symbols(kind: str) -> None:
    mine = symbol("n", kind)
    theirs = sympy.Symbol("n", **KIND_ASSUMPTIONS[kind])
    assert hash(mine) == hash(theirs)
    assert mine == theirs
    assert theirs == mine
    assert {theirs: 1}[mine] == 1
    assert {mine: 1}[theirs] == 1
    assert to_sympy(mine) is theirs or to_sympy(mine) == theirs
    assert normal(theirs) == mine and normal(theirs).__class__ is Poly


def test_symbols_of_other_kinds_differ() -> None:
    assert symbol("n", "size") != symbol("n", "loop")
    assert symbol("n", "size") != sympy.Symbol("n", integer=True)
    assert sympy.Dummy("n") != symbol("n", "plain")


@settings(max_examples=300, deadline=None)
@given(polys(), polys())
def test_arithmetic_agrees_with_sympy(a: Poly, b: Poly) -> None:
    sa, sb = to_sympy(a), to_sympy(b)
    assert to_sympy(a + b) == sympy.expand(sa + sb)
    assert to_sympy(a - b) == sympy.expand(sa - sb)
    assert to_sympy(a * b) == sympy.expand(sa * sb)
    assert to_sympy(a**2) == sympy.expand(sa**2)
    assert normal(sympy.expand(sa * sb)) == a * b


@settings(max_examples=300, deadline=None)
@given(polys())
def test_text_is_sympys_text(a: Poly) -> None:
    assert str(a) == str(to_sympy(a))


@settings(max_examples=200, deadline=None)
@given(polys(), st.integers(1, 40), st.integers(-5, 5))
def test_substitution_agrees_with_sympy(a: Poly, value: int, shift: int) -> None:
    n = symbol("n", "size")
    replacement = n + shift
    assert to_sympy(a.subs({n: value})) == sympy.expand(to_sympy(a).subs({to_sympy(n): value}))
    assert to_sympy(a.subs({n: replacement})) == sympy.expand(
        to_sympy(a).subs({to_sympy(n): to_sympy(replacement)})
    )


@settings(max_examples=200, deadline=None)
@given(polys())
def test_equal_values_hash_alike(a: Poly) -> None:
    rebuilt = normal(sympy.expand(to_sympy(a)))
    assert rebuilt == a
    assert hash(rebuilt) == hash(a)


def test_mixed_operations_go_to_sympy() -> None:
    n = symbol("n", "size")
    ceiling = sympy.ceiling(to_sympy(n) / 4)
    assert (n + ceiling) == sympy.Symbol("n", integer=True, positive=True) + ceiling
    assert sympy.Max(n, 3) == sympy.Max(sympy.Symbol("n", integer=True, positive=True), 3)
    assert (n / n) == 1 and (n / n).__class__ is Poly
    assert str(n / (n + 1)) == "n/(n + 1)"


def test_numbers() -> None:
    n = symbol("n", "size")
    assert constant(3) == 3 and hash(constant(3)) == hash(3) == hash(sympy.Integer(3))
    assert constant(0) == algebra.ZERO and not algebra.ZERO and algebra.ZERO.is_zero
    assert (n - n).is_number and (n - n) == 0
    assert int(constant(7)) == 7 and float(constant(1) / 4) == 0.25
    assert constant(2) < 3 and constant(5) >= 5
    assert str(constant(1) / 12) == "1/12"
    assert n.name == "n" and not (n + 1).is_Symbol
    with pytest.raises(AttributeError):
        _ = (n + 1).name


def test_one_name_in_two_kinds_prints_as_sympy_does() -> None:
    mixed = symbol("n", "size") + symbol("n", "loop")
    assert str(mixed) == str(to_sympy(mixed))


def test_polys_pickle() -> None:
    n = symbol("n", "size")
    value = 2 * n**2 - 1
    assert pickle.loads(pickle.dumps(value)) == value


@settings(max_examples=300, deadline=None)
@given(polys())
def test_signs_agree_with_sympy_where_decided(a: Poly) -> None:
    theirs = to_sympy(a)
    for name in ("is_positive", "is_negative", "is_nonnegative", "is_nonpositive", "is_integer"):
        mine = getattr(a, name)
        assert mine is None or mine == getattr(theirs, name), name
        if getattr(theirs, name) is not None:
            assert mine == getattr(theirs, name), name


@settings(max_examples=300, deadline=None)
@given(polys(), polys())
def test_division_is_sympys_quotient(a: Poly, b: Poly) -> None:
    if b.is_zero:
        return
    quotient = a / b
    assert to_sympy(quotient) == to_sympy(a) / to_sympy(b)
    assert str(quotient) == str(to_sympy(a) / to_sympy(b))


@settings(max_examples=300, deadline=None)
@given(polys(), polys())
def test_a_quotient_is_the_intensitys_sympy_expression(a: Poly, b: Poly) -> None:
    """The intensity's cancelled ratio as a `Quotient`: its text is the text of the sympy
    expression the intensity built before the type (a sum over a number unevaluated)."""
    from aiscan.analysis.intensity import _cancelled, _poly_ratio

    if b.is_zero or a.is_zero:
        return
    top, bottom = _cancelled(a, b)
    if not (algebra.is_poly(top) and algebra.is_poly(bottom)):
        return
    ratio = _poly_ratio(top, bottom)
    before = to_sympy(top) / to_sympy(bottom)
    if bottom.is_number and bottom != 1 and len(top.terms) > 1:
        inverse = sympy.Pow(to_sympy(bottom), -1, evaluate=False)
        before = sympy.Mul(to_sympy(top), inverse, evaluate=False)
    assert str(ratio) == str(before)
    assert to_sympy(ratio) == before
    if algebra.is_quotient(ratio):
        assert pickle.loads(pickle.dumps(ratio)) == ratio
        values = {s: 3 for s in ratio.free_symbols}
        if to_sympy(bottom).subs(values) != 0:
            assert ratio.subs(values) == before.subs(values)


@settings(max_examples=300, deadline=None)
@given(polys())
def test_probe_values_never_contradict_sympys_signs(a: Poly) -> None:
    """A probe value of one sign proves the opposite fact cannot hold everywhere."""
    values = list(algebra.probe_values(a))
    theirs = to_sympy(a)
    if any(v > 0 for v in values):
        assert theirs.is_nonpositive is not True
    if any(v >= 0 for v in values):
        assert theirs.is_negative is not True
    if any(v < 0 for v in values):
        assert theirs.is_nonnegative is not True


@settings(max_examples=300, deadline=None)
@given(polys())
def test_probe_values_are_the_polys_values_at_the_probes(a: Poly) -> None:
    """Summed off the terms, they are what `subs` gives with the same values."""
    free = a.free_symbols
    choices = [
        {s: 1 for s in free},
        {s: 2**20 for s in free},
        {s: 2**20 if s.kind == "size" else 1 for s in free},
    ]
    substituted = [a.subs(values).constant_value() for values in choices]
    assert list(algebra.probe_values(a)) == substituted


def test_infinity_is_sympys_oo() -> None:
    assert sympy.oo == algebra.INFINITY
    assert sympy.oo == to_sympy(algebra.INFINITY)
    assert str(algebra.INFINITY) == str(sympy.oo)
    assert constant(10**30) != algebra.INFINITY
    assert pickle.loads(pickle.dumps(algebra.INFINITY)) is algebra.INFINITY


@settings(max_examples=200, deadline=None)
@given(
    st.fractions(min_value=-3, max_value=5, max_denominator=4),
    st.integers(1, 3),
    st.fractions(min_value=-7, max_value=2, max_denominator=4),
    st.sampled_from(["m", "n", "tsteps"]),
    st.sampled_from(["size", "loop", "positive"]),
)
def test_a_size_power_less_a_number_has_sympys_signs(
    coefficient: object, power: int, number: object, name: str, kind: str
) -> None:
    """`m - 1`, a box side of gramschmidt and trmm, is nonnegative without sympy; every
    shape `c*s**k - d` answers what sympy answers."""
    poly = constant(coefficient) * symbol(name, kind) ** power + constant(number)  # type: ignore[arg-type]
    expected = to_sympy(poly)
    for fact in ("positive", "nonnegative", "negative", "nonpositive"):
        assert getattr(poly, f"is_{fact}") == getattr(expected, f"is_{fact}"), fact


def test_a_box_side_less_one_is_nonnegative_without_sympy() -> None:
    side = symbol("m", "size") - 1
    assert side._size_power_less_number() == {
        "positive": None,
        "nonnegative": True,
        "negative": False,
        "nonpositive": None,
    }
    assert side.is_nonnegative is True and side.is_positive is None


def test_a_multiple_of_a_polynomial_is_the_number_between_them() -> None:
    n, m = symbol("n", "size"), symbol("m", "size")
    assert (3 * n - 6 * m).multiple_of(n - 2 * m) == 3
    assert (n - 2 * m).multiple_of(-4 * n + 8 * m) == Fraction(-1, 4)
    assert (n - 2 * m).multiple_of(n - 3 * m) is None  # other ratios
    assert (n - 2 * m).multiple_of(n + m * n) is None  # other terms
