"""Model code as PyTorch users write it: a configuration object's sizes, user submodules
instantiated per call, `split` into views (issue 29). The fixture is a GPT block after
nanoGPT's `model.py` (`fixtures/python/torch_modules.py`), compared with what PyTorch
itself did running it (`scripts/count_torch.py`, stored in `torch_modules.measured.toml`)."""

from __future__ import annotations

import pytest
import sympy
from measured_fixtures import PYTHON_FIXTURES, analyze_fixture, analyze_source, measured, value_at

from aiscan.analysis.kernel import FunctionAnalysis

FIXTURE = PYTHON_FIXTURES / "torch_modules.py"
MEASURED = measured(FIXTURE)


@pytest.fixture(scope="module")
def functions() -> dict[str, FunctionAnalysis]:
    return analyze_fixture(FIXTURE)


def _contractions(function: FunctionAnalysis) -> list[str]:
    return [str(e) for r in function.regions for n, e in r.region.conventions if "*" in n]


def test_configuration_attributes_are_sizes(functions: dict[str, FunctionAnalysis]) -> None:
    attention = functions["Attention.forward"]
    texts = [u.message for u in attention.unknowns]
    assert not any("is not a size of `Linear`" in t or "unpacking" in t for t in texts), texts
    # c_attn (C -> 3C) and c_proj (C -> C), by the 2*m*k*n convention, in `config.n_embd`.
    assert sorted(_contractions(attention)) == ["2*B*T*n_embd**2", "6*B*T*n_embd**2"]


def test_submodules_are_instantiated_per_call(functions: dict[str, FunctionAnalysis]) -> None:
    """Block.forward counts what its submodules' own reports count, at the block's sizes:
    two norms and the MLP per row of `x`, the attention at (B, T), two residual adds."""
    block = functions["Block.forward"]
    assert not any("not counted" in u.message for u in block.unknowns)
    b, t, c = 2, 32, 64
    row = {"ndim": c, "n_embd": c}
    norm = value_at(functions["Norm.forward"].flops.total, row)
    mlp = value_at(functions["Mlp.forward"].flops.total, row)
    attention = value_at(
        functions["Attention.forward"].flops.total, {"B": b, "T": t, "n_embd": c, "n_head": 4}
    )
    total = value_at(block.flops.total, {"x_d0": b, "x_d1": t, "n_embd": c, "n_head": 4})
    assert norm == 8 * c + 1
    assert mlp == 2 * (4 * c) * (2 * c) + 4 * 4 * c  # c_fc, c_proj with biases; GELU (erf apart)
    assert total == b * t * (2 * norm + mlp + 2 * c) + attention == 6709504


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_against_pytorch(functions: dict[str, FunctionAnalysis], name: str) -> None:
    """The Linears' `2*m*k*n` figures are FlopCounterMode's (the CPU flash attention kernel
    is not counted there); eager bytes within 10% of PyTorch's ATen operators (each Linear
    one `addmm`, each layer norm one `native_layer_norm`)."""
    measured = MEASURED[name]
    sizes = measured["sizes"]
    function = functions[f"{name}.forward"]
    flops = sum(value_at(sympy.sympify(e), sizes) for e in _contractions(function))
    assert flops == measured["flop_counter"]
    eager = value_at(function.traffic["eager"].total(False), sizes)
    assert abs(eager - measured["eager_bytes"]) <= 0.10 * measured["eager_bytes"]
    # All that differs: the attention kernel's logsumexp (B, n_head, T) in float32, and in
    # the block each of its two `native_layer_norm`s' mean and rstd (B*T each, float32;
    # its weight and bias, made by `torch.ones`/`torch.zeros`, are float32 as in PyTorch).
    norms = 2 * 2 * (2 * 32) * 4 if name == "Block" else 0
    assert measured["eager_bytes"] - eager == 2 * 4 * 32 * 4 + norms


ARGS = """import torch.nn as nn
from dataclasses import dataclass


@dataclass
class ModelArgs:
    dim: int = 4096
    hidden_dim: int = 11008


class FeedForward(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.w1 = nn.Linear(args.dim, args.hidden_dim, bias=False)

    def forward(self, x):
        return self.w1(x)
"""


def test_a_dataclass_annotation_is_a_configuration_object() -> None:
    """`args: ModelArgs` (llama2.c's spelling): `args.dim` is the size `dim`."""
    found = analyze_source(ARGS)
    forward = found["FeedForward.forward"]
    dim, hidden = sympy.symbols("dim hidden_dim", positive=True, integer=True)
    total = forward.flops.total
    plain = total.subs(
        {s: sympy.Symbol(s.name, positive=True, integer=True) for s in total.free_symbols}
    )
    assert sympy.expand(plain - hidden * (2 * dim - 1)) == 0
    (note,) = [u.message for u in found["FeedForward.__init__"].unknowns]
    assert note.startswith("`args` is a class of this file and is only read through")
