"""A hinge `Max(0, c - s)` carried in `algebra.Poly` as one more variable, against the sympy
expression it stands for: the same text (sympy's order of terms and factors with `Max`
factors), values, substitutions, arithmetic, symbols and facts (issue 33: jacobi2d's
footprint hinge without sympy)."""

from __future__ import annotations

import pickle
from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan import algebra
from aiscan.algebra import Poly, Quotient, constant, hinge, probe_values, symbol, to_sympy
from aiscan.analysis import intensity
from aiscan.analysis.footprint import provably_nonnegative
from aiscan.analysis.hinged_cancel import cancelled_hinged, cancelled_sums
from aiscan.analysis.intensity import past_bends, settled_hinges
from aiscan.ir.symbols import size_symbol
from aiscan.ir.trips import never_below_zero
from aiscan.report.readable import readable

NAMES = ("n", "m", "N", "k", "a_1")
sizes = st.builds(symbol, st.sampled_from(NAMES), st.just("size"))
others = st.builds(symbol, st.sampled_from(NAMES), st.sampled_from(("loop", "plain")))


@st.composite
def hinges(draw: st.DrawFn) -> Poly:
    argument = draw(st.integers(2, 9)) - draw(sizes)
    made = hinge(argument)
    assert made is not None
    return made


@st.composite
def hinged_polys(draw: st.DrawFn) -> Poly:
    """A random polynomial in sizes and hinges of sizes, built with Poly's arithmetic."""
    factors = st.one_of(sizes, hinges())
    total = algebra.ZERO
    for _ in range(draw(st.integers(0, 5))):
        term = constant(draw(st.fractions(min_value=-50, max_value=50, max_denominator=12)))
        for _ in range(draw(st.integers(0, 3))):
            term = term * draw(factors) ** draw(st.integers(1, 2))
        total = total + term
    return total


def _sympy_max(c: int, name: str) -> sympy.Expr:
    return sympy.Max(0, c - sympy.Symbol(name, integer=True, positive=True))


def test_a_hinge_is_sympys_max() -> None:
    n = symbol("n", "size")
    made = hinge(4 - n)
    assert made is not None and made.hinged
    assert str(made) == "Max(0, 4 - n)"
    assert to_sympy(made) == _sympy_max(4, "n")
    assert made == _sympy_max(4, "n")
    assert made.free_symbols == {n}
    assert made.var() is None and not made.is_Symbol
    assert made.is_integer is True


def test_what_sympy_evaluates_is_evaluated() -> None:
    n = symbol("n", "size")
    assert hinge(constant(-3)) == 0 and hinge(constant(5)) == 5
    assert hinge(1 - n) == 0 and sympy.Max(0, to_sympy(1 - n)) == 0
    assert hinge(n - 4) is None  # grows: not the footprint's shape, sympy's to build
    assert hinge(4 - 2 * n) is None
    assert hinge(4 - symbol("t", "loop")) is None
    assert hinge(Fraction(7, 2) - n) is None


@settings(max_examples=300, deadline=None)
@given(hinged_polys())
def test_text_is_sympys_text(a: Poly) -> None:
    assert str(a) == str(to_sympy(a))
    assert str(a) == str(sympy.sympify(str(to_sympy(a)), locals=_locals(a)))


def _locals(a: Poly) -> dict[str, object]:
    return {s.name: to_sympy(s) for s in a.free_symbols}


@settings(max_examples=300, deadline=None)
@given(hinged_polys(), hinged_polys())
def test_arithmetic_agrees_with_sympy(a: Poly, b: Poly) -> None:
    sa, sb = to_sympy(a), to_sympy(b)
    assert to_sympy(a + b) == sympy.expand(sa + sb)
    assert to_sympy(a - b) == sympy.expand(sa - sb)
    assert to_sympy(a * b) == sympy.expand(sa * sb)
    assert str(a * b) == str(sympy.expand(sa * sb))


