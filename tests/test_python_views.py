"""Views, control constructs, masks and shape errors of the Python frontend (issue 15),
checked against brute force and against NumPy's own definitions of the views."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from polynomial_strategies import SYMBOLS

from aiscan.analysis.kernel import FunctionAnalysis, analyze_module
from aiscan.errors import Severity
from aiscan.frontends.python import dtypes, views
from aiscan.frontends.python.values import Leaf, coordinate
from aiscan.frontends.python.views import flipped, permuted, reshaped, resolve_shape
from aiscan.ir.symbols import size_symbol
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.span import Span

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "python"
_F64 = dtypes.FLOAT64


def _analyze(text: str, name: str = "inline.py") -> dict[str, FunctionAnalysis]:
    module = lower_source(text, name, PipelineOptions())
    return {f.function.name: f for f in analyze_module(module).functions}


def _fixture(stem: str) -> dict[str, FunctionAnalysis]:
    path = FIXTURES / f"{stem}.py"
    return _analyze(path.read_text(), str(path))


def _at(expression: sympy.Expr, **sizes: int) -> sympy.Expr:
    return expression.subs({s: sizes[s.name] for s in expression.free_symbols if s.name in sizes})


# ---- views against NumPy's definitions ---------------------------------------------------


def _whole(shape: tuple[int, ...]) -> Leaf:
    extents = tuple(sympy.Integer(e) for e in shape)
    index = tuple(coordinate(d) for d in range(len(shape)))
    return Leaf("a", _F64, extents, index, "a", Span("t.py", 1, 1))


def _element(leaf: Leaf, point: tuple[int, ...]) -> tuple[int, ...]:
    bindings = {coordinate(d): c for d, c in enumerate(point)}
    return tuple(int(e.subs(bindings)) for e in leaf.index)


def _c_order(shape: tuple[int, ...], linear: int) -> tuple[int, ...]:
    out = []
    for extent in reversed(shape):
        out.append(linear % extent)
        linear //= extent
    return tuple(reversed(out))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ((12,), (3, 4)),
        ((3, 4), (12,)),
        ((2, 3, 4), (6, 4)),
        ((2, 3, 4), (2, 12)),
        ((6, 4), (2, 3, 4)),
        ((3, 4), (3, 1, 4)),
        ((3, 1, 4), (12,)),
        ((4, 6), (2, 12)),
    ],
)
def test_reshape_names_the_elements_numpy_does(old: tuple[int, ...], new: tuple[int, ...]) -> None:
    view = reshaped(_whole(old), tuple(sympy.Integer(e) for e in new))
    assert not isinstance(view, str)
    for linear, point in enumerate(itertools.product(*(range(e) for e in new))):
        assert _element(view, point) == _c_order(old, linear), (old, new, point)


def test_transpose_and_flip_name_the_elements_numpy_does() -> None:
    base = _whole((2, 3, 4))
    view = permuted(base, (1, 0, 2))
    assert view.shape == (3, 2, 4)
    for point in itertools.product(range(3), range(2), range(4)):
        assert _element(view, point) == (point[1], point[0], point[2])
    flip = flipped(base, (0, 2))
    for point in itertools.product(range(2), range(3), range(4)):
        assert _element(flip, point) == (1 - point[0], point[1], 3 - point[2])


def test_reshape_with_minus_one_solves_the_extent_or_says_why() -> None:
    n, m = size_symbol("n"), size_symbol("m")
    assert resolve_shape((m * n,), (m, sympy.Integer(-1))) == (m, n)
    assert isinstance(resolve_shape((n,), (sympy.Integer(2), sympy.Integer(-1))), str)
    assert isinstance(resolve_shape((n,), (sympy.Integer(-1), sympy.Integer(-1))), str)


def test_views_that_cannot_be_read_are_located_unknowns() -> None:
    text = (
        "import numpy as np\nfrom jaxtyping import Float64\n\n\n"
        'def f(x: Float64[np.ndarray, "n"], A: Float64[np.ndarray, "n m"]):\n'
        "    a = x.reshape(2, -1) * 2.0\n"
        '    b = A.reshape(-1, order="F") * 2.0\n'
        "    return a, b\n"
    )
    unknowns = _analyze(text)["f"].unknowns
    found = sorted((u.kind.value, u.span.line) for u in unknowns)
    assert ("unsupported", 6) in found and ("unsupported", 7) in found


# ---- min/max in range bounds against brute force ------------------------------------------


def _brute(kind: str, n: int) -> int:
    if kind == "blocked_sum":
        return sum(1 for i in range(0, n, 8) for _ in range(i, min(i + 8, n)))
    if kind == "neighbor_sum":
        return sum(1 for i in range(n) for _ in range(max(0, i - 1), min(i + 2, n)))
    if kind == "clamped_window":
        return sum(1 for i in range(n) for _ in range(max(0, i - 1), i + 1))
    return sum(1 for i in range(n) for _ in range(max(i - 2, 0, i - 5), n))


_BOUNDED = """
import numpy as np
from jaxtyping import Float64


