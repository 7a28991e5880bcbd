"""Whole models without annotations (issue 29): `nn.Embedding` (a gather), blocks in an
`nn.ModuleList` (a comprehension, or `append` in a loop) run by `for block in self.blocks:`
(`depth` instantiations of the block's summary), the final norm and the output projection;
compared with what PyTorch itself did running them (`scripts/count_torch.py`, stored in
`torch_model.measured.toml`)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.pipeline import PipelineOptions, lower_source

FIXTURE = Path(__file__).parent.parent / "fixtures" / "python" / "torch_model.py"
MEASURED = tomllib.loads(FIXTURE.with_suffix(".measured.toml").read_text())["functions"]


@pytest.fixture(scope="module")
def functions() -> dict[str, FunctionAnalysis]:
    module = lower_source(FIXTURE.read_text(), str(FIXTURE), PipelineOptions())
    return {f.function.name: f for f in analyze_module(module, AnalysisOptions()).functions}


def _at(expression: sympy.Expr, sizes: dict[str, int]) -> int:
    return int(expression.subs({s: sizes[s.name] for s in expression.free_symbols}))


@pytest.mark.parametrize("name", ["Model", "Appended"])
def test_against_pytorch(functions: dict[str, FunctionAnalysis], name: str) -> None:
    """Every Linear of every block and the head: FlopCounterMode's figure exactly; eager
    bytes within 2% (the embedding kernel also reads rows no token selects, as the
    logger counts its whole weight)."""
    measured = MEASURED[name]
    sizes = {**measured["sizes"], "tokens_d0": measured["sizes"]["b"] * measured["sizes"]["t"]}
    function = functions[f"{name}.forward"]
    assert not any("not counted" in u.message for u in function.unknowns)
    contractions = [e for r in function.regions for n, e in r.region.conventions if "*" in n]
    assert sum(_at(e, sizes) for e in contractions) == measured["flop_counter"]
    eager = _at(function.traffic["eager"].total(False), sizes)
    assert abs(eager - measured["eager_bytes"]) <= 0.02 * measured["eager_bytes"]


def test_the_blocks_run_depth_times(functions: dict[str, FunctionAnalysis]) -> None:
    """The loop over the module list has `depth` passes, each the block's own count."""
    sizes = {"width": 64, "vocab": 96, "depth": 2, "tokens_d0": 64, "x_d0": 64}
    block = _at(functions["Block.forward"].flops.total, {"width": 64}) * 64
    model = functions["Model.forward"]
    (loop,) = [r for r in model.regions if any(v.var.startswith("_layer_") for v in r.loops)]
    assert _at(loop.flops.total, sizes) == 2 * block
    assert _at(model.flops.total, sizes) == _at(functions["Appended.forward"].flops.total, sizes)