@settings(max_examples=300, deadline=None)
@given(hinged_polys(), st.sampled_from(NAMES), st.integers(1, 12), st.integers(-3, 3))
def test_substitution_agrees_with_sympy(a: Poly, name: str, value: int, shift: int) -> None:
    s = symbol(name, "size")
    for replacement in (constant(value), s + shift, symbol("z", "size") + value):
        mine = a.subs({s: replacement})
        theirs = sympy.expand(to_sympy(a).subs({to_sympy(s): to_sympy(replacement)}))
        assert to_sympy(mine) == theirs
        assert str(mine) == str(theirs)


@settings(max_examples=200, deadline=None)
@given(hinged_polys(), st.integers(1, 9), st.integers(1, 9))
def test_values_agree_with_sympy(a: Poly, x: int, y: int) -> None:
    values = {symbol(name, "size"): (x if i % 2 else y) for i, name in enumerate(NAMES)}
    exact = to_sympy(a).subs({to_sympy(k): v for k, v in values.items()})
    assert a.at(values) == pytest.approx(float(exact), rel=1e-12, abs=1e-9)  # floats
    assert a.subs(values) == exact


@settings(max_examples=200, deadline=None)
@given(hinged_polys(), others)
def test_symbols_and_has_agree_with_sympy(a: Poly, other: Poly) -> None:
    expr = to_sympy(a)
    assert {to_sympy(s) for s in a.free_symbols} == expr.free_symbols
    for s in [*a.free_symbols, other]:
        assert a.has(s) == expr.has(to_sympy(s))
    assert a.has(sympy.Max) == expr.has(sympy.Max)
    assert a.is_integer == expr.is_integer or expr.is_integer is None


def test_hinges_pickle_whole() -> None:
    """A worker's result reaches the parent with each hinge's argument."""
    n, m = symbol("n", "size"), symbol("m", "size")
    hn, hm = hinge(4 - n), hinge(3 - m)
    assert hn is not None and hm is not None
    value = 8 * m * hn - 16 * hn * hm + 2
    again = pickle.loads(pickle.dumps(value))
    assert again == value and str(again) == str(value)
    assert again.subs({n: 1}) == 24 * m - 48 * hm + 2
    assert again.free_symbols == {n, m}


def test_a_hinge_has_no_degree() -> None:
    """Fast paths that read degrees must not take a hinge for a constant in its symbol."""
    n = symbol("n", "size")
    made = hinge(4 - n)
    assert made is not None
    for question in (lambda: (n * made).degree(), lambda: (n + made).by_power(n)):
        try:
            question()
        except ValueError:
            continue
        raise AssertionError("a hinged polynomial answered a degree")


@settings(max_examples=150, deadline=None)
@given(hinged_polys(), st.lists(st.sampled_from(NAMES), unique=True))
def test_hinges_settle_as_sympys_maxima_do(a: Poly, growing: list[str]) -> None:
    """`past_bends` and `settled_hinges` on the Poly's own hinges, against their sympy
    paths on the `Max` it stands for."""
    sizes = [symbol(name, "size") for name in growing]
    expr = to_sympy(a)
    assert to_sympy(past_bends(a, sizes)) == past_bends(expr, [to_sympy(s) for s in sizes])
    for s in sizes:
        assert to_sympy(settled_hinges(a, s)) == sympy.expand(settled_hinges(expr, to_sympy(s)))


@settings(max_examples=150, deadline=None)
@given(hinged_polys(), st.dictionaries(st.sampled_from(NAMES), st.integers(1, 6)))
def test_text_report_drops_vanishing_hinges_as_with_sympy(a: Poly, sizes: dict[str, int]) -> None:
    assert readable(a, sizes) == readable(to_sympy(a), sizes)


def _sympy_cancelled(a: Poly, b: Poly) -> tuple[sympy.Expr, sympy.Expr]:
    """What `intensity._cancelled` answered through sympy before the Poly paths."""
    top, bottom = to_sympy(a), to_sympy(b)
    symbols = sorted(top.free_symbols | bottom.free_symbols, key=lambda s: s.name)
    if not top.is_Add and not bottom.is_Add:
        return sympy.fraction(top / bottom)  # type: ignore[no-any-return]
    fast = intensity._cancelled_polynomials(top, bottom, symbols)
    return fast if fast is not None else intensity._cancelled_with_poly(top, bottom, symbols)


