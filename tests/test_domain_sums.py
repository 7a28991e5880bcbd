"""Sums over iteration domains that have no closed form stay exact `Sum`s, and correct.

A strided loop whose bounds depend on outer loops (`k = j; k < i; k += 2` under `j <= i`)
sums `ceiling` terms, which sympy leaves as `Sum`s. Every level of a nest needs its own
summation variable: with one for all, substituting the outer `i = 3*t` into the inner
sum's summand `ceiling((i - t)/2)` captured its `t`, and sympy then summed the wrong
`ceiling(t)`: a closed form, silently wrong (150 iterations instead of 83 at n = 13).
"""

from __future__ import annotations

import pytest
import sympy

from aiscan.ir.symbols import size_symbol
from aiscan.pipeline import PipelineOptions, analyze_text

KERNELS = {
    # the inner trip count depends on i and j: the capture changed the summand
    "dependent": "for (int k = j; k < i; k += 2)",
    # the inner trip count depends on j only: the capture left the value alone
    "start-only": "for (int k = j; k < n; k += 2)",
}


def kernel(inner: str) -> str:
    return (
        "void f(int n, double *restrict a, double *restrict b) {\n"
        "  for (int i = 0; i < n; i += 3)\n    for (int j = 0; j <= i; j++)\n"
        f"      {inner}\n        a[i] += b[k] * 2.0;\n}}\n"
    )


def iterations(name: str, n: int) -> int:
    end = {"dependent": lambda i: i, "start-only": lambda i: n}[name]
    return sum(1 for i in range(0, n, 3) for j in range(i + 1) for _ in range(j, end(i), 2))


def additions(name: str) -> sympy.Expr:
    analysis = analyze_text(kernel(KERNELS[name]), "k.c", PipelineOptions()).analysis
    assert analysis is not None
    return analysis.functions[0].flops.add


def evaluated(expr: sympy.Expr) -> sympy.Expr:
    """Every `Sum` with numeric bounds added up term by term."""

    def add_up(summand: sympy.Expr, limits: list[tuple[sympy.Expr, ...]], at: dict) -> sympy.Expr:
        if not limits:
            return summand.subs(at)
        var, low, high = limits[-1]  # sympy lists the outermost last
        return sum(
            (
                add_up(summand, limits[:-1], {**at, var: v})
                for v in range(low.subs(at), high.subs(at) + 1)
            ),
            sympy.Integer(0),
        )

    return expr.replace(
        lambda e: isinstance(e, sympy.Sum), lambda e: add_up(e.function, list(e.limits), {})
    )


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_each_level_keeps_its_own_summation_variable(name: str) -> None:
    (outer_sum,) = additions(name).atoms(sympy.Sum)
    variables = [limit[0] for limit in outer_sum.limits]
    assert len(set(variables)) == len(variables) == 2
    inner_bound = outer_sum.limits[0][2]
    assert inner_bound.free_symbols == {variables[1]}  # bounded by the outer level's variable


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("n", [1, 2, 4, 7, 10, 13])
def test_a_count_with_no_closed_form_is_exact(name: str, n: int) -> None:
    assert evaluated(additions(name).subs(size_symbol("n"), n)) == iterations(name, n)


def test_a_polynomial_is_no_tile_and_sums_without_sympy(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_sum_over_tiles` looks for a `Min` only where one can be: a Poly has none (issue 33:
    lu, cholesky, syrk, trmm and gramschmidt reached sympy there first)."""
    from aiscan import algebra
    from aiscan.analysis import domain
    from aiscan.ir.symbols import loop_symbol

    class NoSympy:
        def __getattr__(self, name: str) -> object:
            raise AssertionError(f"sympy.{name} asked")

    n, i, j = size_symbol("n"), loop_symbol("i"), loop_symbol("j")
    monkeypatch.setattr(domain, "sympy", NoSympy())
    monkeypatch.setattr(algebra, "to_sympy", NoSympy().__getattr__)
    loop = domain.Bounds("j", algebra.ZERO, 1, n)
    assert domain._sum_over_tiles(2 * i + j, loop) is None
    total = domain.sum_over_loop(2 * i + j, loop, 1)
    assert algebra.expand(total - (2 * n * i + n * (n - 1) / 2)) == 0
