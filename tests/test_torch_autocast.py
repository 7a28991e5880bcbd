"""`torch.autocast` regions (issue 29): the contractions in them run, and are placed, in the
region's dtype. Counts per function are in fixtures/python/torch_autocast.expected.toml
(worked by hand); here: the precision and roof they are placed on, layers, and what aiscan
cannot read, each said on its line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.cli import main
from aiscan.pipeline import PipelineOptions, lower_source

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "python" / "torch_autocast.py"
n, d = sympy.symbols("n d", positive=True, integer=True)


def analyzed(source: str) -> dict[str, FunctionAnalysis]:
    module = lower_source(source, "k.py", PipelineOptions())
    return {f.function.name: f for f in analyze_module(module, AnalysisOptions()).functions}


def plain(expression: sympy.Expr) -> sympy.Expr:
    names = {s: sympy.Symbol(s.name, positive=True, integer=True) for s in expression.free_symbols}
    return sympy.expand(expression.subs(names))


def test_each_region_has_the_precision_its_contractions_run_in() -> None:
    found = analyzed(FIXTURE.read_text())
    precisions = {name: f.precision for name, f in found.items()}
    assert precisions == {
        "matmul_bf16": "bf16",
        "matmul_cast": "bf16",
        "matmul_float64": "fp64",
        "matmul_disabled": "fp32",
        "linear_fp16": "fp16",
        "attention_bf16": "bf16",
        "attention_cpu": "bf16",
        "sdpa_fp16": "fp16",
        "layernorm_after_matmul": "bf16",
    }


def test_an_autocast_matmul_is_placed_on_the_bf16_tensor_core_roof(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before, the float32 inputs decided: FP32 CUDA cores, 82 ms at n = 4096."""
    code = main(["analyze", str(FIXTURE), "--no-cache", "--device", "h100", "--size", "n=4096"])
    out = capsys.readouterr().out
    assert code == 0
    block = out.split("function matmul_bf16")[1].split("function matmul_cast")[0]
    assert "h100-sxm bf16:" in block
    assert "roof BF16 tensor core (BLAS contraction)" in block


LAYER = """import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 4 * d, bias=False)

    def forward(self, x):
        n, _ = x.shape
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return self.fc(x)
"""


def test_a_layer_called_in_a_region_runs_in_its_dtype() -> None:
    forward = analyzed(LAYER)["MLP.forward"]
    assert forward.precision == "bf16"
    # x (n, d) and the weight (4d, d) cast (reads 4nd + 16dd, writes 2nd + 8dd), the matmul
    # reads both casts and writes (n, 4d) in bf16.
    assert plain(forward.traffic["eager"].total(False)) == 16 * d * n + 32 * d**2


REGIONS = """import torch


def helper(a, b):
    for i in range(3):
        a = a + 1.0
    return a @ b


def calls_helper(a, b):
    n, k = a.shape
    k, m = b.shape
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return helper(a, b)


def unreadable(a, b, kind):
    n, k = a.shape
    k, m = b.shape
    with torch.autocast(kind):
        return a @ b


def other_device(a, b):
    n, k = a.shape
    k, m = b.shape
    with torch.autocast("xpu"):
        return a @ b
"""


def test_what_cannot_be_read_is_said_on_its_line() -> None:
    found = analyzed(REGIONS)

    def said(name: str) -> list[tuple[str, int, str]]:
        unknowns = found[name].unknowns
        return [
            (u.kind.value, u.span.line, u.message) for u in unknowns if u.kind.value != "assumption"
        ]

    assert said("calls_helper") == [
        (
            "unsupported",
            14,
            "`helper` (summarized: it has loops or branches) runs in a torch.autocast region: "
            "its operations are counted in their own dtypes, not autocast's",
        )
    ]
    assert said("unreadable") == [
        (
            "unsupported",
            20,
            "`torch.autocast(kind)`: the device type is not a string literal: counted without "
            "autocast",
        )
    ]
    assert said("other_device")[0][2].startswith('`torch.autocast("xpu")`: autocast on `xpu`')
    assert found["unreadable"].precision == "fp32"
