"""Grids, histograms and in-place reshapes (issue 28, construct 6), and the loop of
NPBench's `mandelbrot2`: the forms aiscan does not model are located notes that leave the
rest of the function counted, never a guess (`fixtures/python/grids.py` holds the forms it
counts, with their values)."""

from __future__ import annotations

import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.pipeline import PipelineOptions, lower_source


def _analyze(source: str) -> FunctionAnalysis:
    module = lower_source(source, "kernel.py", PipelineOptions())
    (function,) = analyze_module(module, AnalysisOptions()).functions
    return function


def _notes(function: FunctionAnalysis) -> list[tuple[str, int, str]]:
    return [
        (u.kind.value, u.span.line, u.message)
        for u in function.unknowns
        if u.kind.value != "assumption"
    ]


def test_a_float_grid_is_a_located_note_and_the_rest_is_counted() -> None:
    function = _analyze(
        "import numpy as np\n"
        "def f(a, n):\n"
        "    X, Y = np.mgrid[0:1:5j, 0:1:5j]\n"
        "    return a[:n] * 2.0\n"
    )
    notes = _notes(function)
    assert notes[0][:2] == ("unsupported", 3)
    assert "only integer ranges" in notes[0][2]
    n = sympy.Symbol("n", integer=True, positive=True)
    assert sympy.simplify(function.flops.total - n) == 0


def test_histogram_with_a_range_is_not_guessed() -> None:
    function = _analyze(
        "import numpy as np\n"
        "def f(x, bins):\n"
        "    return np.histogram(x, bins, range=(0.0, 1.0))[0]\n"
    )
    assert function.flops.total == 0
    kind, line, message = _notes(function)[0]
    assert (kind, line) == ("unsupported", 3)
    assert "with a bin count" in message


def test_a_rebound_grid_name_is_no_longer_a_known_index() -> None:
    """`I = I + 1` makes `I` a computed array: `a[I]` is then an integer-array gather
    that is not modeled, said at its line (not read as the grid's affine view)."""
    function = _analyze(
        "import numpy as np\n"
        "def f(a, n, m):\n"
        "    I, J = np.mgrid[0:n, 0:m]\n"
        "    I = I + 1\n"
        "    return a[I] * 2.0\n"
    )
    assert any(line == 5 for _, line, _ in _notes(function))


def test_chained_shape_assignment_reshapes_every_name() -> None:
    function = _analyze(
        "import numpy as np\n"
        "def f(n, m):\n"
        "    a = np.ones((n, m))\n"
        "    b = np.ones((n, m))\n"
        "    a.shape = b.shape = (m, n)\n"
        "    return a.T @ b\n"
    )
    assert _notes(function) == []
    n, m = (sympy.Symbol(s, integer=True, positive=True) for s in "nm")
    assert sympy.simplify(function.flops.total - n * n * (2 * m - 1)) == 0


def test_a_ufunc_output_given_positionally_is_not_an_operand() -> None:
    """`np.multiply(z, z, w)` writes `z * z` into `w`: one multiply an element (it was read
    as a three-operand product, two), `z` read and `w` written, no temporary."""
    function = _analyze(
        "import numpy as np\n"
        "def f(n):\n"
        "    z = np.ones(n)\n"
        "    w = np.empty(n)\n"
        "    np.multiply(z, z, w)\n"
    )
    assert _notes(function) == []
    n = sympy.Symbol("n", integer=True, positive=True)
    assert sympy.simplify(function.flops.total - n) == 0
    assert sympy.simplify(function.traffic["eager"].total(False) - 24 * n) == 0


def test_an_array_that_shrinks_in_its_loop_is_said() -> None:
    """`z = z[z < 2.0]` in a loop: the body is counted once, at `z`'s shape on entry; the
    loop says so at its line."""
    function = _analyze(
        "import numpy as np\n"
        "def f(z, steps):\n"
        "    for i in range(steps):\n"
        "        z = z * z\n"
        "        z = z[z < 2.0]\n"
    )
    notes = [(line, message) for _, line, message in _notes(function)]
    assert any(line == 3 and "`z` changes shape in the loop" in m for line, m in notes)
