"""Python twins of C kernels count exactly like the C: FLOPs and every traffic model."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.pipeline import PipelineOptions, lower_source

TWINS = Path(__file__).resolve().parent.parent / "fixtures" / "python" / "twins"


def _functions(path: Path, write_allocate: bool) -> dict[str, FunctionAnalysis]:
    module = lower_source(path.read_text(), str(path), PipelineOptions())
    analysis = analyze_module(module, AnalysisOptions(write_allocate=write_allocate))
    return {f.function.name: f for f in analysis.functions}


def _same_fractions(expr: sympy.Expr) -> sympy.Expr:
    """Branch fractions are named by line (`p_L12`); twins have them on different lines."""
    fractions = sorted((s for s in expr.free_symbols if s.name.startswith("p_L")), key=str)
    return expr.subs({s: sympy.Symbol(f"p{k}") for k, s in enumerate(fractions)})


PAIRS = sorted(TWINS.glob("*.py"))


@pytest.mark.parametrize("write_allocate", [False, True])
@pytest.mark.parametrize("python", PAIRS, ids=lambda p: p.stem)
def test_twins_count_alike(python: Path, write_allocate: bool) -> None:
    c_results = _functions(python.with_suffix(".c"), write_allocate)
    py_results = _functions(python, write_allocate)
    assert set(py_results) == set(c_results)
    for name, c in c_results.items():
        py = py_results[name]
        assert (
            sympy.expand(_same_fractions(py.flops.total - 0) - _same_fractions(c.flops.total)) == 0
        ), name
        for model in ("compulsory", "streaming"):
            got = _same_fractions(py.traffic[model].total(write_allocate))
            want = _same_fractions(c.traffic[model].total(write_allocate))
            assert sympy.expand(got - want) == 0, f"{name} {model}: {got} != {want}"