def blocked_sum(x: Float64[np.ndarray, "n"], n: int):
    s = 0.0
    for i in range(0, n, 8):
        for j in range(i, min(i + 8, n)):
            s += x[j]
    return s


def neighbor_sum(x: Float64[np.ndarray, "n"], y: Float64[np.ndarray, "n"], n: int):
    for i in range(n):
        for j in range(max(0, i - 1), min(i + 2, n)):
            y[i] += x[j]


def band(A: Float64[np.ndarray, "n n"], n: int):
    for i in range(n):
        for j in range(max(i - 2, 0, i - 5), n):
            A[i, j] = 2.0 * A[i, j]


def clamped_window(x: Float64[np.ndarray, "n"], y: Float64[np.ndarray, "n"], n: int):
    for i in range(n):
        for j in range(max(0, i - 1), i + 1):
            y[i] = y[i] + x[j]
"""


@pytest.mark.parametrize("name", ["blocked_sum", "neighbor_sum", "band", "clamped_window"])
def test_min_max_bounds_count_what_the_loops_run(name: str) -> None:
    """Exact at every size where the loops run (a branch of the alternatives that is never
    taken at n = 1 runs 0 times there)."""
    total = _analyze(_BOUNDED)[name].flops.total
    for n in range(1, 30):
        assert _at(total, n=n) == _brute(name, n), f"{name} at n = {n}"


def test_choices_of_a_bound_partition_its_values() -> None:
    from aiscan.frontends.python.bounds import _choices

    i, n = sympy.Symbol("i", integer=True), size_symbol("n")
    for smallest in (True, False):
        choices = _choices([i + 2, n, i - 3], smallest)
        for i_value, n_value in itertools.product(range(-3, 9), range(1, 9)):
            subs = {i: i_value, n: n_value}
            taken = [v for v, conditions in choices if all(c.subs(subs) for c in conditions)]
            pick = (min if smallest else max)(i_value + 2, n_value, i_value - 3)
            assert [int(v.subs(subs)) for v in taken] == [pick]


# ---- ternary, slices, constants, division --------------------------------------------------


def test_ternary_on_an_array_condition_is_not_guessed() -> None:
    text = (
        "import numpy as np\nfrom jaxtyping import Float64\n\n\n"
        'def f(x: Float64[np.ndarray, "n"]):\n'
        "    y = x * 2.0 if x > 0 else x\n"
        "    return y\n"
    )
    kinds = {(u.kind.value, u.span.line) for u in _analyze(text)["f"].unknowns}
    assert ("unsupported", 6) in kinds


def test_ternary_eager_view_is_each_sides_calls_weighted_by_its_share() -> None:
    """`y = a if c else b`: at the fraction 1 the eager view is `y = a`'s calls alone, at 0
    `y = b`'s (each analyzed on its own), and in between the mix FLOPs use."""
    header = "import numpy as np\nfrom jaxtyping import Float64\n\n\n"
    signature = 'def f(x: Float64[np.ndarray, "n"], y: Float64[np.ndarray, "n"], k: int):\n'
    ternary = _analyze(
        header + signature + "    z = x * y + 1.0 if k > 0 else np.exp(x) * 2.0\n    return z\n"
    )["f"]
    then = _analyze(header + signature + "    z = x * y + 1.0\n    return z\n")["f"]
    otherwise = _analyze(header + signature + "    z = np.exp(x) * 2.0\n    return z\n")["f"]
    (p,) = (s for s in ternary.traffic["eager"].total(False).free_symbols if s.name == "p_L6")
    eager = ternary.traffic["eager"].total(False)
    assert sympy.expand(eager.subs(p, 1) - then.traffic["eager"].total(False)) == 0
    assert sympy.expand(eager.subs(p, 0) - otherwise.traffic["eager"].total(False)) == 0
    assert then.traffic["eager"].total(False) != otherwise.traffic["eager"].total(False)
    temporaries = [t.expression for r in ternary.regions for t in r.region.temporaries]
    assert temporaries == ["x * y", "np.exp(x)"]


def test_slice_objects_with_steps_and_open_ends() -> None:
    text = (
        "import numpy as np\nfrom jaxtyping import Float64\n\n\n"
        'def f(x: Float64[np.ndarray, "n"], y: Float64[np.ndarray, "n"]):\n'
        "    evens = slice(None, None, 2)\n"
        "    head = slice(4)\n"
        "    y[evens] = x[evens] * 2.0\n"
        "    y[head] = y[head] + 1.0\n"
    )
    result = _analyze(text)["f"]
    assert sympy.simplify(result.flops.total - (sympy.ceiling(size_symbol("n") / 2) + 4)) == 0


def test_module_constants_take_their_last_kind() -> None:
    text = (
        "import numpy as np\nfrom jaxtyping import Float64\n\n"
        "alpha = 2\nalpha = 0.5\nN = 1.5\nN = 8\n\n\n"
        'def f(x: Float64[np.ndarray, "N"]):\n'
        "    return alpha * x\n"
    )
    module = lower_source(text, "inline.py", PipelineOptions())
    assert dict(module.size_defaults) == {"N": 8}
    assert _analyze(text)["f"].flops.total == size_symbol("N")


