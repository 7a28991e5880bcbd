"""Losses and a model's head as PyTorch runs them (issue 29): `F.cross_entropy` as
log_softmax then nll_loss, `F.nll_loss`, indexing by a list (`x[:, [-1], :]`), and an
`if labels is not None:` whose sides' eager calls and quoted figures are each weighted by
their share; compared with what PyTorch itself did (`scripts/count_torch.py`, stored in
`torch_losses.measured.toml`)."""

from __future__ import annotations

import pytest
from measured_fixtures import PYTHON_FIXTURES, analyze_fixture, analyze_source, measured, value_at

from aiscan.analysis.kernel import FunctionAnalysis

FIXTURE = PYTHON_FIXTURES / "torch_losses.py"
MEASURED = measured(FIXTURE)


@pytest.fixture(scope="module")
def functions() -> dict[str, FunctionAnalysis]:
    return analyze_fixture(FIXTURE)


def _unread(name: str, sizes: dict[str, int]) -> int:
    """What the dispatch logger counts that the kernels do not move: it counts every
    operand whole, so nll_loss's log-probabilities (not the entries picked, one a row) and
    `index`'s tensor (not the rows selected) and its int64 index; nll_loss also writes its
    total weight, native_layer_norm its mean and rstd a row."""
    if name in ("loss", "picked"):
        return 4 * sizes["rows"] * sizes["classes"] - 4 * sizes["rows"] + 4
    if name == "last":
        return 4 * sizes["b"] * sizes["t"] * sizes["d"] - 4 * sizes["b"] * sizes["d"] + 8
    rows = sizes["x_d0"] * sizes["x_d1"]
    norm = 2 * 4 * rows
    if name == "Head_labels":
        return norm + 4 * rows * sizes["vocab"] - 4 * rows + 4
    return norm + 4 * rows * sizes["width"] - 4 * sizes["x_d0"] * sizes["width"] + 8


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_against_pytorch(functions: dict[str, FunctionAnalysis], name: str) -> None:
    """The head's quoted `2*m*k*n` at its share (p_L34 = 1 with labels, 0 without) is
    FlopCounterMode's figure; eager bytes differ from the logger's by what it counts and
    the kernels do not move, exactly."""
    measured = MEASURED[name]
    sizes = measured["sizes"]
    function = functions["Head.forward" if name.startswith("Head") else name]
    assert not any("not counted" in u.message for u in function.unknowns)
    quoted = [e for r in function.regions for n, e in r.region.conventions if "*" in n]
    assert sum(value_at(e, sizes) for e in quoted) == measured["flop_counter"]
    eager = value_at(function.traffic["eager"].total(False), sizes)
    assert measured["eager_bytes"] - eager == _unread(name, sizes)


def test_cross_entropy_counts_at_sizes(functions: dict[str, FunctionAnalysis]) -> None:
    """64 rows of 96 classes: log_softmax 64 * (3*96 - 1), 63 adds and one divide; 64*96
    exps and 64 logs apart."""
    sizes = MEASURED["loss"]["sizes"]
    loss = functions["loss"]
    assert value_at(loss.flops.total, sizes) == 64 * 287 + 63 + 1 == 18432
    assert value_at(loss.flops.special, sizes) == 64 * 96 + 64


@pytest.mark.parametrize(
    ("index", "why"),
    [
        ("[1, 0]", "not evenly spaced"),
        ("[-1, 0]", "not evenly spaced"),
        ("[0], [1]", "several list indices"),
        ("[n]", "other than integer literals"),
    ],
)
def test_a_list_index_that_is_no_slice_is_a_located_unknown(index: str, why: str) -> None:
    source = (
        "import torch\n\n\ndef f(x, n: int):\n    a, b, c = x.shape\n"
        f"    return x[:, {index}] * 2.0\n"
    )
    found = analyze_source(source)["f"]
    (unknown,) = [u for u in found.unknowns if why in u.message]
    assert (unknown.span.line, unknown.kind.value) == (6, "unsupported")


def test_a_list_of_evenly_spaced_integers_is_a_strided_copy() -> None:
    """`x[:, [0, 2, 4]]`: the rows `0:5:2` copied (3 per row of x), then doubled."""
    source = "import torch\n\n\ndef f(x):\n    a, b = x.shape\n    return x[:, [0, 2, 4]] * 2.0\n"
    found = analyze_source(source)["f"]
    assert value_at(found.flops.total, {"a": 10, "b": 8}) == 30
    assert value_at(found.traffic["eager"].total(False), {"a": 10, "b": 8}) == 4 * (
        30 + 30 + 30 + 30
    )
