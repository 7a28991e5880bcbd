"""Model code as PyTorch users write it: a configuration object's sizes, user submodules
instantiated per call, `split` into views (issue 29, measured on nanoGPT's block)."""

from __future__ import annotations

import json
from pathlib import Path

import sympy

from aiscan.cli import main

BLOCK = """import torch
import torch.nn as nn
from torch.nn import functional as F


class Norm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim))

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.n_head = config.n_head
        self.n_embd = config.n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Mlp(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = Norm(config.n_embd, bias=config.bias)
        self.attn = Attention(config)
        self.ln_2 = Norm(config.n_embd, bias=config.bias)
        self.mlp = Mlp(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x
"""


def _functions(tmp_path: Path) -> dict[str, dict[str, object]]:
    source = tmp_path / "block.py"
    source.write_text(BLOCK)
    out = tmp_path / "r.json"
    assert main(["analyze", str(source), "--format", "json", "-o", str(out), "--no-cache"]) == 0
    report = json.loads(out.read_text())
    found = report["files"][0]["functions"]
    return {f["name"]: f for f in found}


def _conventions(function: dict[str, object]) -> list[sympy.Expr]:
    nests = function["nests"]
    assert isinstance(nests, list)
    return [sympy.sympify(c) for n in nests for c in n.get("flop_conventions", [])]


def _value(expression: object, sizes: dict[str, int]) -> int:
    total = sympy.sympify(expression).subs({sympy.Symbol(k): v for k, v in sizes.items()})
    return int(total)


def test_configuration_attributes_are_sizes(tmp_path: Path) -> None:
    attention = _functions(tmp_path)["Attention.forward"]
    texts = json.dumps(attention["unknowns"])
    assert "is not a size of `Linear`" not in texts
    assert "unpacking" not in texts
    # c_attn (C -> 3C) and c_proj (C -> C) by the 2*m*k*n convention, in `config.n_embd`;
    # the causal attention quoted as 2*pairs*(E + Ev), pairs = B*n_head*T*(T + 1)/2.
    (nest,) = attention["nests"]  # type: ignore[misc]
    assert nest["flop_conventions"] == {
        "6*B*T*n_embd**2": "6*B*T*n_embd**2",
        "2*B*T*n_embd**2": "2*B*T*n_embd**2",
        "scaled_dot_product_attention": "2*B*T**2*n_embd + 2*B*T*n_embd",
    }


def test_submodules_are_instantiated_per_call(tmp_path: Path) -> None:
    """Block.forward counts what its submodules' own reports count, at the block's sizes:
    two norms and the MLP per row of `x`, the attention at (B, T), two residual adds."""
    functions = _functions(tmp_path)
    block = functions["Block.forward"]
    assert "not counted" not in json.dumps(block["unknowns"])
    b, t, c = 2, 32, 64
    row = {"ndim": c, "n_embd": c}
    norm = _value(functions["Norm.forward"]["flops"]["total"], row)  # type: ignore[index]
    mlp = _value(functions["Mlp.forward"]["flops"]["total"], row)  # type: ignore[index]
    attention = _value(
        functions["Attention.forward"]["flops"]["total"],  # type: ignore[index]
        {"B": b, "T": t, "n_embd": c, "n_head": 4},
    )
    total = _value(block["flops"]["total"], {"x_d0": b, "x_d1": t, "n_embd": c, "n_head": 4})  # type: ignore[index]
    assert norm == 8 * c + 1
    assert mlp == 2 * (4 * c) * (2 * c) + 4 * 4 * c  # c_fc, c_proj with biases; GELU (erf apart)
    assert total == b * t * (2 * norm + mlp + 2 * c) + attention
    assert total == 6709504
