"""The exact counts' interpolation on coefficients equals multiplying out Lagrange terms."""

from __future__ import annotations

from itertools import product

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.analysis.polyhedral import interpolate
from aiscan.ir.symbols import size_symbol

SIZES = [size_symbol(name) for name in ("n", "m", "k")]


def _by_terms(sizes: list[sympy.Symbol], values: dict[tuple[int, ...], int]) -> sympy.Expr:
    """Tensor Lagrange interpolation written out term by term, in sympy (the reference)."""
    nodes = [sorted({p[k] for p in values}) for k in range(len(sizes))]
    total = sympy.Integer(0)
    for point, value in values.items():
        term: sympy.Expr = sympy.Integer(value)
        for k, size in enumerate(sizes):
            for other in nodes[k]:
                if other != point[k]:
                    term *= (size - other) / sympy.Integer(point[k] - other)
        total += term
    return sympy.expand(total)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_interpolation_matches_multiplying_out(data: st.DataObject) -> None:
    dims = data.draw(st.integers(1, 3))
    degrees = [data.draw(st.integers(0, 3)) for _ in range(dims)]
    starts = [data.draw(st.integers(0, 20)) for _ in range(dims)]
    grid = product(*(range(s, s + 2 * d + 1, 2) for s, d in zip(starts, degrees, strict=True)))
    values = {point: data.draw(st.integers(-50, 50)) for point in grid}
    sizes = SIZES[:dims]
    found = interpolate(sizes, values)
    assert found == _by_terms(sizes, values)
    assert str(found) == str(_by_terms(sizes, values))  # the same printed form
    for point, value in values.items():
        assert found.subs(dict(zip(sizes, point, strict=True))) == value


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-20, 60), min_size=1, max_size=6, unique=True), st.data())
def test_a_working_set_in_a_loop_variable_is_the_multiplied_out_polynomial(
    points: list[int], data: st.DataObject
) -> None:
    """The cache model's exact unions over one enclosing loop (`working_sets`) interpolate
    its counts on coefficients: the same polynomial, in the same canonical form."""
    from aiscan.algebra import to_sympy
    from aiscan.analysis.working_sets import _interpolated
    from aiscan.ir.symbols import loop_symbol

    var = loop_symbol("i")
    samples = [(x, data.draw(st.integers(0, 10**6))) for x in points]
    found = _interpolated(var, samples)
    expected = _by_terms([to_sympy(var)], {(x,): y for x, y in samples})
    assert sympy.srepr(to_sympy(found)) == sympy.srepr(expected)
