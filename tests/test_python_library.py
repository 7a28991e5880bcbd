"""Library functions against brute force: the textbook algorithms the frontend writes out for
`linalg.solve`, `linalg.inv`, `linalg.cholesky`, `var`, `std` and `cov`, run on real numbers
with every floating-point operation counted, give NumPy's answers and the analyzer's counts."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.cli import main
from aiscan.pipeline import PipelineOptions, lower_source

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "python" / "library.py"


class Counted:
    """A float that counts each operation done on it in `Counted.ops`."""

    ops: ClassVar[Counter[str]] = Counter()

    def __init__(self, value: float) -> None:
        self.value = float(value)

    def _apply(self, other: Counted | float, kind: str, result: float) -> Counted:
        Counted.ops[kind] += 1
        return Counted(result)

    def __add__(self, other: Counted) -> Counted:
        return self._apply(other, "add", self.value + other.value)

    def __sub__(self, other: Counted) -> Counted:
        return self._apply(other, "sub", self.value - other.value)

    def __mul__(self, other: Counted) -> Counted:
        return self._apply(other, "mul", self.value * other.value)

    def __truediv__(self, other: Counted) -> Counted:
        return self._apply(other, "div", self.value / other.value)

    def sqrt(self) -> Counted:
        Counted.ops["special"] += 1
        return Counted(math.sqrt(self.value))


def _matrix(values: np.ndarray) -> list[list[Counted]]:
    return [[Counted(v) for v in row] for row in values]


def _lu_solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Gaussian elimination with partial pivoting, then forward and back substitution."""
    n, k = b.shape
    work, x = _matrix(a), _matrix(b)
    for p in range(n - 1):
        pivot = max(range(p, n), key=lambda r: abs(work[r][p].value))  # compares: free
        work[p], work[pivot] = work[pivot], work[p]
        x[p], x[pivot] = x[pivot], x[p]
        for i in range(p + 1, n):
            work[i][p] = work[i][p] / work[p][p]
            for j in range(p + 1, n):
                work[i][j] = work[i][j] - work[i][p] * work[p][j]
    for c in range(k):
        for i in range(1, n):
            for j in range(i):
                x[i][c] = x[i][c] - work[i][j] * x[j][c]
        for i in reversed(range(n)):
            for j in range(i + 1, n):
                x[i][c] = x[i][c] - work[i][j] * x[j][c]
            x[i][c] = x[i][c] / work[i][i]
    return np.array([[v.value for v in row] for row in x])


def _cholesky(a: np.ndarray) -> np.ndarray:
    n = len(a)
    low = _matrix(a)
    for j in range(n):
        for k in range(j):
            low[j][j] = low[j][j] - low[j][k] * low[j][k]
        low[j][j] = low[j][j].sqrt()
        for i in range(j + 1, n):
            for k in range(j):
                low[i][j] = low[i][j] - low[i][k] * low[j][k]
            low[i][j] = low[i][j] / low[j][j]
    return np.tril(np.array([[v.value for v in row] for row in low]))


def _total(values: list[Counted]) -> Counted:
    """A reduction of n elements: the first, then n - 1 adds."""
    result = values[0]
    for value in values[1:]:
        result = result + value
    return result


def _variance(row: list[float], ddof: int) -> Counted:
    """NumPy's `_var`: mean (sum, divide), subtract, square, sum, divide."""
    values = [Counted(v) for v in row]
    mean = _total(values) / Counted(len(values))
    deviations = [v - mean for v in values]
    squares = [d * d for d in deviations]
    return _total(squares) / Counted(len(values) - ddof)


@pytest.fixture(scope="module")
def functions() -> dict[str, FunctionAnalysis]:
    module = lower_source(FIXTURE.read_text(), str(FIXTURE), PipelineOptions())
    analysis = analyze_module(module, AnalysisOptions())
    return {f.function.name: f for f in analysis.functions}