@settings(max_examples=200, deadline=None)
@given(hinged_polys(), hinged_polys(), hinged_polys())
def test_a_cancelled_ratio_is_sympys(common: Poly, a: Poly, b: Poly) -> None:
    """The ratio's normal form (coprime integer contents, the bottom's sign), with and
    without hinges, against sympy's `cancel` and sparse polynomials."""
    top, bottom = common * a, common * b
    if not top.terms or not bottom.terms or not (top.free_symbols | bottom.free_symbols):
        return
    sizes = list(top.free_symbols | bottom.free_symbols)
    fast = cancelled_hinged(top, bottom, lambda p: intensity._grows_negative_poly(p, sizes))
    if not (top.hinged or bottom.hinged):
        fast = cancelled_sums(top, bottom) if len(top.terms) > 1 < len(bottom.terms) else None
    if fast is None:
        return
    expected = _sympy_cancelled(top, bottom)
    assert (to_sympy(fast[0]), to_sympy(fast[1])) == tuple(sympy.expand(e) for e in expected)


def test_proportional_and_stencil_ratios_cancel_as_sympy_does() -> None:
    """jacobi2d's ratios: FLOPs over streaming bytes (proportional, 1/10), over
    compulsory bytes (two hinges) and over a cache level's bytes (a common m - 2)."""
    m, n = symbol("m", "size"), symbol("n", "size")
    hm, hn = hinge(4 - m), hinge(4 - n)
    assert hm is not None and hn is not None
    flops = 4 * m * n - 8 * m - 8 * n + 16
    cases = [
        (flops, 40 * m * n - 80 * m - 80 * n + 160, cancelled_sums),
        (-flops, 40 * m * n - 80 * m - 80 * n + 160, cancelled_sums),
        (flops, 16 * m * n - 16 * m - 16 * n - 8 * hm * hn, None),
        (flops, 40 * m * n - 8 * m * hn - 64 * m - 80 * n + 16 * hn + 128, None),
    ]
    for top, bottom, fast_path in cases:
        sizes = list(top.free_symbols | bottom.free_symbols)
        if fast_path is None:
            fast = cancelled_hinged(
                top, bottom, lambda p, sizes=sizes: intensity._grows_negative_poly(p, sizes)
            )
        else:
            fast = fast_path(top, bottom)
        assert fast is not None
        expected = _sympy_cancelled(top, bottom)
        assert (to_sympy(fast[0]), to_sympy(fast[1])) == tuple(sympy.expand(e) for e in expected)
    assert str(intensity._cancelled(flops, 40 * m * n - 80 * m - 80 * n + 160)) == "(1, 10)"


def test_layer_condition_and_in_core_shares_answer_as_their_sympy_paths() -> None:
    """cache_model's root of a hinged working set (sympy's `Poly` refuses the `Max`: no
    root) and the in-core ceiling's share of adds (jacobi2d: 3/4 of the FLOPs)."""
    from aiscan.analysis import cache_model
    from aiscan.roofline import in_core

    m, n = symbol("m", "size"), symbol("n", "size")
    hn = hinge(4 - n)
    assert hn is not None
    working_set = 32 * n - 8 * hn - 48
    assert cache_model._root(working_set, 24576.0) is None
    assert cache_model._root(to_sympy(working_set), 24576.0) is None
    adds, flops = 3 * m * n - 6 * m - 6 * n + 12, 4 * m * n - 8 * m - 8 * n + 16
    assert in_core._share(adds, flops, None) == 0.75
    assert in_core._share(to_sympy(adds), to_sympy(flops), None) == 0.75
    assert in_core._share(adds, flops, {"n": 2}) == in_core._share(
        to_sympy(adds), to_sympy(flops), {"n": 2}
    )


