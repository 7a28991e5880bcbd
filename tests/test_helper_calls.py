"""Calls to helpers with loops or branches (`frontends/python/summaries.py`): the caller's
counts against the operations of the algorithm counted one by one at concrete sizes."""

from __future__ import annotations

import random
from pathlib import Path

import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.pipeline import PipelineOptions, lower_source

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "python" / "helper_calls.py"


def _functions(text: str | None = None) -> dict[str, FunctionAnalysis]:
    source = FIXTURE.read_text() if text is None else text
    module = lower_source(source, str(FIXTURE), PipelineOptions())
    return {f.function.name: f for f in analyze_module(module, AnalysisOptions()).functions}


def _at(expression: sympy.Expr, **sizes: float) -> sympy.Expr:
    return sympy.nsimplify(
        expression.subs({s: sizes[s.name] for s in expression.free_symbols if s.name in sizes})
    )


def _conv_operations(size: int, channels: int, k: int, filters: int) -> int:
    """Valid cross-correlation plus a bias, by definition: each output element is a sum of
    k*k*channels products (k*k*channels multiplies, one add fewer), then one bias add."""
    operations = 0
    out = size - k + 1
    for _ in range(out):
        for _ in range(out):
            for _ in range(filters):
                products = 0
                for _ in range(k):
                    for _ in range(k):
                        for _ in range(channels):
                            products += 1
                operations += products + (products - 1) + 1
    return operations


def test_conv_pool_chain_brute_force() -> None:
    """conv2d -> relu -> maxpool2d -> conv2d -> relu, the second conv on the pooled map."""
    flops = _functions()["features"].flops.total
    for s, c, k, f, g in ((6, 1, 3, 1, 1), (12, 3, 3, 4, 5), (9, 2, 2, 3, 2), (28, 1, 5, 6, 16)):
        first = _conv_operations(s, c, k, f)
        pooled = (s - k + 1) // 2  # maxpool2d: comparisons only, no FLOPs
        second = _conv_operations(pooled, f, k, g)
        got = _at(flops, s=s, c=c, k=k, f=f, g=g)
        assert got == first + second, (s, c, k, f, g, got, first + second)


def test_call_is_the_helpers_summary_instantiated() -> None:
    """The caller's FLOPs are the helper's own, with its sizes replaced by the caller's; so
    is the compulsory traffic of each call, a region of its own at the top level."""
    functions = _functions()
    features = functions["features"]
    names = {s.name: s for s in features.flops.total.free_symbols}
    s, c, k, f, g = (names[x] for x in "sckfg")
    pooled = sympy.floor((s - k + 1) / 2)

    def instance(what: sympy.Expr, **given: sympy.Expr) -> sympy.Expr:
        symbols = {x.name: x for x in what.free_symbols}
        return what.xreplace({symbols[n]: v for n, v in given.items() if n in symbols})

    conv = functions["conv2d"].flops.total
    expected = (
        instance(conv, h=s, w=s, c=c, k=k, f=f)
        + f * (s - k + 1) ** 2  # + b1
        + instance(conv, h=pooled, w=pooled, c=f, k=k, f=g)
        + g * (pooled - k + 1) ** 2  # + b2
    )
    assert sympy.expand(features.flops.total - expected) == 0
    bytes_of = {r.region.span.line: r.traffic["compulsory"].total(False) for r in features.regions}
    first_call = features.regions[0]
    assert first_call.region.span.line == 40
    own = functions["conv2d"].traffic["compulsory"].total(False)
    assert (
        sympy.expand(
            first_call.traffic["compulsory"].total(False) - instance(own, h=s, w=s, c=c, k=k, f=f)
        )
        == 0
    )
    assert 41 in bytes_of
    pool = functions["maxpool2d"].traffic["compulsory"].total(False)
    width = s - k + 1
    assert sympy.expand(bytes_of[41] - instance(pool, h=width, w=width, c=f)) == 0


def test_branching_scalar_helper_in_loops_brute_force() -> None:
    """`gap` takes its `then` side on a fraction p_L46 of the calls: with p set to the fraction
    observed on random data, the count equals the operations done call by call."""
    total = _functions()["pair_gaps"].flops.total
    rng = random.Random(15)
    for n in (1, 2, 5, 9):
        seq = [rng.random() for _ in range(n)]
        operations = calls = taken = 0
        for i in range(n):
            for j in range(i + 1, n):
                calls += 1
                if seq[i] > seq[j]:
                    taken += 1
                    operations += 1  # p - q
                else:
                    operations += 2  # 2.0 * (q - p)
                operations += 1  # score[i, j] + gap(...)
        fraction = sympy.Rational(taken, calls) if calls else 0
        assert _at(total, n=n, p_L46=fraction) == operations, n


def test_in_place_helper_on_row_views_brute_force() -> None:
    total = _functions()["smooth_rows"].flops.total
    for r, q, times in ((1, 3, 1), (3, 7, 2), (4, 10, 5)):
        operations = 0
        for _ in range(r):
            for _ in range(times):
                for _ in range(1, q - 1):
                    operations += 2  # one add, one multiply per interior element
        assert _at(total, r=r, q=q, times=times) == operations


def test_caller_dtype_specializes_the_helper() -> None:
    """An un-annotated helper called with float32 arrays moves 4-byte elements at that call
    (its own report keeps the float64 default)."""
    text = (
        "import numpy as np\nfrom jaxtyping import Float32\n\n\n"
        "def scale(a):\n    for i in range(a.shape[0]):\n        a[i] = 2.0 * a[i]\n\n\n"
        "def caller(x: Float32[np.ndarray, 'n']):\n    scale(x)\n"
    )
    functions = _functions(text)
    n = next(iter(functions["caller"].flops.total.free_symbols))
    assert functions["caller"].flops.total == n
    assert functions["caller"].traffic["compulsory"].total(False) == 8 * n
    a = next(iter(functions["scale"].flops.total.free_symbols))
    assert functions["scale"].traffic["compulsory"].total(False) == 16 * a


def test_a_call_that_cannot_be_matched_is_a_located_unknown() -> None:
    text = (
        "import numpy as np\nfrom jaxtyping import Float64\n\n\n"
        "def total(a):\n    s = 0.0\n    for i in range(a.shape[0]):\n"
        "        for j in range(a.shape[1]):\n            s += a[i, j]\n    return s\n\n\n"
        "def caller(x: Float64[np.ndarray, 'n']):\n    return total(x)\n"
    )
    caller = _functions(text)["caller"]
    assert caller.flops.total == 0
    [unknown] = caller.unknowns
    assert (unknown.kind.value, unknown.span.line) == ("unknown-shape", 14)
    assert "`total` takes `a` of shape (a_d0, a_d1)" in unknown.message
