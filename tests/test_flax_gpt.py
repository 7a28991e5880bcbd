"""A whole GPT in Flax as its users write it (issue 29): user submodules built in `setup()`
and inline under `@nn.compact`, a list of blocks looped over, `nn.Embed` and the tied
`attend`, a causal mask. The fixture (`fixtures/python/flax_gpt.py`) is compared with what
JAX itself did running it (`scripts/count_jax.py`, stored in `flax_gpt.measured.toml`)."""

from __future__ import annotations

import pytest
import sympy
from measured_fixtures import PYTHON_FIXTURES, analyze_fixture, analyze_source, measured, value_at

from aiscan.analysis.kernel import FunctionAnalysis
from aiscan.ir.nodes import UnknownKind

FIXTURE = PYTHON_FIXTURES / "flax_gpt.py"
MEASURED = measured(FIXTURE)


@pytest.fixture(scope="module")
def functions() -> dict[str, FunctionAnalysis]:
    return analyze_fixture(FIXTURE)


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_against_what_jax_measured(functions: dict[str, FunctionAnalysis], name: str) -> None:
    """FLOPs equal the jaxpr's (the blocks' submodules instantiated once per block, the
    causal mask's one head broadcast over all heads); specials too, but for
    `jnp.sqrt(c // h)` of a size, a constant to aiscan and one sqrt per block to JAX. The
    eager bytes are within 1.1% of JAX's dispatches (the embedding gathers read one row
    per token, JAX's `take` the whole table)."""
    figures = MEASURED[name]
    sizes = figures["sizes"]
    result = functions[name]
    blocks = 1 if name == "Block.__call__" else sizes["n_layer"]
    assert value_at(result.flops.total, sizes) == figures["flops"]
    assert value_at(result.flops.special, sizes) == figures["special"] - blocks
    ratio = value_at(result.traffic["eager"].total(False), sizes) / figures["eager_bytes"]
    assert 1.0 <= ratio <= 1.011, (name, ratio)


def test_a_list_of_blocks_counts_each_block(functions: dict[str, FunctionAnalysis]) -> None:
    """`self.h = [Block(config) for _ in range(config.n_layer)]` then `for block in
    self.h`: one more layer is one more block's work, whatever the other sizes."""
    sizes = dict(MEASURED["GPT.__call__"]["sizes"], n_embd=128)
    total = functions["GPT.__call__"].flops.total
    block = functions["Block.__call__"].flops.total
    more = value_at(total, {**sizes, "n_layer": 3}) - value_at(total, sizes)
    assert more == value_at(block, {**sizes, "x_d0": sizes["b"], "x_d1": sizes["t"]}) == 55394560


def _quoted(function: FunctionAnalysis, sizes: dict[str, int]) -> int:
    """The `2*m*k*n` figures the function's regions quote for their contractions."""
    return sum(
        value_at(e, sizes) for r in function.regions for n, e in r.region.conventions if "*" in n
    )


def test_a_list_of_blocks_quotes_each_blocks_contractions(
    functions: dict[str, FunctionAnalysis],
) -> None:
    """`for block in self.h` is the loop PyTorch's `nn.ModuleList` gets (`layers.ModuleList`):
    each block's `2*m*k*n` figures are quoted once per block, as its FLOPs are counted."""
    sizes = dict(MEASURED["GPT.__call__"]["sizes"], n_embd=128)
    gpt, block = functions["GPT.__call__"], functions["Block.__call__"]
    more = _quoted(gpt, {**sizes, "n_layer": 3}) - _quoted(gpt, sizes)
    per_block = _quoted(block, {**sizes, "x_d0": sizes["b"], "x_d1": sizes["t"]})
    # Per block: c_attn, c_proj and the MLP's two (3, 1, 4 and 4 times 2*b*t*C*C), the
    # scores and the weighted sum (2*b*t*t*C each).
    assert more == per_block == 24 * 2 * 64 * 128**2 + 2 * 2 * 2 * 64**2 * 128


def test_the_blocks_shapes_flow_from_their_submodules(
    functions: dict[str, FunctionAnalysis],
) -> None:
    """Block's `x` gets its rank and width from the attention and the layer norms it is
    handed to, and the whole model runs in JAX's float32."""
    taken = functions["Block.__call__"].function.parameters or ()
    x = next(p for p in taken if p.name == "x")
    assert [str(e) for e in x.shape] == ["x_d0", "x_d1", "n_embd"]
    assert x.element is not None and x.element.name == "float32"
    assert functions["GPT.__call__"].precision == "fp32"


def test_the_embedding_gathers_are_flagged(functions: dict[str, FunctionAnalysis]) -> None:
    """`self.wte(idx)` reads rows the data chooses: taken distinct, said on the line."""
    flagged = [
        u
        for u in functions["GPT.__call__"].unknowns
        if u.kind == UnknownKind.DATA_DEPENDENT_BOUND and "gathered" in u.message
    ]
    assert [u.span.line for u in flagged] == [81, 81]
    assert "self.wte.embedding" in flagged[0].message


def _function(source: str, name: str) -> FunctionAnalysis:
    return analyze_source(source)[name]


def test_a_bool_flag_is_no_array() -> None:
    """`*, train: bool` (nanoGPT-jax's modules) is a flag: a submodule call passing
    `train=train` is counted, not an unknown shape."""
    source = (
        "import flax.linen as nn\nimport jax.numpy as jnp\n\n\n"
        "class Inner(nn.Module):\n    def __call__(self, x, *, train: bool):\n"
        "        n, d = x.shape\n        return jnp.tanh(x)\n\n\n"
        "class Outer(nn.Module):\n    def setup(self):\n        self.inner = Inner()\n\n"
        "    def __call__(self, x, *, train: bool):\n"
        "        return self.inner(x, train=train) * 2.0\n"
    )
    result = _function(source, "Outer.__call__")
    assert not [u for u in result.unknowns if u.kind == UnknownKind.UNKNOWN_SHAPE]
    n, d = sympy.symbols("x_d0 x_d1", positive=True, integer=True)
    assert sympy.expand(result.flops.total.subs({"x_d0": n, "x_d1": d}) - n * d) == 0
