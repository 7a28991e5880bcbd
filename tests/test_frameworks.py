"""Framework rules read from the imports: JAX x64 and TF32, PyTorch and CuPy TF32, jit view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aiscan.cli import main
from aiscan.frontends.python import lower_python_source
from aiscan.ir.nodes import Loop, Module, Node, Statement

JAX_GEMM = """import jax
import jax.numpy as jnp
from jaxtyping import Float64
{extra}

def gemm(A: Float64[jax.Array, "n n"], B: Float64[jax.Array, "n n"]):
    return A @ B
"""


def widths(module: Module) -> set[int]:
    found: set[int] = set()

    def walk(body: tuple[Node, ...]) -> None:
        for node in body:
            if isinstance(node, Loop):
                walk(node.body)
            elif isinstance(node, Statement):
                found.update(a.element.width_bytes for a in node.accesses)

    for function in module.functions:
        for region in function.regions:
            walk(region.body)
    return found


def notes(module: Module) -> list[tuple[int, str]]:
    return [(d.span.line, d.message) for d in module.diagnostics]


def test_jax_without_x64_computes_float64_as_float32() -> None:
    module = lower_python_source(JAX_GEMM.format(extra=""), "k.py")
    assert widths(module) == {4}
    assert (1, "JAX defaults: float64 computed as float32 (x64 off)") in notes(module)


@pytest.mark.parametrize(
    "extra",
    [
        'jax.config.update("jax_enable_x64", True)',
        'import os\nos.environ["JAX_ENABLE_X64"] = "1"',
    ],
)
def test_x64_enabled_in_the_module_keeps_float64(extra: str) -> None:
    module = lower_python_source(JAX_GEMM.format(extra=extra), "k.py")
    assert widths(module) == {8}
    assert any("float64 computed as float64" in text for _, text in notes(module))


def test_the_setting_overrides_the_code() -> None:
    on = JAX_GEMM.format(extra='jax.config.update("jax_enable_x64", True)')
    assert widths(lower_python_source(on, "k.py", x64=False)) == {4}
    assert widths(lower_python_source(JAX_GEMM.format(extra=""), "k.py", x64=True)) == {8}


def test_numpy_beside_jax_decides_the_framework_per_function() -> None:
    """`import numpy as np` beside JAX (how JAX code is written) no longer turns the rules
    off: a function on `jax.Array`s runs in JAX (float64 as float32), one calling `np.*`
    in NumPy (float64 kept)."""
    source = (
        "import numpy as np\n"
        + JAX_GEMM.format(extra="")
        + ('\n\ndef host(A: Float64[np.ndarray, "n n"]):\n    return np.sum(A)\n')
    )
    module = lower_python_source(source, "k.py")
    by_name = {f.name: f for f in module.functions}
    assert widths(Module("k.py", "python", (by_name["gemm"],))) == {4}
    assert widths(Module("k.py", "python", (by_name["host"],))) == {8}
    assert any("jax: gemm; numpy: host" in text for _, text in notes(module))


def test_an_undecided_function_gets_no_framework_rule() -> None:
    source = "import numpy as np\n" + JAX_GEMM.replace("jax.Array", "Array").format(extra="")
    module = lower_python_source(source, "k.py")
    assert widths(module) == {8}
    assert any("none decided" in text for _, text in notes(module))


def run_json(capsys: pytest.CaptureFixture[str], path: Path, *argv: str) -> dict[str, object]:
    assert main(["analyze", str(path), "--format", "json", "--no-cache", *argv]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def placement(report: dict[str, object]) -> dict[str, object]:
    files = report["files"]
    assert isinstance(files, list)
    return files[0]["functions"][0]["nests"][0]["placement"][0]  # type: ignore[no-any-return]


F32_GEMM = """{imports}
from jaxtyping import Float32
{extra}

def gemm(A: Float32[Array, "n n"], B: Float32[Array, "n n"]):
    return {call}
"""


@pytest.mark.parametrize(
    ("imports", "extra", "call", "roof"),
    [
        ("import jax\nfrom jax import Array", "", "A @ B", "tf32"),
        ("import jax\nfrom jax import Array", "", "jax.numpy.matmul(A, B, precision='highest')",
         "fp32"),
        ("import jax\nfrom jax import Array",
         'jax.config.update("jax_default_matmul_precision", "float32")', "A @ B", "fp32"),
        ("import torch\nfrom torch import Tensor as Array", "", "A @ B", "fp32"),
        ("import torch\nfrom torch import Tensor as Array",
         "torch.backends.cuda.matmul.allow_tf32 = True", "A @ B", "tf32"),
        ("import torch\nfrom torch import Tensor as Array",
         'torch.set_float32_matmul_precision("high")', "A @ B", "tf32"),
        ("import cupy\nfrom cupy import ndarray as Array", "", "A @ B", "fp32"),
        ("import os\nimport cupy\nfrom cupy import ndarray as Array",
         'os.environ["CUPY_TF32"] = "1"', "A @ B", "tf32"),
    ],
)  # fmt: skip
def test_fp32_contractions_follow_the_framework(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    imports: str,
    extra: str,
    call: str,
    roof: str,
) -> None:
    path = tmp_path / "k.py"
    path.write_text(F32_GEMM.format(imports=imports, extra=extra, call=call))
    placed = placement(run_json(capsys, path, "--device", "h100", "--size", "n=4096"))
    assert placed["precision"] == roof
    assert "BLAS contraction" in str(placed["roof"])


def test_jit_function_is_placed_with_the_jit_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "k.py"
    path.write_text(
        "import jax\nfrom jax import Array\nfrom jaxtyping import Float32\n\n"
        '@jax.jit\ndef axpy(a: Float32[Array, "n"], b: Float32[Array, "n"]):\n'
        "    return a + 2.0 * b\n\n\n"
        'def eager(a: Float32[Array, "n"], b: Float32[Array, "n"]):\n'
        "    return a + 2.0 * b\n"
    )
    report = run_json(capsys, path, "--device", "h100", "--size", "n=1000")
    files = report["files"]
    assert isinstance(files, list)
    jit, eager = (f["nests"][0]["placement"][0] for f in files[0]["functions"])
    assert jit["traffic_view"] in ("jit", "compulsory") and jit["bytes"] == "12*n"
    assert eager["traffic_view"] == "eager" and eager["bytes"] == "20*n"
    diagnostics = files[0]["diagnostics"]
    assert any("compiled (jit view): axpy" in d["message"] and d["line"] == 1 for d in diagnostics)
