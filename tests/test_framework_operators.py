"""PyTorch and JAX model code: names, default dtypes, one-kernel operators, tensor methods.

Each figure is worked by hand from the operator's algorithm (MODEL.md's conventions; the
counts are listed in docs/python.md) on annotated shapes, so the numbers are exact.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.cli import main
from aiscan.ir.nodes import Access, Loop, Node, Statement
from aiscan.pipeline import PipelineOptions, lower_source

HEAD = """import torch
import torch.nn.functional as F
from jaxtyping import Float32, Float16

"""
r, n, d, m, k, b, h = sympy.symbols("r n d m k b h", positive=True, integer=True)


def analyzed(source: str, **options: str) -> dict[str, FunctionAnalysis]:
    module = lower_source(source, "k.py", PipelineOptions(**options))  # type: ignore[arg-type]
    return {f.function.name: f for f in analyze_module(module, AnalysisOptions()).functions}


def plain(expression: sympy.Expr) -> sympy.Expr:
    return sympy.expand(
        sympy.sympify(expression).subs(
            {s: sympy.Symbol(s.name, positive=True, integer=True) for s in expression.free_symbols}
        )
    )


def one(source: str) -> FunctionAnalysis:
    (result,) = analyzed(HEAD + source).values()
    return result


def messages(result: FunctionAnalysis) -> list[str]:
    return [u.message for u in result.unknowns]


def test_torch_names_are_torch_names() -> None:
    """`F.mystery` was reported as `numpy.nn.functional.mystery`."""
    result = one('def f(x: Float32[torch.Tensor, "n"]):\n    return F.mystery(x)\n')
    assert any("`torch.nn.functional.mystery` is not modeled" in m for m in messages(result))


def test_one_unmodeled_call_keeps_the_rest_counted() -> None:
    """Regression: `F.gelu` unknown dropped both matmuls of the MLP (0 FLOPs). Now an
    unmodeled call's argument is still computed and counted, and so is other work."""
    result = one(
        'def f(x: Float32[torch.Tensor, "n d"], w: Float32[torch.Tensor, "d m"]):\n'
        "    h = F.mystery(x @ w + 1.0)\n"
        "    y = x @ w\n"
        "    return y\n"
    )
    product = n * m * (2 * d - 1)
    assert plain(result.flops.total) == plain(2 * product + n * m)
    assert any("its arguments are" in m for m in messages(result))


def test_softmax_is_one_kernel() -> None:
    """rows of n: x - max (n sub), exp (n special), row sum (n - 1 adds), divide (n div);
    eager: x read, y written (float32), where the hand-written one is five calls."""
    for call in ("F.softmax(x, dim=-1)", "torch.softmax(x, -1)", "x.softmax(-1)"):
        result = one(f'def f(x: Float32[torch.Tensor, "r n"]):\n    return {call}\n')
        assert plain(result.flops.total) == plain(r * (3 * n - 1)), call
        assert plain(result.flops.special) == plain(r * n), call
        assert plain(result.traffic["eager"].total(False)) == plain(8 * r * n), call


def test_log_softmax_and_logsumexp() -> None:
    result = one('def f(x: Float32[torch.Tensor, "r n"]):\n    return F.log_softmax(x, -1)\n')
    assert plain(result.flops.total) == plain(r * (3 * n - 1))
    assert plain(result.flops.special) == plain(r * (n + 1))  # n exp and one log per row
    result = one(
        'def f(x: Float32[torch.Tensor, "r n"]):\n    return torch.logsumexp(x, 1, keepdim=True)\n'
    )
    assert plain(result.flops.total) == plain(r * 2 * n)  # sub n, adds n - 1, + max
    assert plain(result.traffic["eager"].total(False)) == plain(4 * r * n + 4 * r)


@pytest.mark.parametrize(
    ("call", "per_element", "special"),
    [
        ("F.gelu(x)", 4, "erf"),  # 0.5 * x * (1 + erf(x / sqrt(2)))
        ('F.gelu(x, approximate="tanh")', 8, "tanh"),
        ("F.silu(x)", 1, "sigmoid"),  # x * sigmoid(x)
        ("F.relu(x)", 0, None),
        ("torch.sigmoid(x)", 0, "sigmoid"),
        ("torch.tanh(x)", 0, "tanh"),
    ],
)
def test_activations(call: str, per_element: int, special: str | None) -> None:
    result = one(f'def f(x: Float32[torch.Tensor, "n d"]):\n    return {call}\n')
    assert plain(result.flops.total) == plain(per_element * n * d), call
    assert plain(result.flops.special) == (plain(n * d) if special else 0), call
    assert plain(result.traffic["eager"].total(False)) == plain(8 * n * d), call


