"""Buffers a module registers (issue 29, llama2.c's rotary tables): `self.register_buffer(
"cos", cos)` makes `self.cos` module state with the shape of the value registered (here a
helper's result, built by `torch.arange(...)[: size // 2]`, `torch.outer`, `torch.cos`),
so `self.cos[:t]` in `forward` is a view of known shape; compared with what PyTorch itself
did (`scripts/count_torch.py`, stored in `torch_rotary.measured.toml`)."""

from __future__ import annotations

import pytest
from measured_fixtures import PYTHON_FIXTURES, analyze_fixture, analyze_source, measured, value_at

from aiscan.analysis.kernel import FunctionAnalysis

FIXTURE = PYTHON_FIXTURES / "torch_rotary.py"
MEASURED = measured(FIXTURE)


@pytest.fixture(scope="module")
def functions() -> dict[str, FunctionAnalysis]:
    return analyze_fixture(FIXTURE)


def test_against_pytorch(functions: dict[str, FunctionAnalysis]) -> None:
    """Six elementwise kernels on (b, t, heads, size/2) pairs, the tables broadcast: the
    eager bytes are PyTorch's exactly; 4 mul, 1 sub, 1 add a pair."""
    measured = MEASURED["Rotate"]
    sizes = measured["sizes"]
    forward = functions["Rotate.forward"]
    assert not any("not counted" in u.message for u in forward.unknowns)
    assert value_at(forward.traffic["eager"].total(False), sizes) == measured["eager_bytes"]
    pairs = sizes["b"] * sizes["t"] * sizes["heads"] * (sizes["width"] // sizes["heads"] // 2)
    assert value_at(forward.flops.total, sizes) == 6 * pairs == 12288


def test_the_buffers_are_built_in_init(functions: dict[str, FunctionAnalysis]) -> None:
    """`__init__` computes the tables (longest x size/2 angles, a cos and a sin each) and
    says nothing of `register_buffer`; `self.settings.width` is the size `width`."""
    init = functions["Rotate.__init__"]
    messages = [u.message for u in init.unknowns]
    assert not any("register_buffer" in m or "not counted" in m for m in messages), messages
    sizes = {"width": 64, "heads": 4, "longest": 64}
    assert value_at(init.flops.special, sizes) == 2 * 64 * 8 + 8  # cos, sin; the powers


def test_an_optional_tensor_is_a_tensor() -> None:
    """`targets: Optional[torch.Tensor] = None` (and `torch.Tensor | None`): a tensor whose
    shape the body tells, as an un-annotated one."""
    source = (
        "from typing import Optional\n\nimport torch\nimport torch.nn.functional as F\n\n\n"
        "def f(logits: torch.Tensor, targets: Optional[torch.Tensor] = None,"
        " w: 'torch.Tensor | None' = None):\n"
        "    n, c = logits.shape\n"
        "    return F.cross_entropy(logits * w, targets)\n"
    )
    found = analyze_source(source)["f"]
    assert not any("not counted" in u.message for u in found.unknowns)
    # w * logits (n*c), then cross entropy 3*n*c
    assert value_at(found.flops.total, {"n": 64, "c": 96}) == 4 * 64 * 96


def test_torch_factories_make_the_default_dtype() -> None:
    """`torch.ones(d)` in PyTorch code is float32 (PyTorch's default dtype), as NumPy's
    `np.ones(d)` is float64."""
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Norm(nn.Module):\n"
        "    def __init__(self, dim: int):\n"
        "        super().__init__()\n"
        "        self.weight = nn.Parameter(torch.ones(dim))\n"
    )
    init = analyze_source(source)["Norm.__init__"]
    assert value_at(init.traffic["compulsory"].total(False), {"dim": 10}) == 40
