"""Whole models without annotations (issue 29): `nn.Embedding` (a gather), blocks in an
`nn.ModuleList` (a comprehension, or `append` in a loop) run by `for block in self.blocks:`
(`depth` instantiations of the block's summary), the final norm and the output projection;
compared with what PyTorch itself did running them (`scripts/count_torch.py`, stored in
`torch_model.measured.toml`)."""

from __future__ import annotations

import pytest
from measured_fixtures import PYTHON_FIXTURES, analyze_fixture, measured, value_at

from aiscan.analysis.kernel import FunctionAnalysis

FIXTURE = PYTHON_FIXTURES / "torch_model.py"
MEASURED = measured(FIXTURE)


@pytest.fixture(scope="module")
def functions() -> dict[str, FunctionAnalysis]:
    return analyze_fixture(FIXTURE)


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
    assert sum(value_at(e, sizes) for e in contractions) == measured["flop_counter"]
    eager = value_at(function.traffic["eager"].total(False), sizes)
    assert abs(eager - measured["eager_bytes"]) <= 0.02 * measured["eager_bytes"]


def test_the_blocks_run_depth_times(functions: dict[str, FunctionAnalysis]) -> None:
    """The loop over the module list has `depth` passes, each the block's own count."""
    sizes = {"width": 64, "vocab": 96, "depth": 2, "tokens_d0": 64, "x_d0": 64}
    block = value_at(functions["Block.forward"].flops.total, {"width": 64}) * 64
    model = functions["Model.forward"]
    (loop,) = [r for r in model.regions if any(v.var.startswith("_layer_") for v in r.loops)]
    assert value_at(loop.flops.total, sizes) == 2 * block
    assert value_at(model.flops.total, sizes) == value_at(
        functions["Appended.forward"].flops.total, sizes
    )