def test_layer_norm_and_rms_norm() -> None:
    norm = one(
        'def f(x: Float32[torch.Tensor, "n d"], g: Float32[torch.Tensor, "d"], '
        'b: Float32[torch.Tensor, "d"]):\n    return F.layer_norm(x, (d,), g, b)\n'
    )
    assert plain(norm.flops.total) == plain(n * (8 * d + 1))
    assert plain(norm.traffic["eager"].total(False)) == plain(8 * n * d + 8 * d)
    bare = one('def f(x: Float32[torch.Tensor, "n d"]):\n    return F.layer_norm(x, (d,))\n')
    assert plain(bare.flops.total) == plain(n * (6 * d + 1))
    rms = one(
        'def f(x: Float32[torch.Tensor, "n d"], g: Float32[torch.Tensor, "d"]):\n'
        "    return F.rms_norm(x, (d,), g)\n"
    )
    # x * x, * rstd, * g (3d mul), the sum (d - 1 adds), / d, + eps; rsqrt special.
    assert plain(rms.flops.total) == plain(n * (4 * d + 1))
    assert plain(rms.flops.special) == plain(n)


def test_dropout_is_counted_as_in_evaluation() -> None:
    result = one('def f(x: Float32[torch.Tensor, "n"]):\n    return F.dropout(x, 0.1)\n')
    assert plain(result.flops.total) == 0
    assert any("dropout counted as in evaluation" in m for m in messages(result))


def test_linear_baddbmm_and_masked_fill() -> None:
    linear = one(
        'def f(x: Float32[torch.Tensor, "n k"], w: Float32[torch.Tensor, "m k"], '
        'b: Float32[torch.Tensor, "m"]):\n    return F.linear(x, w, b)\n'
    )
    assert plain(linear.flops.total) == plain(n * m * (2 * k - 1) + n * m)
    batched = one(
        'def f(c: Float32[torch.Tensor, "b n m"], x: Float32[torch.Tensor, "b n k"], '
        'y: Float32[torch.Tensor, "b k m"]):\n    return torch.baddbmm(c, x, y)\n'
    )
    assert plain(batched.flops.total) == plain(b * n * m * 2 * k)
    filled = one(
        'def f(s: Float32[torch.Tensor, "n m"], keep: Bool[torch.Tensor, "n m"]):\n'
        "    return s.masked_fill(keep > 0.5, -1e9) + 1.0\n".replace("Bool", "Float32")
    )
    assert plain(filled.flops.total) == plain(n * m)  # the + 1.0; the fill is a select


def test_scaled_dot_product_attention() -> None:
    full = one(
        'def f(q: Float16[torch.Tensor, "b h n d"], k: Float16[torch.Tensor, "b h m d"], '
        'v: Float16[torch.Tensor, "b h m d"]):\n'
        "    return F.scaled_dot_product_attention(q, k, v)\n"
    )
    pairs = b * h * n * m
    # scores pairs*(2d - 1), scale/sub/div 3 per pair, row sums b*h*n*(m - 1),
    # p @ v b*h*n*d*(2m - 1)
    expected = pairs * (2 * d - 1) + 3 * pairs + b * h * n * (m - 1) + b * h * n * d * (2 * m - 1)
    assert plain(full.flops.total) == plain(expected)
    assert plain(full.flops.special) == plain(pairs)
    # a fused kernel: q, k, v read once, the output written once (fp16: 2 bytes)
    assert plain(full.traffic["eager"].total(False)) == plain(2 * b * h * d * (2 * n + 2 * m))
    conventions = [c for region in full.regions for c in region.region.conventions]
    assert conventions == [("scaled_dot_product_attention", sympy.expand(4 * pairs * d))]


def test_tensor_methods_read_as_pytorch_means_them() -> None:
    """`transpose(a, b)` swaps two axes (NumPy's takes a permutation), `size(k)` is an
    extent, `permute`, `view` and `.mT` are views, `.half()` and `.to(dtype)` convert."""
    result = one(
        'def f(q: Float32[torch.Tensor, "b h n d"], k: Float32[torch.Tensor, "b h m d"]):\n'
        "    b, h, n, d = q.shape\n"
        "    s = q @ k.transpose(-2, -1) / q.size(-1)\n"
        "    t = q.permute(0, 2, 1, 3).view(b, n, h * d)\n"
        "    return s.half() + (q @ k.mT).to(torch.float16)\n"
    )
    assert not messages(result)
    products = 2 * b * h * n * m * (2 * d - 1)
    assert plain(result.flops.total) == plain(products + b * h * n * m + b * h * n * m)
    assert {a.element.name for r in result.regions for a in _accesses(r.region.body)} >= {"float16"}


def _accesses(body: tuple[Node, ...]) -> list[Access]:
    found: list[Access] = []
    for node in body:
        if isinstance(node, Loop):
            found += _accesses(node.body)
        elif isinstance(node, Statement):
            found += node.accesses
    return found


