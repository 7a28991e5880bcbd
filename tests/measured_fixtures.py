"""A Python fixture analyzed once per test module, with the figures a framework measured
beside it (`NAME.measured.toml`, written by `scripts/count_torch.py` or `count_jax.py`)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.pipeline import PipelineOptions, lower_source

PYTHON_FIXTURES = Path(__file__).parent.parent / "fixtures" / "python"


def measured(fixture: Path) -> dict[str, Any]:
    """The framework's figures per function, from the TOML beside the fixture."""
    return tomllib.loads(fixture.with_suffix(".measured.toml").read_text())["functions"]


def analyze_fixture(fixture: Path) -> dict[str, FunctionAnalysis]:
    """Every function of the fixture, analyzed with the default options, by name."""
    return analyze_source(fixture.read_text(), str(fixture))


def analyze_source(source: str, path: str = "k.py") -> dict[str, FunctionAnalysis]:
    """Every function of a source text, analyzed with the default options, by name."""
    module = lower_source(source, path, PipelineOptions())
    return {f.function.name: f for f in analyze_module(module, AnalysisOptions()).functions}


def value_at(expression: sympy.Expr, sizes: dict[str, int]) -> int:
    """An exact count at the measured sizes."""
    return int(expression.subs({s: sizes[s.name] for s in expression.free_symbols}))