def test_division_of_python_integers_is_a_float_division() -> None:
    text = "def f(x, n: int):\n    for i in range(n):\n        x[i] = i / 2 + i // 2 + 1 / 2\n"
    flops = _analyze(text)["f"].flops
    n = size_symbol("n")
    assert flops.div == n and flops.total == 3 * n  # i / 2, two adds; i // 2, 1 / 2 free


# ---- shapes NumPy rejects ------------------------------------------------------------------


def test_literal_shape_mismatches_are_located_errors() -> None:
    path = FIXTURES / "mismatch.py"
    module = lower_source(path.read_text(), str(path), PipelineOptions())
    errors = [d for d in module.diagnostics if d.severity is Severity.ERROR]
    assert [(d.span.line, d.span.column) for d in errors] == [(12, 5), (16, 12)]
    assert all(f"{path}:{d.span.line}:{d.span.column}: error: " in d.format() for d in errors)


def test_symbols_that_may_be_equal_are_never_errors() -> None:
    text = (
        "import numpy as np\nfrom jaxtyping import Float64\n\n\n"
        'def f(A: Float64[np.ndarray, "n m"], B: Float64[np.ndarray, "k k"]):\n'
        "    A[:, :] = B\n"
        "    A[0:2, 0:3] = B[0:2, 0:3]\n"
    )
    module = lower_source(text, "inline.py", PipelineOptions())
    assert not [d for d in module.diagnostics if d.severity is Severity.ERROR]
    kinds = [u.kind.value for u in _analyze(text)["f"].unknowns]
    assert kinds == ["assumption", "assumption"]


def _while_passes(start: int, stop: int, step: int, inclusive: bool) -> int:
    """How many times a `while i < stop` (or `<=`) loop from `start` by `step` runs."""
    passes, i = 0, start
    while (i <= stop) if inclusive else (i < stop):
        passes, i = passes + 1, i + step
    return passes


@pytest.mark.parametrize(
    ("name", "start", "step", "inclusive", "stop_of_n", "flops_per_pass"),
    [
        ("while_counted", 0, 1, False, lambda n: n, 1),
        ("while_stepped", 1, 2, True, lambda n: n - 2, 2),
    ],
)
def test_counted_while_loops_match_running_them(
    name: str,
    start: int,
    step: int,
    inclusive: bool,
    stop_of_n: Callable[[int], int],
    flops_per_pass: int,
) -> None:
    """`i = a; while i < b: ...; i += s` counts as `range(a, b, s)`, at every size where the
    loop runs."""
    total = _fixture("control")[name].flops.total
    for n in range(1, 16):
        passes = _while_passes(start, stop_of_n(n), step, inclusive)
        if passes:
            assert _at(total, n=n) == flops_per_pass * passes, f"{name} at n = {n}"


def test_reshape_products_are_compared_as_rational_functions() -> None:
    """`_identically_zero` is `simplify(...) == 0`, without `simplify` for rational
    functions of the sizes and for differences that are not 0 at some sizes."""
    import sympy

    from aiscan.frontends.python.views import _identically_zero

    b, t, c, h = sympy.symbols("B T C n_head", positive=True, integer=True)
    cases = [
        c / h * h * b * t - b * t * c,  # the view's floor dropped: equal
        c / h * b * t - b * t * c,  # a head missing: not equal
        (c + h) / (h * (c + h)) - 1 / h,  # equal once cancelled
        (c + h) ** 2 - c**2 - 2 * c * h - h**2,
        sympy.Min(c, h) * b - sympy.Min(h, c) * b,  # not rational: `simplify`'s
        sympy.Min(c, h) - c,
        b * t * c - b * h * t * sympy.floor(c / h),  # a view of a view: not an identity
        sympy.floor(c / h) * h - sympy.floor(c / h) * h,
    ]
    answers = [_identically_zero(d) for d in cases]
    assert answers == [True, False, True, True, True, False, False, True]
    assert answers == [sympy.simplify(d) == 0 for d in cases]


_EXTENT_FACTORS = st.sampled_from(
    [
        *SYMBOLS,
        sympy.floor(SYMBOLS[0] / 2),
        sympy.Mod(SYMBOLS[1], SYMBOLS[2]),
        SYMBOLS[0] + 1,  # a sum: `cancel` is asked
        sympy.sqrt(SYMBOLS[1]),  # a power that is not an integer one: `cancel` is asked
    ]
)
_EXTENTS = st.builds(
    lambda coefficient, factors: (
        sympy.Rational(coefficient.numerator, coefficient.denominator)
        * sympy.Mul(*(f**p for f, p in factors))
    ),
    st.fractions(min_value=1, max_value=64, max_denominator=8),
    st.lists(st.tuples(_EXTENT_FACTORS, st.integers(-2, 3)), max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(_EXTENTS, _EXTENTS)
def test_lowest_terms_is_cancel(numerator: sympy.Expr, denominator: sympy.Expr) -> None:
    """Extents' quotients skip `sympy.cancel` where they are monomials: the same
    expression, structurally (the reshape's axis groups read its numerator and
    denominator)."""
    assert views._lowest_terms(numerator, denominator) == sympy.cancel(numerator / denominator)