def test_dim_and_keepdim() -> None:
    result = one(
        'def f(x: Float32[torch.Tensor, "n d"]):\n'
        "    return x - x.mean(dim=-1, keepdim=True) + torch.sum(x, dim=1, keepdim=True)\n"
    )
    # mean: n(d - 1) adds + n div; sum: n(d - 1); two elementwise ops of n*d
    assert plain(result.flops.total) == plain(2 * n * (d - 1) + n + 2 * n * d)


def test_cat_takes_dim() -> None:
    result = one(
        'def f(x: Float32[torch.Tensor, "n d"], y: Float32[torch.Tensor, "n d"]):\n'
        "    return torch.cat((x, y), dim=1)\n"
    )
    assert not messages(result)
    assert plain(result.traffic["compulsory"].total(False)) == plain(16 * n * d)


def test_default_dtypes_follow_the_framework() -> None:
    source = "import torch\n\n\ndef f(x):\n    return x.sum()\n"
    bytes_of = {
        "torch": analyzed(source),
        "float64 set": analyzed(
            source.replace("\n\n\n", "\ntorch.set_default_dtype(torch.float64)\n\n\n")
        ),
        "setting": analyzed(source, python_dtype="float16"),
    }
    widths = {k: plain(v["f"].traffic["compulsory"].total(False)) for k, v in bytes_of.items()}
    x = sympy.Symbol("x_d0", positive=True, integer=True)
    assert widths == {"torch": 4 * x + 4, "float64 set": 8 * x + 8, "setting": 2 * x + 2}


