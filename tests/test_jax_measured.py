"""aiscan against JAX itself: the figures `scripts/count_jax.py` measured by running the JAX
fixtures (stored beside them, so CI needs no jax)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.pipeline import PipelineOptions, lower_source

FIXTURES = Path(__file__).parent.parent / "fixtures" / "python"


def _analyzed(fixture: Path) -> dict[str, FunctionAnalysis]:
    module = lower_source(fixture.read_text(), str(fixture), PipelineOptions())
    return {f.function.name: f for f in analyze_module(module, AnalysisOptions()).functions}


def _at(expression: sympy.Expr, sizes: dict[str, int]) -> sympy.Expr:
    return sympy.sympify(expression).subs({s: sizes[s.name] for s in expression.free_symbols})


def _cases(fixture: str) -> list[tuple[str, str]]:
    measured = tomllib.loads((FIXTURES / fixture).with_suffix(".measured.toml").read_text())
    return [(fixture, name) for name in measured["functions"]]


@pytest.mark.parametrize(
    ("fixture", "name"), _cases("frameworks_jax.py") + _cases("frameworks_flax.py")
)
def test_against_what_jax_measured(fixture: str, name: str) -> None:
    """FLOPs equal the jaxpr's primitives counted by MODEL.md (exact total, specials apart,
    and each contraction's quoted `2*m*k*n`), and the eager bytes are within 1% of what
    each JAX dispatch reads and writes (`jax.nn.gelu` and `jax.nn.softmax` are several
    dispatches: JAX runs them one primitive at a time). Known differences: `d**0.5` of a
    Python int is a special to aiscan, a constant folded at trace time to JAX; a mean is a
    sum and a divide of one call to aiscan, two dispatches to JAX. The Flax modules' layers
    (`nn.Dense`, `nn.LayerNorm` built in `setup()` or inline under `@nn.compact`) are
    counted as Flax computes them, their parameters read as module state."""
    measured = tomllib.loads((FIXTURES / fixture).with_suffix(".measured.toml").read_text())
    figures = measured["functions"][name]
    sizes = figures["sizes"]
    result = _analyzed(FIXTURES / fixture)[name]
    assert _at(result.flops.total, sizes) == figures["flops"]
    folded = 1 if name == "attention" else 0  # `d**0.5`
    assert _at(result.flops.special, sizes) == figures["special"] + folded
    quoted = sum((v for r in result.regions for k, v in r.region.conventions if k != ""), 0)
    assert _at(sympy.sympify(quoted), sizes) == figures["quoted"]
    ratio = float(_at(result.traffic["eager"].total(False), sizes)) / figures["eager_bytes"]
    assert 0.99 <= ratio <= 1.0, (name, ratio)
