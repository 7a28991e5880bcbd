"""A nest's non-polynomial indices written at a grid point without sympy (`isl_text`) are
the same integer functions as sympy's `subs` at those numbers, written by `_text`."""

from __future__ import annotations

import re

import islpy as isl
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.algebra import to_sympy
from aiscan.analysis import isl_text
from aiscan.analysis.isl_text import NotAffine, Var, affine_text
from aiscan.ir.symbols import loop_symbol, size_symbol

LI, LJ = (to_sympy(loop_symbol(name)) for name in ("i", "j"))
N, M, H = (to_sympy(size_symbol(name)) for name in ("n", "m", "h"))
AT = {LI: Var("0", 1, "T1"), LJ: Var("2", 3, "T3")}


def _sympy_text(expr: sympy.Expr, sizes: dict[sympy.Symbol, int]) -> str:
    """The reading the direct one replaces: sympy substitutes the numbers, then `_text`."""
    return isl_text._text(sympy.expand(expr.subs(sizes)), {**sizes, **AT})


def _function(text: str) -> isl.Map:
    names = sorted(set(re.findall(r"T\d+", text)), key=lambda n: int(n[1:]))
    return isl.Map(f"{{ [{', '.join(names) or 'T1'}] -> [v] : v = {text} }}")


def _same_function(expr: sympy.Expr, sizes: dict[sympy.Symbol, int]) -> str:
    direct = isl_text._text_at_numbers(expr, {**sizes, **AT})
    assert _function(direct).is_equal(_function(_sympy_text(expr, sizes)))
    return direct


@pytest.mark.parametrize(
    ("expr", "sizes"),
    [
        (sympy.floor(LI / sympy.floor(N / H)), {N: 64, H: 8}),  # `i // (width // heads)`
        (sympy.Mod(LI * N / 2 + LJ, M), {N: 6, M: 16}),  # rotary halves
        (sympy.ceiling(LI / 3 + N / 2), {N: 5}),
        (sympy.Max(0, LI - N) + sympy.Min(LJ, M - 1), {N: 4, M: 9}),
        (LI + N**M * LJ / N, {N: 11, M: 9}),  # a power with a size for exponent
        (2 * sympy.floor((LI + LJ) / 4) - sympy.Mod(2 * LI, 6), {}),
    ],
)
def test_the_direct_text_is_the_function_sympy_gives(
    expr: sympy.Expr, sizes: dict[sympy.Symbol, int]
) -> None:
    _same_function(expr, sizes)


def test_a_power_with_a_size_exponent_is_multiplied_out() -> None:
    text = isl_text._text_at_numbers(N**M, {N: 3, M: 4})
    assert text == "(81)"


@pytest.mark.parametrize(
    ("expr", "sizes"),
    [
        (LI * LJ, {}),  # a product of two variables
        (LI * N / 2, {N: 3}),  # half a variable
        (sympy.Mod(LI, N), {N: 0}),  # no modulus
        (sympy.floor(LI / N), {N: 0}),  # a division by zero
        (sympy.Mod(LI / 2, N), {N: 4}),  # half a variable inside
    ],
)
def test_what_is_no_affine_text_stays_so(expr: sympy.Expr, sizes: dict[sympy.Symbol, int]) -> None:
    with pytest.raises(NotAffine):
        isl_text._text_at_numbers(expr, {**sizes, **AT})


def test_a_product_that_sympy_makes_vanish_still_reads_through_sympy() -> None:
    """`m*i*j` at m = 0 is 0 to sympy; the direct reading refuses the product, and
    `affine_text` asks sympy, as it always did."""
    assert affine_text(sympy.floor(M * LI * LJ / 2), {M: 0, **AT}) == "0"


_atoms = st.sampled_from([LI, LJ, N, M, H])
_small = st.integers(-6, 6).map(sympy.Integer)


@st.composite
def _affine(draw: st.DrawFn) -> sympy.Expr:
    """A sum of a few multiples of loop variables and sizes, with fractions."""
    terms = draw(st.lists(st.tuples(st.fractions(-4, 4, max_denominator=4), _atoms), max_size=3))
    total = draw(_small)
    for coefficient, atom in terms:
        total += sympy.Rational(coefficient.numerator, coefficient.denominator) * atom
    return total


@st.composite
def _index(draw: st.DrawFn) -> sympy.Expr:
    inner = draw(_affine())
    shape = draw(st.sampled_from(["floor", "ceiling", "mod", "max", "min", "plain"]))
    if shape == "floor":
        return sympy.floor(inner)
    if shape == "ceiling":
        return sympy.ceiling(inner)
    if shape == "mod":
        return sympy.Mod(inner, draw(st.sampled_from([N, M, sympy.Integer(4)])))
    if shape in ("max", "min"):
        other = draw(_affine())
        return (sympy.Max if shape == "max" else sympy.Min)(inner, other)
    return inner + draw(st.integers(1, 3)) * sympy.floor(draw(_affine()) / 2)


@settings(max_examples=300, deadline=None)
@given(_index(), st.integers(1, 12), st.integers(1, 12), st.integers(1, 12))
def test_random_indices_read_alike_or_are_refused(expr: sympy.Expr, n: int, m: int, h: int) -> None:
    """Where sympy's reading is affine the direct one is the same function or refuses (and
    `affine_text` then asks sympy); where sympy's is not, neither is the direct one."""
    sizes = {N: n, M: m, H: h}
    try:
        expected = _sympy_text(expr, sizes)
    except NotAffine:
        expected = None
    try:
        direct = isl_text._text_at_numbers(expr, {**sizes, **AT})
    except NotAffine:
        direct = None
    if expected is None:
        assert direct is None
    elif direct is not None:
        assert _function(direct).is_equal(_function(expected))


@given(
    st.integers(-3, 3), st.integers(-3, 3), st.integers(-3, 3), st.integers(-4, 4),
    st.sampled_from(["(0)", "(5)"]), st.integers(1, 3),
)  # fmt: skip
@settings(max_examples=60, deadline=None)
def test_a_polynomials_text_is_the_plain_sum_of_its_terms(
    a: int, b: int, c: int, constant: int, start: str, step: int
) -> None:
    """A coefficient of 1, a constant of 0, a start of 0 and a step of 1 are left out of
    the text (fewer tokens for isl's parser): the same function as every term written."""
    substitution = {LI: Var(start, step, "T1"), LJ: Var("(2)", 3, "T3"), N: isl_text.Param("P0")}
    text = affine_text(a * LI + b * LJ + c * N + constant, substitution)
    written = f"{a}*(({start}) + {step}*T1) + {b}*((2) + 3*T3) + {c}*P0 + {constant}"
    function = isl.Map(f"[P0] -> {{ [T1, T3] -> [v] : v = {text} }}")
    assert function.is_equal(isl.Map(f"[P0] -> {{ [T1, T3] -> [v] : v = {written} }}"))
    assert not re.search(r"(?<![\d-])1\*", text) and "+ 0)" not in text