@settings(max_examples=150, deadline=None)
@given(hinged_polys(), hinged_polys(), st.dictionaries(st.sampled_from(NAMES), st.integers(1, 6)))
def test_a_hinged_intensity_reads_limits_and_prints_as_sympys(
    a: Poly, b: Poly, sizes: dict[str, int]
) -> None:
    """A cancelled hinged ratio kept as a `Quotient`: its JSON text, its text report and
    its limit as the sizes grow, against the sympy expression `_cancelled` built before."""
    if not a.terms or not b.terms or not (a.hinged or b.hinged):
        return
    free = list(a.free_symbols | b.free_symbols)
    cancelled = cancelled_hinged(a, b, lambda p: intensity._grows_negative_poly(p, free))
    if cancelled is None or not cancelled[0].terms:
        return
    top, bottom = cancelled
    if bottom.is_number or (len(top.terms) < 2 and len(bottom.terms) < 2):
        return
    mine = Quotient(top, bottom)
    theirs = to_sympy(top) / to_sympy(bottom)
    assert str(mine) == str(theirs)
    assert readable(mine, sizes) == readable(theirs, sizes)
    limit = intensity._limit_of_ratio(top, bottom)
    expected = intensity._limit_of_ratio(to_sympy(top), to_sympy(bottom))
    assert (limit is None) == (expected is None)
    if limit is not None:
        assert to_sympy(limit) == expected


def test_a_hinge_is_no_term_of_a_limit() -> None:
    """`m/(m*Max(0, 4 - n) + 1)` grows without bound: the hinge is 0 once n passes 4 (read
    as a coefficient of m, it gave the limit `1/Max(0, 4 - n)`)."""
    m, n = symbol("m", "size"), symbol("n", "size")
    hn = hinge(4 - n)
    assert hn is not None
    limit = intensity._limit_of_ratio(m, m * hn + 1)
    assert str(limit) == "oo"
    assert to_sympy(limit) == intensity._limit_of_ratio(to_sympy(m), to_sympy(m * hn + 1))


def test_probe_values_evaluate_a_hinge_from_its_argument() -> None:
    """`probe_values` set every variable of a Poly to 1 and to 2**20, a hinge's too: it
    raised on the hinge's kind, and a hinge at 2**20 beside n = 2**20 is no value
    `Max(0, 4 - n)` takes. The hinge is now evaluated from its argument."""
    n = size_symbol("n")
    hinged = hinge(constant(4) - n)
    assert hinged is not None
    assert list(probe_values(hinged - 8)) == [-5, -8, -8]
    assert list(probe_values(hinged * n - 8 * n)) == [-5, -8 * 2**20, -8 * 2**20]
    assert not provably_nonnegative(hinged - 8)


def test_probe_values_tell_a_size_from_a_counter() -> None:
    """`m - i` (a trip of PolyBench's covariance) is 0 with every symbol at one value; the
    sizes at 2**20 and the counter at 1 show it positive, so `never_below_zero` need not
    ask sympy (which imported it for every such loop)."""
    m, i = size_symbol("m"), symbol("i", "loop")
    assert list(probe_values(m - i)) == [0, 0, 2**20 - 1]
    assert never_below_zero(m - i) == m - i


def test_a_common_monomial_is_taken_out_before_the_divisor_is_sought() -> None:
    """PolyBench gemm's compulsory ratio over its DRAM bytes: the common factor `ni*nj` is
    in two variables, which left the ratio to sympy; taken out first, the rest is coprime
    and the result is sympy's."""
    ni, nj, nk = (symbol(name, "size") for name in ("ni", "nj", "nk"))
    top, bottom = 3 * ni * nj * nk + ni * nj, 32 * ni * nj * nk + 16 * ni * nj
    fast = cancelled_sums(top, bottom)
    assert fast is not None
    assert (str(fast[0]), str(fast[1])) == ("3*nk + 1", "32*nk + 16")
    expected = _sympy_cancelled(top, bottom)
    assert (to_sympy(fast[0]), to_sympy(fast[1])) == tuple(sympy.expand(e) for e in expected)
