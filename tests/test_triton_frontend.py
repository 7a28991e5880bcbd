"""Triton kernels and their launches (fixtures/triton): aiscan's per-launch figures against
the expected values beside each fixture and against the counts Triton's CPU interpreter
measured (`scripts/count_triton.py`, stored as `<fixture>.counts.json`; triton is not
needed here)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest
import sympy

from aiscan.analysis.kernel import RegionAnalysis, analyze_module
from aiscan.cli import main
from aiscan.ir.nodes import UnknownKind
from aiscan.pipeline import PipelineOptions, lower_source

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "triton"
SCHEMA = ROOT / "aiscan" / "report" / "schema" / "report.schema.json"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.py"))


def _launch(name: str) -> RegionAnalysis:
    path = FIXTURES / f"{name}.py"
    module = lower_source(path.read_text(), str(path), PipelineOptions())
    analysis = analyze_module(module)
    (launch,) = [f for f in analysis.functions if "launched in" in f.function.name]
    (region,) = launch.regions
    return region


def _at(expr: sympy.Expr, sizes: dict[str, int]) -> int:
    value = sympy.sympify(expr).subs(
        {sympy.Symbol(k, integer=True, positive=True): v for k, v in sizes.items()}
    )
    assert not value.free_symbols, (expr, sizes)
    return int(value)


@pytest.mark.parametrize("name", NAMES)
def test_expected_values(name: str) -> None:
    want = tomllib.loads((FIXTURES / f"{name}.expected.toml").read_text())
    region = _launch(name)
    figures = {
        "flops": region.flops.total,
        "useful_flops": region.useful_flops.total if region.useful_flops else None,
        "contraction_flops": region.contraction_flops,
        "compulsory": region.traffic["compulsory"].total(False),
        "l2_to_sm": region.traffic["streaming"].total(False),
    }
    for key, text in want.items():
        found = sympy.sympify(figures[key])
        expected = sympy.sympify(text, locals={s.name: s for s in found.free_symbols})
        assert sympy.simplify(found - expected) == 0, (key, found)
    assert region.traffic["compulsory"].exact
    assert not [u for u in region.unknowns if u.kind is not UnknownKind.ASSUMPTION], region.unknowns


@pytest.mark.parametrize("name", NAMES)
def test_counts_match_the_interpreter(name: str) -> None:
    measured = json.loads((FIXTURES / f"{name}.counts.json").read_text())["launches"]
    region = _launch(name)
    flops, traffic = region.flops, region.traffic
    half_dot = sympy.sympify(region.contraction_flops) / 2
    for row in measured:
        sizes = row["sizes"]
        assert _at(region.contraction_flops, sizes) == row["flops_dot"], sizes
        assert _at(flops.add - half_dot, sizes) == row["flops_add"], sizes
        assert _at(flops.mul - half_dot, sizes) == row["flops_mul"], sizes
        assert _at(flops.sub, sizes) == row["flops_sub"], sizes
        assert _at(flops.div, sizes) == row["flops_div"], sizes
        assert _at(flops.special, sizes) == row["flops_special"], sizes
        assert _at(traffic["compulsory"].read_bytes, sizes) == row["compulsory_read_bytes"], sizes
        assert _at(traffic["compulsory"].write_bytes, sizes) == row["compulsory_write_bytes"], sizes
        assert _at(traffic["streaming"].read_bytes, sizes) == row["bytes_loaded"], sizes
        assert _at(traffic["streaming"].write_bytes, sizes) == row["bytes_stored"], sizes


def test_kernels_leave_the_python_frontend() -> None:
    """The kernel is no longer read as NumPy code (0 FLOPs, `tl.load` unknown), and the
    wrapper's launch line is the Triton frontend's."""
    path = FIXTURES / "vector_add.py"
    module = lower_source(path.read_text(), str(path), PipelineOptions())
    names = [f.name for f in module.functions]
    assert "add_kernel" not in names
    assert "add_kernel (launched in add, line 22)" in names
    wrapper = next(f for f in module.functions if f.name == "add")
    assert all(u.span.line != 22 for u in wrapper.unknowns)


def test_unknown_call_is_located_not_zero() -> None:
    source = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    tl.store(x_ptr + offs, tl.cumsum(x, 0), mask=offs < n)\n"
    )
    module = lower_source(source, "k.py", PipelineOptions())
    (kernel,) = module.functions
    analysis = analyze_module(module)
    (region,) = analysis.functions[0].regions
    calls = [u for u in region.unknowns if u.kind is UnknownKind.UNKNOWN_CALL]
    assert [(u.span.line, u.span.column) for u in calls] == [(9, 28)]
    assert "tl.cumsum" in calls[0].message
    # Without a launch the grid is a symbol per axis, the block a symbol of its own name.
    assert {str(s) for s in region.flops.total.free_symbols} <= {"grid0", "BLOCK"}
    assert kernel.unknowns[0].kind is UnknownKind.ASSUMPTION


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_analyze_places_a_launch_on_the_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    """`aiscan analyze kernels.py --device h100` as a new user runs it: the vector add's
    figures at a ragged n, placed with its compulsory bytes on the CUDA-core roof."""
    path = FIXTURES / "vector_add.py"
    code, out = run(capsys, "analyze", str(path), "--device", "h100", "--size", "n=1000000")
    assert code == 0
    assert "FLOPs       1024*ceiling(n/1024) = 1,000,448   [add 1024*ceiling(n/1024)]" in out
    assert "useful      n = 1,000,000" in out
    assert "L2 → SM     12*n = 12,000,000" in out
    assert "compulsory 12*n = 12,000,000   read 8*n, write 4*n" in out
    assert "h100-sxm fp32: ridge 10 F/B, memory-bound" in out
    assert "roof FP32 CUDA cores (loop code); compulsory bytes 12*n" in out
    assert "unknown function `tl." not in out


def test_matmul_on_the_fp16_tensor_core_roof(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "matmul.py"
    sizes = "M=4096,N=4096,K=4096"
    code, out = run(capsys, "analyze", str(path), "--device", "h100", "--size", sizes)
    assert code == 0
    assert "h100-sxm fp16: ridge 295.3 F/B, compute-bound, attainable 989.4 TFLOP/s" in out
    assert "roof FP16 tensor core" in out
    assert "T_math 139 µs, T_comms 30 µs" in out


def test_json_report_carries_the_launch_figures(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "matmul.py"
    code, out = run(capsys, "analyze", str(path), "--format", "json", "--size", "M=100,N=70,K=50")
    assert code == 0
    report = json.loads(out)
    jsonschema.validate(report, json.loads(SCHEMA.read_text()))
    (launch,) = [f for f in report["files"][0]["functions"] if "launched" in f["name"]]
    figures = launch["nests"][0]["gpu_launch"]
    assert figures["useful_flops"] == "2*K*M*N"
    assert figures["useful_flops_value"] == 700000
    assert figures["l2_to_sm_bytes_value"] == 34000 + 14000  # the interpreter's loads, stores
    assert figures["placement_flops"] == "executed"


def test_hover_on_a_kernel_shows_the_launch_and_its_verdict() -> None:
    from aiscan.lsp.hover import hover_markdown
    from aiscan.roofline.devices import load_devices

    region = _launch("matmul")
    h100 = load_devices().get("h100")
    text = hover_markdown(region, (h100,), {"M": 4096, "N": 4096, "K": 4096}, False)
    assert text.startswith("**aiscan: GPU launch, lines 15-47** (fp16)")
    assert "- useful FLOPs (masked-in lanes): `2*K*M*N`" in text
    assert "compute-bound" in text and "FP16 tensor core" in text


KERNEL_HEAD = (
    "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
    "def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
)


@pytest.mark.parametrize(
    ("body", "kind", "column", "words"),
    [
        ("    for i in range():\n        pass\n", UnknownKind.UNSUPPORTED, 5, "loop bounds"),
        ("    for i in range(n, 0, -1):\n        pass\n", UnknownKind.UNSUPPORTED, 5, "step"),
        ("    if n > 0:\n        tl.store(x_ptr, 1.0)\n", UnknownKind.UNSUPPORTED, 5, "`if`"),
        (
            "    offs = tl.arange(0, BLOCK)\n"
            "    x = tl.load(x_ptr + offs, mask=tl.load(y_ptr + offs) > 0)\n",
            UnknownKind.BRANCH_FRACTION,
            (8, 9),
            "fraction of lanes",
        ),
        ("    x = tl.load(x_ptr + n // 2)\n", UnknownKind.NON_AFFINE_INDEX, 9, "not affine"),
        (
            "    x = tl.load(x_ptr + tl.arange(0, 16)) + tl.load(y_ptr + tl.arange(0, 8))\n",
            UnknownKind.UNKNOWN_SHAPE,
            9,
            "(16,) and (8,) do not broadcast",
        ),
    ],
)
def test_what_is_not_understood_is_located(
    body: str, kind: UnknownKind, column: int | tuple[int, int], words: str
) -> None:
    """Each construct the kernel lowering does not read is an unknown on its line (7, the
    kernel's first, unless given), never a crash or a silent zero."""
    module = lower_source(KERNEL_HEAD + body, "k.py", PipelineOptions())
    (region,) = analyze_module(module).functions[0].regions
    found = [u for u in region.unknowns if u.kind is kind]
    assert found, region.unknowns
    where = column if isinstance(column, tuple) else (7, column)
    assert (found[0].span.line, found[0].span.column) == where
    assert words in found[0].message


def test_reduction_combines_and_broadcast_axes() -> None:
    """`tl.sum` over a (BLOCK, BLOCK) block is BLOCK**2 - 1 adds (rows, then the row sums);
    `offs[:, None] * stride + offs[None, :]` addresses a BLOCK x BLOCK tile once."""
    body = (
        "    offs = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs[:, None] * n + offs[None, :])\n"
        "    tl.store(y_ptr + tl.program_id(0), tl.sum(x))\n"
    )
    module = lower_source(KERNEL_HEAD + body, "k.py", PipelineOptions())
    (region,) = analyze_module(module).functions[0].regions
    grid0, block = sympy.symbols("grid0 BLOCK", integer=True, positive=True)
    assert sympy.expand(region.flops.add - grid0 * (block**2 - 1)) == 0
    compulsory = region.traffic["compulsory"]
    assert compulsory.read_bytes == 4 * block**2  # every program reads the same tile
    assert sympy.expand(compulsory.write_bytes - 4 * grid0) == 0


def test_useful_flops_behind_a_data_mask_are_a_named_fraction() -> None:
    """A mask computed from data (`offs % 2 == 0` is not affine) keeps an unknown share of
    the lanes: the useful FLOPs carry a named fraction, said on the arithmetic's line,
    instead of counting every lane as useful."""
    body = (
        "    offs = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs % 2 == 0)\n"
        "    tl.store(y_ptr + offs, x * x)\n"
    )
    module = lower_source(KERNEL_HEAD + body, "k.py", PipelineOptions())
    (region,) = analyze_module(module).functions[0].regions
    block = sympy.Symbol("BLOCK", integer=True, positive=True)
    assert region.flops.total == block
    assert region.useful_flops is not None
    assert str(region.useful_flops.total) == "BLOCK*p_L9"
    fractions = [u for u in region.unknowns if u.kind is UnknownKind.BRANCH_FRACTION]
    assert [(u.span.line, u.symbol) for u in fractions] == [(8, "p_L8"), (9, "p_L9")]
    assert "lanes of `x * x` whose inputs are masked in" in fractions[1].message
