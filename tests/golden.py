"""Reading fixture expectations and comparing symbolic results against them.

An expectation file `NAME.expected.toml` sits beside each fixture. Expressions are sympy
strings compared symbolically (`simplify(actual - expected) == 0`), so `24*n` and
`8*(3*n)` are the same answer.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.ir.symbols import size_symbol
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.sources import read_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def parse(text: str, symbols: set[str]) -> sympy.Expr:
    """Parse an expected expression with every name as a size symbol (as the analysis uses)."""
    names: dict[str, Any] = {name: size_symbol(name) for name in symbols}
    names["oo"] = sympy.oo
    return sympy.sympify(text, locals=names)


def same(actual: sympy.Expr | None, expected_text: str) -> bool:
    if expected_text == "none":
        return actual is None
    if actual is None:
        return False
    symbols = {s.name for s in actual.free_symbols} | _names(expected_text)
    expected = parse(expected_text, symbols)
    if actual in (sympy.oo, -sympy.oo) or expected in (sympy.oo, -sympy.oo):
        return bool(actual == expected)
    return bool(
        sympy.simplify(
            sympy.sympify(str(actual), locals={s: size_symbol(s) for s in symbols}) - expected
        )
        == 0
    )


def _names(text: str) -> set[str]:
    import re

    return {
        w
        for w in re.findall(r"[A-Za-z_]\w*", text)
        if w not in {"oo", "none"} and not callable(getattr(sympy, w, None))
    }


def load_expectations(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def analyze_fixture(
    source: Path, expectations: dict[str, Any], *, write_allocate: bool
) -> dict[str, FunctionAnalysis]:
    options = expectations.get("options", {})
    sizes = {k: int(v) for k, v in expectations.get("sizes", {}).items()}
    pipeline = PipelineOptions(
        include_dirs=tuple(str(source.parent / d) for d in options.get("include_dirs", [])),
        defines={k: str(v) for k, v in options.get("defines", {}).items()},
    )
    module = lower_source(read_source(str(source)), str(source), pipeline)
    analysis = analyze_module(module, AnalysisOptions(write_allocate=write_allocate, sizes=sizes))
    return {f.function.name: f for f in analysis.functions}
