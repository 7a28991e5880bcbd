"""aiscan against a counting run of the same code (issue 28).

`scripts/count_numpy.py fixture` ran each function of `fixtures/python/benchmark_idioms.py`
with duck arrays that tally every NumPy call by MODEL.md's conventions (FLOPs, specials,
and the eager bytes each call reads and writes) and stored the figures with the sizes it
ran at in `tests/data/benchmark_idioms_counts.json`. Here aiscan's symbolic figures for
the same functions, evaluated at those sizes, must equal them: the test reads the stored
run and never executes the analyzed code.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.pipeline import PipelineOptions, lower_source

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "python" / "benchmark_idioms.py"
RUNS = json.loads((ROOT / "tests" / "data" / "benchmark_idioms_counts.json").read_text())
# Element loops have no eager view in aiscan (no NumPy call on arrays): FLOPs only there.
WITHOUT_EAGER = {"pair_scores"}


@pytest.fixture(scope="module")
def analyzed() -> dict[str, FunctionAnalysis]:
    module = lower_source(FIXTURE.read_text(), str(FIXTURE), PipelineOptions())
    return {f.function.name: f for f in analyze_module(module, AnalysisOptions()).functions}


def _at(expression: sympy.Expr, sizes: dict[str, int]) -> int:
    value = expression.subs({s: sizes[s.name] for s in expression.free_symbols})
    assert not value.free_symbols, f"{expression}: {value.free_symbols} not bound"
    return int(value)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_figures_equal_the_counting_run(name: str, analyzed: dict[str, FunctionAnalysis]) -> None:
    run = RUNS[name]
    assert not run["uncounted"], f"the run missed calls: {run['uncounted']}"
    result = analyzed[name]
    sizes = run["sizes"]
    assert _at(result.flops.total, sizes) == run["flops"]
    assert _at(result.flops.special, sizes) == run["special"]
    if name not in WITHOUT_EAGER:
        assert _at(result.traffic["eager"].total(False), sizes) == run["eager"]


def test_the_run_covers_every_function_of_the_fixture() -> None:
    defined = {
        line.split("(")[0].removeprefix("def ")
        for line in FIXTURE.read_text().splitlines()
        if line.startswith("def ")
    }
    assert defined - set(RUNS) == {"rectify"}  # called by `shifted`, not run on its own


def test_the_stored_npbench_run_is_whole() -> None:
    """`count_numpy.py measure` stored every NPBench NumPy kernel, each run to its end; the
    only calls it could not count are the bytes of LAPACK drivers (their FLOPs are counted
    by the textbook conventions docs/python.md lists)."""
    runs = json.loads((ROOT / "tests" / "data" / "npbench_counts.json").read_text())
    assert len(runs) == 54
    assert not [name for name, run in runs.items() if "error" in run]
    missed = {call for run in runs.values() for call in run["uncounted"]}
    assert missed <= {"linalg.cholesky bytes", "linalg.solve bytes", "histogram bytes"}
    assert runs["gemm"]["flops"] == 1000 * 1100 * (2 * 1200 - 1) + 1000 * 1200 + 1000 * 1100 * 2


def _count_numpy() -> Any:
    spec = importlib.util.spec_from_file_location(
        "count_numpy", ROOT / "scripts" / "count_numpy.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_mask_fraction_is_compared_at_what_the_run_measured() -> None:
    """NPBench's azimint_naive, written as `binned_means` in `fixtures/python/gathers.py`:
    the run recorded how many elements the mask selected on line 21 over all bins; the
    fraction aiscan names there (p_L20) at that value gives the run's FLOPs exactly."""
    run = json.loads((ROOT / "tests" / "data" / "npbench_counts.json").read_text())
    run = run["azimint_naive"]
    assert run["selected"] == {"21": [39999, 4000000]}
    message = "boolean mask `mask_r12`: the fraction of elements it selects is named p_L20"
    unknowns = [{"kind": "branch-fraction", "message": message, "line": 21, "symbol": "p_L20"}]
    values = _count_numpy()._measured_values(run, unknowns)
    assert values == {"p_L20": sympy.Rational(39999, 4000000)}
    fixture = ROOT / "fixtures" / "python" / "gathers.py"
    module = lower_source(fixture.read_text(), str(fixture), PipelineOptions())
    (binned,) = [
        f
        for f in analyze_module(module, AnalysisOptions()).functions
        if f.function.name == "binned_means"
    ]
    sizes = {"data_d0": 40000, "npt": 100, "p_L14": values["p_L20"]}
    flops = binned.flops.total.subs({s: sizes[s.name] for s in binned.flops.total.free_symbols})
    assert flops == run["flops"] == 40399


def test_a_while_loops_trip_is_taken_from_the_statements_the_run_executed(tmp_path: Path) -> None:
    """The run counts each statement's executions: a `while` header runs once per test,
    its body's first statement once per pass, so trip_L<line> is passes per entry, and an
    `if`'s p_L<line> the share of its tests taken (NPBench's channel_flow: 982 passes)."""
    kernel = tmp_path / "k.py"
    kernel.write_text(
        "def f(u, z):\n"
        "    while u > 0:\n"
        "        u = u - 1\n"
        "        if z > 1:\n"
        "            z = z - 1\n"
        "    return u\n"
    )
    run = {"executed": {"2": 983, "3": 982, "4": 982, "5": 491}}
    unknowns = [
        {"kind": "data-dependent-bound", "message": "", "line": 2, "symbol": "trip_L2"},
        {"kind": "branch-fraction", "message": "", "line": 4, "symbol": "p_L4"},
    ]
    values = _count_numpy()._measured_values(run, unknowns, kernel)
    assert values == {"trip_L2": 982, "p_L4": sympy.Rational(1, 2)}
    stored = json.loads((ROOT / "tests" / "data" / "npbench_counts.json").read_text())
    assert stored["channel_flow"]["executed"]["73"] == 983
    assert stored["channel_flow"]["executed"]["74"] == 982
