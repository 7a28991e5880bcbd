"""A Llama-style block without annotations (issue 29): an RMS norm calling its own helper
method, the real-valued rotary embedding (`reshape(x.shape[:-1] + (-1, 2)).unbind(-1)`, a
view by a comprehension over `enumerate(x.shape)`, `stack(...).flatten(3)`), grouped-query
heads widened by `expand(...).reshape(...)`, a tuple of calls unpacked, `.forward()` calls,
`type_as`, a SiLU-gated feed-forward; compared with what PyTorch itself did running it
(`scripts/count_torch.py`, stored in `torch_llama.measured.toml`)."""

from __future__ import annotations

import pytest
import sympy
from measured_fixtures import PYTHON_FIXTURES, analyze_fixture, measured, value_at

from aiscan.analysis.kernel import FunctionAnalysis

FIXTURE = PYTHON_FIXTURES / "torch_llama.py"
MEASURED = measured(FIXTURE)


@pytest.fixture(scope="module")
def functions() -> dict[str, FunctionAnalysis]:
    return analyze_fixture(FIXTURE)


def _sizes(name: str) -> dict[str, int]:
    """The measured sizes in aiscan's names: `widen`'s early return not taken (p = 0: the
    grouped heads are widened, kv_heads < heads), the inputs' extents as each function
    names them."""
    measured = MEASURED[name]["sizes"]
    b, t = measured["b"], measured["t"]
    return {**measured, "x_d0": b, "cos_d0": t, "p_L47": 0}


def _contractions(function: FunctionAnalysis, sizes: dict[str, int]) -> int:
    return sum(
        value_at(e, sizes) for r in function.regions for n, e in r.region.conventions if "*" in n
    )


@pytest.mark.parametrize("name", ["Attend", "Layer"])
def test_against_pytorch(functions: dict[str, FunctionAnalysis], name: str) -> None:
    """Every matmul of the block counted with its shapes (FlopCounterMode's figure exactly),
    the eager bytes within 3% of PyTorch's ATen operators (measured: Attend -0.2%, Layer
    equal, its norms' weights float32 as `torch.ones` makes them)."""
    function = functions[f"{name}.forward"]
    sizes = _sizes(name)
    assert not any("not counted" in u.message for u in function.unknowns), [
        u.message for u in function.unknowns if "not counted" in u.message
    ]
    assert _contractions(function, sizes) == MEASURED[name]["flop_counter"]
    eager = value_at(function.traffic["eager"].total(False), sizes)
    assert abs(eager - MEASURED[name]["eager_bytes"]) <= 0.03 * MEASURED[name]["eager_bytes"]


def test_rotary_embedding_counts_the_rotation(functions: dict[str, FunctionAnalysis]) -> None:
    """Attend's exact FLOPs: the three projections and the output one (`m*n*(2k - 1)`),
    `rotate` on q (b, t, heads, size) and k (b, t, kv_heads, size) at 6 FLOPs per pair (4
    mul, a sub, an add), the causal attention as `framework_calls.py` counts it."""
    block = functions["Attend.forward"]
    sizes = _sizes("Attend")
    b, t, heads, kv, size = 2, 32, 4, 2, 16
    attention = 2 * b * heads * t * t * size + 3 * b * heads * t * t // 2  # causal, see sdpa
    attention += b * heads * t * size + b * heads * t // 2
    linears = 2 * b * t * 64 * (heads + 2 * kv) * size - b * t * (heads + 2 * kv) * size
    linears += 2 * b * t * heads * size * 64 - b * t * 64
    rotation = 6 * b * t * (heads + kv) * size // 2
    assert value_at(block.flops.total, sizes) == linears + rotation + attention


def test_the_helper_method_and_the_size_flags(functions: dict[str, FunctionAnalysis]) -> None:
    """`self._scaled(x)` is the module's own method instantiated per call; `if ffn is None:`
    of a size and `s.heads if s.kv_heads is None else s.kv_heads` take the branch a size
    takes, said on their lines."""
    notes = [u.message for u in functions["Gated.__init__"].unknowns]
    assert notes == [
        "`ffn is None` is False on every call, as the code sets it (a size is never None): "
        "only the branch taken is counted"
    ]
    gated = functions["Gated.forward"].flops.total
    ffn, width = sympy.symbols("ffn width", positive=True, integer=True)
    plain = gated.subs(
        {s: sympy.Symbol(s.name, positive=True, integer=True) for s in gated.free_symbols}
    )
    assert sympy.expand(plain - (6 * ffn * width - width)) == 0  # per token, silu apart
    layer = functions["Layer.forward"]
    norm = 3 * 64 + 1 + 64  # x*x, mean, + eps, rsqrt apart, x * rstd, * gain per row
    assert value_at(functions["Norm.forward"].flops.total, {"width": 64}) == norm
    assert not any("not counted" in u.message for u in layer.unknowns)


def test_a_call_teaches_every_inferred_parameter_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Attend.forward` passes `cos` and `sin` (un-annotated: inferred) to `rotate`, which
    takes both with more axes than the first lowering gave them. The call tells the next
    lowering of `Attend.forward` about both at once, not one a lowering: `rotate` is
    specialized for the ranks of `q` and `k`, then for all four (there was a third
    specialization, and a third lowering of `Attend.forward`, with `cos`'s rank alone)."""
    from aiscan.frontends.python import frontend, lower_python_source

    lowered: list[tuple[str, tuple[tuple[str, int], ...]]] = []
    lower = frontend._Summaries._lower

    def counted(self: object, definition: object, dtypes: object, ranks: object = None) -> object:
        name = definition.name.value  # type: ignore[attr-defined]
        lowered.append((name, tuple(sorted((ranks or {}).items()))))  # type: ignore[attr-defined]
        return lower(self, definition, dtypes, ranks)  # type: ignore[arg-type]

    monkeypatch.setattr(frontend._Summaries, "_lower", counted)
    lower_python_source(FIXTURE.read_text(), str(FIXTURE))
    assert [ranks for name, ranks in lowered if name == "rotate"] == [
        (),
        (("k", 4), ("q", 4)),
        (("cos", 2), ("k", 4), ("q", 4), ("sin", 2)),
    ]
