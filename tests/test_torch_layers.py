"""Convolutions as PyTorch runs them (issue 29): `F.conv1d`/`F.conv2d` with stride,
padding and groups, and `nn.Conv1d`/`nn.Conv2d` built in `__init__` and called in
`forward`, one eager kernel each; `nn.Sequential` called as `self.net(x)`, its layers in
order; compared with what PyTorch itself did
(`scripts/count_torch.py`, stored in `torch_layers.measured.toml`)."""

from __future__ import annotations

import pytest
from measured_fixtures import PYTHON_FIXTURES, analyze_fixture, analyze_source, measured, value_at

from aiscan.analysis.kernel import FunctionAnalysis

FIXTURE = PYTHON_FIXTURES / "torch_layers.py"
MEASURED = measured(FIXTURE)


@pytest.fixture(scope="module")
def functions() -> dict[str, FunctionAnalysis]:
    return analyze_fixture(FIXTURE)


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_against_pytorch(functions: dict[str, FunctionAnalysis], name: str) -> None:
    """The quoted `2*N*C_out*L_out*K` (`2*m*k*n` of Feed's two linears) is FlopCounterMode's
    figure, and the one kernel's
    eager bytes (x, w and the bias read, y written) are the dispatch logger's, exactly
    (group_norm's less its mean and rstd)."""
    measured = MEASURED[name]
    sizes = measured["sizes"]
    function = functions[f"{name}.forward" if name[0].isupper() else name]
    assert not any("not counted" in u.message for u in function.unknowns)
    quoted = [e for r in function.regions for _, e in r.region.conventions]
    assert sum(value_at(e, sizes) for e in quoted) == measured["flop_counter"]
    eager = value_at(function.traffic["eager"].total(False), sizes)
    assert measured["eager_bytes"] - eager == _UNREAD.get(name, 0)


_UNREAD = {"grouped": 2 * 4 * 2 * 4, "Groups": 2 * 2 * 2 * 4}
"""What the logger counts that the kernel's result does not hold: `native_group_norm` also
writes its mean and rstd, one float32 each per (sample, group)."""


def test_exact_counts_at_sizes(functions: dict[str, FunctionAnalysis]) -> None:
    """conv1: 17 outputs a row ((33 + 2 - 3) // 2 + 1), each 24 mul, 23 adds and the bias's
    add; conv2 (no bias, 2 groups of 4 channels): 10 x 9 outputs, 36 mul and 35 adds."""
    conv1 = functions["conv1"]
    at = MEASURED["conv1"]["sizes"]
    assert value_at(conv1.flops.total, at) == 2 * 16 * 17 * (24 + 23 + 1) == 26112
    conv2 = functions["conv2"]
    at = MEASURED["conv2"]["sizes"]
    assert value_at(conv2.flops.total, at) == 2 * 16 * 10 * 9 * (36 + 35) == 204480


def test_an_extent_that_does_not_divide_is_kept_with_floor() -> None:
    """Stride 2 over a length of 33 with k = 4: `floor((L - 4)/2) + 1` = 15 outputs."""
    source = (
        "import torch.nn.functional as F\n\n\ndef f(x, w):\n    n, c, l = x.shape\n"
        "    o, c2, k = w.shape\n    return F.conv1d(x, w, stride=2)\n"
    )
    found = analyze_source(source)["f"]
    sizes = {"n": 1, "c": 2, "l": 33, "o": 1, "c2": 2, "k": 4}
    assert "floor" in str(found.flops.total)
    assert value_at(found.flops.total, sizes) == 15 * (8 + 7)


@pytest.mark.parametrize(
    ("option", "why"),
    [("dilation=2", "dilation"), ("stride=0", "not positive"), ("padding='same'", "not a size")],
)
def test_what_is_not_modeled_is_a_located_unknown(option: str, why: str) -> None:
    source = (
        "import torch.nn.functional as F\n\n\ndef f(x, w):\n    n, c, l = x.shape\n"
        f"    o, c2, k = w.shape\n    return F.conv1d(x, w, {option})\n"
    )
    found = analyze_source(source)["f"]
    (unknown,) = [u for u in found.unknowns if why in u.message]
    assert (unknown.span.line, unknown.kind.value) == (7, "unsupported")


def test_sequential_applies_its_layers_in_order(functions: dict[str, FunctionAnalysis]) -> None:
    """`Linear(16, 64)`, `GELU()`, `Linear(64, 16)` on (2, 33, 16): each linear `2*m*k*n`
    with its bias, the erf gelu 4 an element (+ 1 erf); three kernels, the parameters
    named as PyTorch names them."""
    feed = functions["Feed.forward"]
    sizes = MEASURED["Feed"]["sizes"]
    rows = 2 * 33
    assert value_at(feed.flops.total, sizes) == 2 * (2 * rows * 16 * 64) + 4 * rows * 64
    assert value_at(feed.flops.special, sizes) == rows * 64
    assert not feed.unknowns[1:]


def test_a_user_module_in_sequential_is_a_located_unknown() -> None:
    source = (
        "import torch.nn as nn\n\n\nclass Mine(nn.Module):\n    pass\n\n\n"
        "class M(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
        "        self.net = nn.Sequential(nn.ReLU(), Mine())\n"
    )
    found = analyze_source(source)["M.__init__"]
    (unknown,) = [u for u in found.unknowns if "nn.Sequential" in u.message]
    assert (unknown.span.line, unknown.kind.value) == (11, "unsupported")


def test_group_norm_is_layer_norms_count_over_each_group(
    functions: dict[str, FunctionAnalysis],
) -> None:
    """(2, 8, 10, 9) in 4 groups: 8 groups of 2 * 90 = 180 elements, `8n + 1` each (the
    weight and bias per channel) and one rsqrt; `GroupNorm(2, 16)` on (2, 16, 33): 4 groups
    of 264."""
    grouped = functions["grouped"]
    at = MEASURED["grouped"]["sizes"]
    assert value_at(grouped.flops.total, at) == 8 * (8 * 180 + 1) == 11528
    assert value_at(grouped.flops.special, at) == 8
    groups = functions["Groups.forward"]
    at = MEASURED["Groups"]["sizes"]
    assert value_at(groups.flops.total, at) == 4 * (8 * 264 + 1)


def test_a_helper_of_the_file_named_conv2d_says_nothing_of_ranks() -> None:
    """Only `F.conv2d` gives its operands four axes: a NumPy helper `conv2d(image, w)` of
    the file does not (an `(h, w, c)` image would be taken as 4-D)."""
    source = (
        "import numpy as np\n\n\ndef conv2d(image, filters):\n    return image\n\n\n"
        "def run(image, w):\n    return conv2d(image, w) * 2.0\n"
    )
    found = analyze_source(source)["run"]
    assert not any("image_d3" in u.message or "w_d3" in u.message for u in found.unknowns)
    assert any("`image`" in u.message and "scalar" in u.message for u in found.unknowns)