def _at(expression: sympy.Expr, **sizes: int) -> sympy.Expr:
    return expression.subs({s: sizes[s.name] for s in expression.free_symbols})


def _counted() -> int:
    return sum(v for k, v in Counted.ops.items() if k != "special")


def _random(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, n)) + n * np.eye(n)


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("k", [1, 3])
def test_solve_counts_gaussian_elimination(
    functions: dict[str, FunctionAnalysis], n: int, k: int
) -> None:
    a = _random(n, n)
    b = np.random.default_rng(k).standard_normal((n, k))
    Counted.ops = Counter()
    x = _lu_solve(a, b)
    assert np.allclose(x, np.linalg.solve(a, b))
    name, sizes = ("solve", {"n": n}) if k == 1 else ("solve_many", {"n": n, "k": k})
    assert _at(functions[name].flops.total, **sizes) == _counted()


@pytest.mark.parametrize("n", range(1, 7))
def test_inverse_is_a_solve_against_the_identity(
    functions: dict[str, FunctionAnalysis], n: int
) -> None:
    a = _random(n, 2 * n)
    Counted.ops = Counter()
    x = _lu_solve(a, np.eye(n))
    assert np.allclose(x, np.linalg.inv(a))
    assert _at(functions["inverse"].flops.total, n=n) == _counted()


@pytest.mark.parametrize("n", range(1, 7))
def test_cholesky_counts_the_column_algorithm(
    functions: dict[str, FunctionAnalysis], n: int
) -> None:
    root = _random(n, 3 * n)
    a = root @ root.T
    Counted.ops = Counter()
    low = _cholesky(a)
    assert np.allclose(low, np.linalg.cholesky(a))
    flops = functions["cholesky"].flops
    assert _at(flops.total, n=n) == _counted()
    assert _at(flops.special, n=n) == Counted.ops["special"] == n


@pytest.mark.parametrize(("m", "n"), [(1, 2), (3, 4), (5, 2)])
def test_variance_and_covariance_count_numpys_steps(
    functions: dict[str, FunctionAnalysis], m: int, n: int
) -> None:
    data = np.random.default_rng(m * n).standard_normal((m, n))
    Counted.ops = Counter()
    variances = [_variance(list(row), ddof=1).value for row in data]
    assert np.allclose(variances, np.var(data, axis=1, ddof=1))
    assert _at(functions["sample_variance"].flops.total, m=m, n=n) == _counted()
    # cov: center the rows once (mean, subtract), X @ X.T, one reciprocal, p*p multiplies.
    Counted.ops = Counter()
    rows = [[Counted(v) for v in row] for row in data]
    means = [_total(row) / Counted(n) for row in rows]
    centered = [[v - mu for v in row] for row, mu in zip(rows, means, strict=True)]
    scale = Counted(1.0) / Counted(n - 1)
    product = [
        [_total([x * y for x, y in zip(a, b, strict=True)]) * scale for b in centered]
        for a in centered
    ]
    assert np.allclose([[v.value for v in row] for row in product], np.cov(data))
    assert _at(functions["covariance"].flops.total, p=m, n=n) == _counted()


def test_conventions_reach_the_json_and_text_reports(capsys: pytest.CaptureFixture[str]) -> None:
    main(["analyze", str(FIXTURE), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    by_name = {f["name"]: f for f in report["files"][0]["functions"]}
    quoted = {
        name: text
        for nest in by_name["solve_many"]["nests"]
        for name, text in nest["flop_conventions"].items()
    }
    assert quoted == {"linalg.solve (LU)": "2*k*n**2 + 2*n**3/3"}
    notes = [u for u in by_name["cholesky"]["unknowns"] if u["kind"] == "assumption"]
    assert len(notes) == 1 and "a convention" in notes[0]["message"]
    main(["analyze", str(FIXTURE)])
    assert "n**3/3   (linalg.cholesky convention)" in capsys.readouterr().out
