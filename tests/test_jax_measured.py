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
    ("fixture", "name"),
    _cases("frameworks_jax.py") + _cases("frameworks_jax_ops.py") + _cases("frameworks_flax.py"),
)
def test_against_what_jax_measured(fixture: str, name: str) -> None:
    """FLOPs equal the jaxpr's primitives counted by MODEL.md (exact total, specials apart,
    and each contraction's quoted `2*m*k*n`), and the eager bytes are within 1% of what
    each JAX dispatch reads and writes (`jax.nn.gelu` and `jax.nn.softmax` are several
    dispatches: JAX runs them one primitive at a time). Known differences: `d**0.5` of a
    Python int is a special to aiscan, a constant folded at trace time to JAX; a mean is a
    sum and a divide of one call to aiscan, two dispatches to JAX; `1.0 / jnp.sqrt(head_dim)`
    of a size is a sqrt and a divide to JAX, folded by aiscan (`Attention`, whose eager
    figure is also a flagged upper bound: the Dense reads the merged-axes reshape of the
    einsum through `floor`/`mod` indices). The Flax modules' layers
    (`nn.Dense`, `nn.LayerNorm` built in `setup()` or inline under `@nn.compact`) are
    counted as Flax computes them, their parameters read as module state."""
    measured = tomllib.loads((FIXTURES / fixture).with_suffix(".measured.toml").read_text())
    figures = measured["functions"][name]
    sizes = figures["sizes"]
    result = _analyzed(FIXTURES / fixture)[name]
    flops, special = {"attention": (0, 1), "Attention.__call__": (-1, -1)}.get(name, (0, 0))
    assert _at(result.flops.total, sizes) == figures["flops"] + flops
    assert _at(result.flops.special, sizes) == figures["special"] + special
    quoted = sum((v for r in result.regions for k, v in r.region.conventions if k != ""), 0)
    assert _at(sympy.sympify(quoted), sizes) == figures["quoted"]
    ratio = float(_at(result.traffic["eager"].total(False), sizes)) / figures["eager_bytes"]
    bounded = name == "Attention.__call__"  # a merged-axes reshape: a flagged upper bound
    assert 0.99 <= ratio <= (1.08 if bounded else 1.0), (name, ratio)


def _function(source: str, name: str) -> FunctionAnalysis:
    module = lower_source(source, "k.py", PipelineOptions())
    found = {f.function.name: f for f in analyze_module(module, AnalysisOptions()).functions}
    return found[name]


def test_split_is_a_view_in_numpy_and_a_copy_in_jax() -> None:
    """`a, b = split(x, 2)`: NumPy returns views (the add reads x), JAX new arrays (a
    dispatch reads x and writes each part first)."""
    body = "\n\ndef f(x: Float32[Array, 'n']):\n    a, b = {}.split(x, 2)\n    return a + b\n"
    head = "from jaxtyping import Float32, Array\nimport {} as {}\n"
    numpy = _function(head.format("numpy", "np") + body.format("np"), "f")
    jax = _function(head.format("jax.numpy", "jnp") + body.format("jnp"), "f")
    n = sympy.Symbol("n", positive=True, integer=True)
    assert sympy.expand(numpy.traffic["eager"].total(False).subs({"n": n}) - 6 * n) == 0
    assert sympy.expand(jax.traffic["eager"].total(False).subs({"n": n}) - 14 * n) == 0
    assert numpy.flops.total.subs({"n": n}) == n / 2


def test_a_reshape_by_a_floor_division_is_analyzed() -> None:
    """`q.reshape(b, t, h, c // h)` (every attention splits its heads so) used to stop the
    analysis with an internal error in the footprint's delinearization."""
    source = (
        "import jax.numpy as jnp\n\n\ndef f(x, h: int):\n    b, t, c = x.shape\n"
        "    q = x.reshape(b, t, h, c // h)\n    return jnp.einsum('bthd,bshd->bhts', q, q)\n"
    )
    result = _function(source, "f")
    sizes = {"b": 2, "t": 8, "c": 16, "h": 4}
    assert _at(result.flops.total, sizes) == 2 * 4 * 8 * 8 * (2 * 4 - 1)


def test_flax_fields_give_sizes_flags_and_dtypes() -> None:
    """`features: int` is a size; `use_bias: bool = False` read by `use_bias=self.use_bias`
    drops the bias (an assumption says the default was taken); `dtype: Any = jnp.bfloat16`
    is what `astype(self.dtype)` converts to."""
    source = (
        "from typing import Any\nimport flax.linen as nn\nimport jax.numpy as jnp\n\n\n"
        "class Proj(nn.Module):\n    features: int\n    use_bias: bool = False\n"
        "    dtype: Any = jnp.bfloat16\n\n    @nn.compact\n    def __call__(self, x):\n"
        "        n, d = x.shape\n"
        "        y = nn.Dense(self.features, use_bias=self.use_bias)(x)\n"
        "        return y.astype(self.dtype)\n"
    )
    result = _function(source, "Proj.__call__")
    sizes = {"n": 64, "d": 32, "features": 16}
    assert _at(result.flops.total, sizes) == 64 * 16 * (2 * 32 - 1)  # no bias add
    messages = [u.message for u in result.unknowns]
    assert any("`self.use_bias` taken at its field's default, False" in m for m in messages)
    # x (4 B), kernel (4 B) read; y written (4 B) then read and written as bfloat16 (2 B)
    eager = _at(result.traffic["eager"].total(False), sizes)
    assert eager == 4 * (64 * 32 + 32 * 16 + 64 * 16) + 4 * 64 * 16 + 2 * 64 * 16


def test_a_bias_added_after_a_normalization_is_a_vector() -> None:
    """`(x - mu) / jnp.sqrt(var + eps) * g + b`: `b` is added to an array (a product of one
    and a factor), so it is a vector along the last axis, `(d,)`, never a scalar; `g`,
    only multiplied, says nothing of its rank and stays a scalar (an assumption). Against
    JAX's dispatches the eager bytes then differ by `g`'s `(d,)` read alone."""
    fixture = FIXTURES / "frameworks_jax.py"
    result = _analyzed(fixture)["layernorm"]
    taken = {p.name: p for p in result.function.parameters or ()}
    assert [str(e) for e in taken["b"].shape] == ["d"] and taken["g"].shape == ()
    figures = tomllib.loads(fixture.with_suffix(".measured.toml").read_text())["functions"]
    sizes = figures["layernorm"]["sizes"]
    eager = _at(result.traffic["eager"].total(False), sizes)
    assert figures["layernorm"]["eager_bytes"] - eager == 4 * sizes["d"]
    source = (
        "import jax.numpy as jnp\n\n\ndef ln(x, g, b):\n    mu = x.mean(-1, keepdims=True)\n"
        "    var = ((x - mu) ** 2).mean(-1, keepdims=True)\n"
        "    return (x - mu) / jnp.sqrt(var + 1e-5) * g + b\n"
    )
    plain = {p.name: p for p in _function(source, "ln").function.parameters or ()}
    assert [str(e) for e in plain["b"].shape] == ["x_d1"]  # x's last axis, x of any rank