def test_jit_sgemm_beside_numpy_runs_in_tf32(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 29: a float32 matmul under `@jax.jit` beside `import numpy as np` was placed on
    the FP32 CUDA-core roof (16.4 ms where an H100 ran it in TF32 in 2.8 ms)."""
    fixture = Path(__file__).parent.parent / "fixtures" / "python" / "frameworks_jax.py"
    argv = ["analyze", str(fixture), "--format", "json", "--no-cache", "--device", "h100"]
    assert main([*argv, "--size", "a_d0=8192,b_d0=8192,b_d1=8192"]) == 0
    report = json.loads(capsys.readouterr().out)
    functions = {f["name"]: f for f in report["files"][0]["functions"]}
    placed = functions["sgemm"]["nests"][0]["placement"][0]
    assert placed["precision"] == "tf32"
    assert "BLAS contraction" in str(placed["roof"])
    host = functions["host_sum"]["nests"][0]["placement"][0]
    assert host["precision"] == "fp64"


MEASURED = Path(__file__).parent.parent / "fixtures" / "python" / "frameworks_torch.measured.toml"


@pytest.mark.parametrize(
    "name", ["mlp", "attention", "layernorm", "fused_attention", "fused_layernorm"]
)
def test_against_what_pytorch_measured(name: str) -> None:
    """aiscan against PyTorch itself (`scripts/count_torch.py`, stored): the contractions'
    `2*m*k*n` figures equal FlopCounterMode's, and the eager bytes are within 1% of the
    bytes every ATen operator read and wrote. The differences, each known: `mlp`'s and
    `layernorm`'s bias and gain are never indexed, so taken as scalars where PyTorch reads
    (d,) vectors; fused attention and layer_norm also write their row statistics (logsumexp,
    mean, rstd) for a backward pass; the hand-written mean is a sum and a divide."""
    import tomllib

    measured = tomllib.loads(MEASURED.read_text())["functions"][name]
    fixture = MEASURED.with_name("frameworks_torch.py")
    result = analyzed(fixture.read_text())[name]
    sizes = {s: measured["sizes"][s.name] for s in result.flops.total.free_symbols}
    quoted = sum((v for r in result.regions for k, v in r.region.conventions if k != ""), 0)
    if measured["flop_counter"]:  # FlopCounterMode does not count the CPU flash kernel
        assert sympy.sympify(quoted).subs(sizes) == measured["flop_counter"]
    eager = result.traffic["eager"].total(False)
    eager_sizes = {s: measured["sizes"][s.name] for s in eager.free_symbols}
    ratio = float(eager.subs(eager_sizes)) / measured["eager_bytes"]
    assert 0.99 <= ratio <= 1.0, (name, ratio)


def test_a_compiled_function_runs_in_its_framework() -> None:
    """`@torch.compile` beside NumPy: PyTorch's float32 and the jit view; the NumPy
    function beside it keeps float64 and the eager view."""
    source = (
        "import numpy as np\nimport torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum()\n"
        "\n\ndef g(y):\n    return np.sum(y)\n"
    )
    module = lower_source(source, "k.py", PipelineOptions())
    by_name = {f.name: f for f in module.functions}
    widths = {
        name: {a.element.width_bytes for r in f.regions for a in _accesses(r.body)}
        for name, f in by_name.items()
    }
    assert widths == {"f": {4}, "g": {8}}
    assert by_name["f"].regions[0].view == "jit"
    assert by_name["g"].regions[0].view == "eager"


def test_numpy_typing_beside_jax_is_no_numpy_use() -> None:
    """The GPU reference set's form: `import jax.numpy as np`, `import numpy.typing as npt`
    beside it: annotations name no array library, so JAX's rules apply."""
    source = (
        "import jax\nimport jax.numpy as np\nimport numpy.typing as npt\n\n\n"
        "def f(x: npt.NDArray[np.float64]):\n    return np.sum(x)\n"
    )
    module = lower_source(source, "k.py", PipelineOptions())
    (function,) = module.functions
    assert {a.element.width_bytes for r in function.regions for a in _accesses(r.body)} == {4}


def test_causal_mask_spelled_with_triu_and_masked_fill() -> None:
    """`torch.triu(ones, diagonal=1)` is a masked copy (0 FLOPs), as NumPy's `triu`."""
    result = one(
        'def f(s: Float32[torch.Tensor, "n n"], ones: Float32[torch.Tensor, "n n"]):\n'
        "    mask = torch.triu(ones, diagonal=1)\n"
        "    return torch.softmax(s.masked_fill(mask > 0.5, -1e9), dim=-1)\n"
    )
    assert not messages(result)
    assert plain(result.flops.total) == plain(n * (3 * n - 1))


def test_untyped_tensor_evidence_from_framework_calls() -> None:
    """`b, n = x.size()` names extents as `.shape` does; an operator's input is a tensor
    (never a scalar); attention's keys keep their own length (cross-attention)."""
    functions = analyzed(
        "import torch\nimport torch.nn.functional as F\n\n\n"
        "def f(x):\n    n, d = x.size()\n    return F.gelu(x).sum() + n\n\n\n"
        "def g(x):\n    return F.relu(x)\n\n\n"
        "def h(q, k, v):\n    b, n, d = q.shape\n"
        "    return F.scaled_dot_product_attention(q, k, v)\n"
    )
    assert plain(functions["f"].flops.total) == plain(4 * n * d + n * d - 1 + 1)
    assert plain(functions["g"].traffic["eager"].total(False)) != 0
    keys = {s.name for s in functions["h"].flops.total.free_symbols}
    assert keys == {"b", "n", "d", "k_d1", "v_d2"}


def test_attention_mask_is_read_once_and_added() -> None:
    result = one(
        'def f(q: Float32[torch.Tensor, "b h n d"], k: Float32[torch.Tensor, "b h m d"], '
        'v: Float32[torch.Tensor, "b h m d"], bias: Float32[torch.Tensor, "n m"]):\n'
        "    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)\n"
    )
    pairs = b * h * n * m
    expected = pairs * (2 * d - 1) + 4 * pairs + b * h * n * (m - 1) + b * h * n * d * (2 * m - 1)
    assert plain(result.flops.total) == plain(expected)  # one add per pair for the mask
    qkvo = 4 * b * h * d * (2 * n + 2 * m)
    assert plain(result.traffic["eager"].total(False)) == plain(qkvo + 4 * n * m)


MODULE = """import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.act = nn.GELU(approximate="tanh")
        self.fc2 = nn.Linear(hidden, d, bias=False)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        n, _ = x.shape
        h = self.act(self.fc1(self.norm(x)))
        return x + self.drop(self.fc2(h))
"""


def test_an_nn_module_counts_its_layers() -> None:
    """`__init__` builds the layers, sizes named as its arguments; `forward` calls them:
    layer_norm (8d + 1 per row), fc1 (n*hidden*(2d - 1) + the bias), gelu (8 per
    element), fc2 without bias (n*d*(2*hidden - 1)), the residual add. Each parameter
    (weights (out, in), biases and the norm's (d,)) is read once."""
    functions = analyzed(MODULE)
    forward = functions["Block.forward"]
    hidden = sympy.Symbol("hidden", positive=True, integer=True)
    expected = (
        n * (8 * d + 1)
        + n * hidden * (2 * d - 1)
        + n * hidden
        + 8 * n * hidden
        + n * d * (2 * hidden - 1)
        + n * d
    )
    assert plain(forward.flops.total) == plain(expected)
    parameters = 4 * (2 * d * hidden + hidden + 2 * d)
    assert plain(forward.traffic["jit"].total(False)) == plain(parameters + 8 * n * d)
    kinds = [u.kind.value for u in forward.unknowns]
    assert kinds == ["assumption", "assumption"]  # x's shape, and dropout as in evaluation
    assert not functions["Block.__init__"].unknowns
