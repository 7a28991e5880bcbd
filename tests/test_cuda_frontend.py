"""CUDA kernels and their launches (fixtures/cuda): aiscan's per-launch figures against
the expected values beside each fixture and against the counts of each kernel's C++ twin
(`scripts/count_cuda.py`, stored as `<fixture>.counts.json`; no compiler needed here)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest
import sympy

from aiscan.analysis.kernel import ModuleAnalysis, RegionAnalysis, analyze_module
from aiscan.cli import main
from aiscan.errors import InputError, Severity
from aiscan.ir.nodes import UnknownKind
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.sources import language_of

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "cuda"
SCHEMA = ROOT / "aiscan" / "report" / "schema" / "report.schema.json"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.cu"))


def _analysis(source: str, path: str = "k.cu", *launches: str) -> ModuleAnalysis:
    module = lower_source(source, path, PipelineOptions(launches=launches))
    return analyze_module(module)


def _launch(name: str) -> RegionAnalysis:
    path = FIXTURES / f"{name}.cu"
    analysis = _analysis(path.read_text(), str(path))
    (function,) = analysis.functions
    assert "launched in run" in function.function.name
    (region,) = function.regions
    return region


def _at(expr: object, sizes: dict[str, int]) -> int:
    value = sympy.sympify(expr)
    value = value.subs({s: sizes[s.name] for s in value.free_symbols if s.name in sizes})
    assert not value.free_symbols, (expr, sizes)
    assert value == int(value), (expr, sizes)
    return int(value)


def test_the_fixtures() -> None:
    assert NAMES == [
        "bf16_scale",
        "block_reduce",
        "device_helpers",
        "dot_atomic",
        "float4_axpy",
        "half2_fma",
        "saxpy_grid_stride",
        "sgemm_naive",
        "sgemm_tiled",
        "stencil5",
        "transpose_naive",
        "transpose_tiled",
        "vector_add",
    ]


@pytest.mark.parametrize("name", NAMES)
def test_expected_values(name: str) -> None:
    want = tomllib.loads((FIXTURES / f"{name}.expected.toml").read_text())
    region = _launch(name)
    figures = {
        "flops": region.flops.total,
        "compulsory": region.traffic["compulsory"].total(False),
        "l2_to_sm": region.traffic["streaming"].total(False),
        "shared": region.shared_memory_bytes,
    }
    for n in want["sizes"]:
        for key in ("flops", "compulsory", "l2_to_sm", "shared"):
            if key in want:
                assert _at(figures[key], {"n": n}) == _at(want[key], {"n": n}), (key, n)
    if "shared" not in want:
        assert region.shared_memory_bytes is None
    # Exact footprints (the tiled SGEMM's `n/32` grid too: n - 32*floor(n/32) >= 0), but
    # for the tiled transpose, whose `j += 8` rows interleave with threadIdx.y's.
    assert region.traffic["compulsory"].exact == (name != "transpose_tiled")
    atomic = [u for u in region.unknowns if "atomicAdd" in u.message]
    function = _analysis((FIXTURES / f"{name}.cu").read_text()).functions[0]
    atomic += [u for u in function.function.unknowns if "atomicAdd" in u.message]
    assert bool(atomic) == want.get("atomic_to_one_address", False)


@pytest.mark.parametrize("name", NAMES)
def test_counts_match_the_twins(name: str) -> None:
    measured = json.loads((FIXTURES / f"{name}.counts.json").read_text())["launches"]
    region = _launch(name)
    flops, traffic = region.flops, region.traffic
    for row in measured:
        sizes = row["sizes"]
        assert _at(flops.add, sizes) == row["flops_add"], sizes
        assert _at(flops.sub, sizes) == row["flops_sub"], sizes
        assert _at(flops.mul, sizes) == row["flops_mul"], sizes
        assert _at(flops.div, sizes) == row["flops_div"], sizes
        assert _at(flops.special, sizes) == row["flops_special"], sizes
        assert _at(traffic["compulsory"].read_bytes, sizes) == row["compulsory_read_bytes"], sizes
        assert _at(traffic["compulsory"].write_bytes, sizes) == row["compulsory_write_bytes"], sizes
        assert _at(traffic["streaming"].read_bytes, sizes) == row["bytes_loaded"], sizes
        assert _at(traffic["streaming"].write_bytes, sizes) == row["bytes_stored"], sizes
        assert _at(region.shared_memory_bytes or 0, sizes) == row["shared_bytes"], sizes


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_launch_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's own command: FLOPs, DRAM and L2 bytes, the bound and the lower-bound
    time of that launch, with the launch recorded in the JSON."""
    path = str(FIXTURES / "vector_add.cu")
    argv = [path, "--size", "n=16777216", "--launch", "vec_add:n/256:256", "--device", "h100"]
    code, out, _ = run(capsys, "analyze", *argv, "--format", "json")
    assert code == 0
    report = json.loads(out)
    jsonschema.validate(report, json.loads(SCHEMA.read_text()))
    (function,) = report["files"][0]["functions"]
    assert function["name"] == "vec_add (--launch)"
    (nest,) = function["nests"]
    launch = nest["gpu_launch"]
    assert launch["launch"] == {
        "kernel": "vec_add",
        "grid": ["ceiling(n/256)", "1", "1"],
        "block": ["256", "1", "1"],
        "origin": "--launch",
    }
    assert nest["flops"]["total_value"] == 16777216
    assert nest["bytes"]["compulsory"]["total_value"] == 12 * 16777216
    assert launch["l2_to_sm_bytes_value"] == 12 * 16777216
    (placement,) = nest["placement"]
    assert placement["bound"] == "memory"
    # 201,326,592 bytes at the H100 SXM's 3.35 TB/s: 60.1 µs.
    assert placement["times"]["lower_bound_s"] == pytest.approx(12 * 16777216 / 3.35e12)
    code, text, _ = run(capsys, "analyze", *argv)
    assert code == 0
    assert "launch      grid (ceiling(n/256), 1, 1), block (256, 1, 1)   (--launch)" in text
    assert "memory-bound" in text and "60.1 µs" in text


def test_launch_in_the_file_gives_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "vector_add.cu")
    code, out, _ = run(capsys, "analyze", path, "--size", "n=16777216", "--device", "h100")
    assert code == 0
    assert "function vec_add (launched in run, line 17)" in out
    assert "grid (ceiling(n/256), 1, 1), block (256, 1, 1)   (launched in run, line 17)" in out
    assert "FLOPs       n = 16,777,216" in out and "60.1 µs" in out


def test_launch_from_the_configuration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "aiscan.toml"
    config.write_text('[launch]\nsaxpy = "7:64"\n')
    path = str(FIXTURES / "saxpy_grid_stride.cu")
    code, out, _ = run(capsys, "analyze", path, "--config", str(config), "--format", "json")
    assert code == 0
    (function,) = json.loads(out)["files"][0]["functions"]
    (nest,) = function["nests"]
    assert nest["gpu_launch"]["launch"]["grid"] == ["7", "1", "1"]
    assert nest["flops"]["total"] == "2*n"  # a grid-stride loop covers n whatever the grid


def test_bad_launch_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "analyze", str(FIXTURES / "vector_add.cu"), "--launch", "vec_add")
    assert code == 2
    assert "expected KERNEL:GRID:BLOCK" in err


def test_without_a_launch_the_grid_stays_symbolic() -> None:
    source = (
        "__global__ void scale(float *x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) x[i] = 2.0f * x[i];\n"
        "}\n"
    )
    analysis = _analysis(source)
    (function,) = analysis.functions
    assert function.function.name == "scale"
    (region,) = function.regions
    assert [loop.trip for loop in region.loops] == [
        sympy.Symbol("gridDim_x", integer=True, positive=True),
        sympy.Symbol("blockDim_x", integer=True, positive=True),
    ]
    (note,) = function.function.unknowns
    assert note.kind is UnknownKind.ASSUMPTION
    assert "gridDim_x, blockDim_x" in note.message
    assert region.region.launch is not None and region.region.launch.origin == "no launch"


def test_cuda_spellings_are_read() -> None:
    """Qualifiers, `extern "C"`, `__launch_bounds__`, `#pragma unroll`, `__ldg`, `half`,
    `expf` (a special) and division (counted, and apart)."""
    source = (
        "#include <cuda_fp16.h>\n"
        'extern "C" __global__ void __launch_bounds__(256)\n'
        "act(const half *__restrict__ h, const float *__restrict__ x, float *y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) {\n"
        "    float v = __ldg(&x[i]);\n"
        "    #pragma unroll\n"
        "    for (int k = 0; k < 4; k++) v = v + expf(v) / 3.0f;\n"
        "    y[i] = v * h[i];\n"
        "  }\n"
        "}\n"
    )
    (function,) = _analysis(source, "k.cu", "act:n/128:128").functions
    (region,) = function.regions
    flops = region.flops
    n = {"n": 1000}
    assert (_at(flops.add, n), _at(flops.div, n), _at(flops.special, n)) == (4000, 4000, 4000)
    assert _at(flops.mul, n) == 1000
    assert region.special_calls == ("expf",)
    assert _at(region.traffic["compulsory"].read_bytes, n) == 6000  # float x, half h
    assert _at(region.traffic["compulsory"].write_bytes, n) == 4000


def test_cxx_construct_is_a_located_error_and_the_rest_is_analyzed() -> None:
    """A type template is not read (an integer one is: `block_reduce`)."""
    source = (
        "template <typename T>\n"
        "__global__ void scaled(T *x) { x[threadIdx.x] *= 2; }\n"
        "\n"
        "__global__ void add(const float *a, float *b, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) b[i] += a[i];\n"
        "}\n"
    )
    module = lower_source(source, "k.cu", PipelineOptions())
    assert [f.name for f in module.functions] == ["add"]
    (error,) = [d for d in module.diagnostics if d.severity is Severity.ERROR]
    assert (error.span.line, error.span.column) == (1, 1)
    assert error.message == "C++ construct not read: `template`"


def test_c_syntax_error_is_located() -> None:
    with pytest.raises(InputError) as caught:
        lower_source("__global__ void k(float *x) { x[0] = ; }\n", "k.cu", PipelineOptions())
    span = caught.value.diagnostic.span
    assert (span.line, span.column) == (1, 38)  # the `;` after `x[0] =`, as in the source
    source = (
        "__global__ void k(float *x, int n) {\n  atomicAdd(&x[0],\n    x[1]);\n"
        "  int i = blockIdx.x*blockDim.x+threadIdx.x; if (i < n) x[i] = x[i] + ;\n}\n"
    )
    with pytest.raises(InputError) as caught:
        lower_source(source, "k.cu", PipelineOptions())
    span = caught.value.diagnostic.span
    assert (span.line, span.column) == (4, 71)  # lines kept past a respelled atomicAdd


def test_atomic_per_element_is_not_flagged() -> None:
    source = (
        "__global__ void hist(const float *x, float *y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) atomicAdd(&y[i], x[i]);\n"
        "}\n"
    )
    (function,) = _analysis(source, "k.cu", "hist:n/256:256").functions
    assert not [u for u in function.unknowns if "atomicAdd" in u.message]
    (region,) = function.regions
    assert _at(region.flops.add, {"n": 512}) == 512


def test_cu_files_are_discovered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert language_of("k.cu") == language_of("k.cuh") == "cuda"
    (tmp_path / "k.cu").write_text((FIXTURES / "vector_add.cu").read_text())
    code, out, _ = run(capsys, "analyze", str(tmp_path), "--no-cache")
    assert code == 0
    assert "function vec_add (launched in run, line 17)" in out


def test_hover_on_a_cuda_launch(tmp_path: Path) -> None:
    from aiscan.lsp.document import analyze_document, settings_for
    from aiscan.lsp.hover import hover_markdown

    path = str(tmp_path / "tiled.cu")
    settings = settings_for(path, ("h100",))
    result = analyze_document((FIXTURES / "sgemm_tiled.cu").read_text(), path, settings)
    assert result.analysis is not None
    (region,) = result.analysis.functions[0].regions
    text = hover_markdown(region, settings.devices, result.analysis.sizes, False)
    assert "**aiscan: GPU launch" in text
    assert "- launch: grid `(floor(n/32), floor(n/32), 1)`, block `(32, 32, 1)`" in text
    assert "- bytes, shared memory (apart): `270336*floor(n/32)**3`" in text


def test_check_gives_no_loop_order_advice_on_launches(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The grid loops run in parallel: "make threadIdx_x the innermost loop" (AIS004) is
    CPU advice; the atomic to one address is a warning on its line (AIS012)."""
    paths = [str(FIXTURES / f"{name}.cu") for name in ("sgemm_naive", "dot_atomic")]
    code, out, _ = run(capsys, "check", *paths, "--device", "h100", "--no-cache")
    assert code == 1  # the atomic contention fails the run
    assert "AIS004" not in out
    assert "dot_atomic.cu:9:5: AIS012 atomicAdd to one address (out[0])" in out
    assert "AIS008 assumption: atomicAdd" not in out


def test_a_construct_not_read_is_a_located_error_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the Python frontend does for what it cannot read: the error on its line, the
    rest of the file analyzed (the file counts as analyzed: exit code 0)."""
    path = tmp_path / "k.cu"
    path.write_text(
        "template <class T>\n__global__ void s(T *x) { x[threadIdx.x] *= 2; }\n"
        "__global__ void add(const float *a, float *b, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) b[i] += a[i];\n}\n"
    )
    code, out, _ = run(capsys, "analyze", str(path), "--no-cache")
    assert code == 0
    assert f"{path}:1:1: error: C++ construct not read: `template`" in out
    assert "function add (lines 3-5, fp32)" in out


def test_findings_point_at_the_cuda_source() -> None:
    """The grid loops inserted after `{` move the C text's columns, not the findings'."""
    source = (
        "__global__ void k(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x;"
        " if (i < n) x[i] = foo(x[i]); }\n"
    )
    (function,) = _analysis(source, "k.cu", "k:n/32:32").functions
    (region,) = function.regions
    (call,) = [u for u in region.unknowns if u.kind is UnknownKind.UNKNOWN_CALL]
    assert (call.span.line, call.span.column) == (1, source.index("foo") + 1)


def test_a_namespace_is_read_and_a_class_is_not() -> None:
    """A namespace's kernels are read (the host's `util::neg<<<...>>>` launches them); a
    class is a located error and what follows it is read."""
    source = (
        "namespace util {\n"
        "__global__ void neg(float *x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) x[i] = 0.0f - x[i];\n}\n"
        "}\n"
        "class Box { int w; };\n"
        "using namespace util;\n"
        "void run(float *x, int n) { util::neg<<<(n + 127) / 128, 128>>>(x, n); }\n"
    )
    module = lower_source(source, "k.cu", PipelineOptions())
    assert [f.name for f in module.functions] == ["neg (launched in run, line 9)"]
    (error,) = module.diagnostics
    assert (error.span.line, error.message) == (7, "C++ construct not read: `class`")


def test_host_names_replace_the_kernels_parameters() -> None:
    """`k<<<(N + 255) / 256, 256>>>(x, N)`: the kernel's `n` is the host's `N`, and the
    host's integer locals size the grid."""
    source = (
        "__global__ void neg(float *x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) x[i] = 0.0f - x[i];\n}\n"
        "void run(float *x, int N) {\n"
        "  int threads = 128;\n"
        "  dim3 grid = dim3((N + threads - 1) / threads);\n"
        "  neg<<<grid, threads, 0>>>(x, N);\n}\n"
    )
    (function,) = _analysis(source).functions
    assert function.function.name == "neg (launched in run, line 8)"
    (region,) = function.regions
    assert str(region.flops.total) == "N"
    assert region.region.launch is not None
    assert [str(v) for v in region.region.launch.grid] == ["ceiling(N/128)", "1", "1"]


def test_every_fixture_reports_valid_json(capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(FIXTURES / f"{name}.cu") for name in NAMES]
    code, out, _ = run(
        capsys, "analyze", *paths, "--device", "h100", "--size", "n=2048", "--format", "json"
    )
    assert code == 0
    report = json.loads(out)
    jsonschema.validate(report, json.loads(SCHEMA.read_text()))
    nests = {
        f["name"].split()[0]: f["nests"][0] for file in report["files"] for f in file["functions"]
    }
    assert nests["transpose_tiled"]["gpu_launch"]["shared_memory_bytes_value"] == 8 * 2048**2
    assert "shared_memory_bytes" not in nests["transpose_naive"]["gpu_launch"]
    assert nests["sgemm_naive"]["placement"][0]["bound"] == "compute"


def test_an_included_cuda_header_is_said_and_skipped() -> None:
    source = '#include "helpers.cuh"\n__global__ void z(float *x) { x[threadIdx.x] = 0.0f; }\n'
    module = lower_source(source, "k.cu", PipelineOptions())
    assert [f.name for f in module.functions] == ["z"]
    (warning,) = [d for d in module.diagnostics if "helpers.cuh" in d.message]
    assert (warning.span.line, warning.severity) == (1, Severity.WARNING)


def test_a_size_passed_to_the_kernel_stays_a_size() -> None:
    source = (
        "__global__ void neg(float *x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) x[i] = 0.0f - x[i];\n}\n"
        "void run(float *x) {\n"
        "  int n = 1 << 20;\n"
        "  neg<<<(n + 255) / 256, 256>>>(x, n);\n}\n"
    )
    (function,) = _analysis(source).functions
    (region,) = function.regions
    assert str(region.flops.total) == "n"
    assert region.region.launch is not None
    assert str(region.region.launch.grid[0]) == "ceiling(n/256)"


def test_a_block_stride_loop_covers_its_range_once_per_block() -> None:
    source = (
        "__global__ void row_sum(const float *__restrict__ a, float *__restrict__ out, int m,"
        " int n) {\n"
        "  __shared__ float part[256];\n"
        "  float s = 0.0f;\n"
        "  for (int j = threadIdx.x; j < n; j += blockDim.x) {\n"
        "    s += a[blockIdx.x * n + j];\n"
        "  }\n"
        "  part[threadIdx.x] = s;\n"
        "}\n"
    )
    (function,) = _analysis(source, "k.cu", "row_sum:m:256").functions
    (region,) = function.regions
    assert str(region.flops.total) == "m*n"
    assert str(region.traffic["compulsory"].total(False)) == "4*m*n"
    assert str(region.shared_memory_bytes) == "1024*m"  # 256 threads store 4 bytes, per block


def test_the_vscode_extension_registers_cuda() -> None:
    extension = ROOT / "editors" / "vscode"
    manifest = json.loads((extension / "package.json").read_text())
    assert "onLanguage:cuda-cpp" in manifest["activationEvents"]
    selector = json.loads((extension / "document-selector.json").read_text())
    assert {"scheme": "file", "language": "cuda-cpp"} in selector


_TRANSPOSE_32 = """#define TILE 32
__global__ void transpose_conflicted(const float *in, float *out, int n)
{
    __shared__ float tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

void run(const float *in, float *out, int n)
{
    transpose_conflicted<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(in, out, n);
}
"""


def test_a_define_on_line_one_is_read() -> None:
    """The C prelude of CUDA's type names once went before line 1, where it made a
    `#define` there a syntax error."""
    analysis = _analysis(_TRANSPOSE_32.replace("PAD", "0"))
    (function,) = analysis.functions
    assert function.function.name == "transpose_conflicted (launched in run, line 16)"
    assert analysis.sizes["TILE"] == 32


@pytest.mark.parametrize(("pad", "ways"), [(0, 32), (1, None)])
def test_bank_conflicts_are_reported_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pad: int, ways: int | None
) -> None:
    """The column read of `tile[32][32]` conflicts 32 ways, `tile[32][33]` not at all: the
    report says which access, how many ways, and the shared bytes as the banks serve them
    (4 bytes stored and 32 x 4 read per element: 132 n^2)."""
    path = tmp_path / "t.cu"
    path.write_text(_TRANSPOSE_32.replace("PAD", str(pad)))
    code, out, _ = run(capsys, "analyze", str(path), "--size", "n=4096", "--format", "json")
    assert code == 0
    entry = json.loads(out)["files"][0]["functions"][0]["nests"][0]["gpu_launch"]
    assert entry["shared_memory_bytes_value"] == 8 * 4096**2
    if ways is None:
        assert "bank_conflicts" not in entry and "shared_served_bytes" not in entry
        return
    assert entry["bank_conflicts"] == [
        {
            "line": 11,
            "column": 22,
            "reference": "tile[threadIdx_x][threadIdx_y]",
            "ways": 32,
            "lanes": 32,
        }
    ]
    assert entry["shared_served_bytes_value"] == 132 * 4096**2
    _, text, _ = run(capsys, "analyze", str(path), "--size", "n=4096")
    assert "banks       line 11: `tile[threadIdx_x][threadIdx_y]` 32-way bank conflict" in text
    assert "shared as served 132*TILE**2*floor(n/TILE)**2 = 2,214,592,512" in text


def test_atomics_are_counted(capsys: pytest.CaptureFixture[str]) -> None:
    """One atomicAdd per thread of the dot product's 528 x 256 grid; one per element a
    guard lets through in a histogram-like kernel."""
    (updates,) = _launch("dot_atomic").atomics
    assert (updates.access.text, updates.access.span.line, updates.count) == ("out[0]", 9, 135168)
    source = """__global__ void total(const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&out[i % 4], x[i]);
}
"""
    analysis = _analysis(source, "k.cu", "total:n/128:128")
    (region,) = analysis.functions[0].regions
    (updates,) = region.atomics
    assert sympy.simplify(sympy.sympify(str(updates.count)) - sympy.Symbol("n")) == 0
    code, out, _ = run(
        capsys, "analyze", str(FIXTURES / "dot_atomic.cu"), "--size", "n=4096", "--format", "json"
    )
    assert code == 0
    entry = json.loads(out)["files"][0]["functions"][0]["nests"][0]["gpu_launch"]
    assert entry["atomics"] == [
        {"line": 9, "reference": "out[0]", "count": "135168", "count_value": None}
    ]


def test_grid_too_small_needs_a_numeric_grid(capsys: pytest.CaptureFixture[str]) -> None:
    """AIS015 without sizes: the 64-block grid is still flagged, the data-sized one (a
    symbol) says nothing; a device file without an SM count (the L4's) says nothing."""
    path = str(ROOT / "fixtures" / "lint" / "AIS015.cu")
    code, out, _ = run(capsys, "check", path, "--device", "h100", "--select", "AIS015")
    assert code == 1
    assert [line.split(": ")[0] for line in out.splitlines() if "AIS015" in line] == [
        f"{path}:11:17"
    ]
    assert "a grid of 64 blocks on h100-sxm's 132 SMs leaves 68 of them idle" in out
    code, out, _ = run(capsys, "check", path, "--device", "l4", "--select", "AIS015")
    assert code == 0 and "AIS015" not in out


def test_one_thread_per_block_under_a_rounded_up_grid_is_exact() -> None:
    """`if (threadIdx.x == 0)` in a grid of `ceiling(n/256)` blocks: the count is the
    guard's count in one block times the blocks (no polynomial in n, so it once stayed a
    named fraction); a branch that only stores to shared memory is counted there; the
    warp partials `partial[threadIdx.x / 32]` are one word per warp (a broadcast, not a
    32-way conflict)."""
    source = """__global__ void k(const float *x, float *out, int n)
{
    extern __shared__ float partial[];
    int i = blockIdx.x * 256 + threadIdx.x;
    float v = 0.0f;
    if (i < n)
        v = x[i];
    if (threadIdx.x % 32 == 0)
        partial[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int w = 0; w < 8; w++)
            s += partial[w];
        atomicAdd(out, s);
    }
}
void run(const float *x, float *out, int n) { k<<<(n + 255) / 256, 256, 32>>>(x, out, n); }
"""
    (function,) = _analysis(source).functions
    (region,) = function.regions
    blocks = sympy.ceiling(sympy.Symbol("n") / 256)
    assert not region.unknowns
    assert sympy.sympify(str(region.flops.total)) == 9 * blocks
    assert sympy.sympify(str(region.shared_memory_bytes)) == 64 * blocks
    assert region.bank_conflicts == ()
    (updates,) = region.atomics
    assert sympy.sympify(str(updates.count)) == blocks


def test_template_defaults_constexpr_and_warp_builtins() -> None:
    """A `--launch` gives no template arguments: the default binds `STEPS`; `constexpr`
    numbers fold where they are used (a float too) and only in their block; `__ldg(x +
    i)` is the load `x[i]`; `warpSize` is 32 (the shuffle loop unrolled: 5 adds)."""
    source = """constexpr float HALF = 0.5f;
template <int STEPS = 3>
__global__ void k(const float *x, float *y, int n)
{
    constexpr int LANES = warpSize;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __ldg(x + i);
        for (int s = 0; s < STEPS; s++)
            v = v * HALF;
        for (int o = LANES / 2; o > 0; o /= 2)
            v += __shfl_xor_sync(0xffffffff, v, o);
        y[i] = v;
    }
}
__global__ void other(float *y) { int LANES = 2; y[threadIdx.x] = LANES * y[threadIdx.x]; }
"""
    analysis = _analysis(source, "k.cu", "k:n/128:128", "other:1:32")
    first, second = analysis.functions
    (region,) = first.regions
    n = {"n": 1000}
    assert (_at(region.flops.mul, n), _at(region.flops.add, n)) == (3000, 5000)
    assert _at(region.traffic["compulsory"].read_bytes, n) == 4000
    assert not region.unknowns
    (other,) = second.regions
    assert other.flops.total == 32 and not other.unknowns


def test_a_call_keeps_what_was_respelled_in_its_arguments() -> None:
    """`__ldg(&x[threadIdx.x])` once put the source's `threadIdx.x` back (read as one
    size, x[0]: 4 bytes); nested intrinsics are respelled innermost first."""
    source = """__global__ void k(const float *__restrict__ x, float *__restrict__ y,
                  const __nv_bfloat16 *__restrict__ b)
{
    y[threadIdx.x] = __ldg(&x[threadIdx.x]) * __bfloat162float(__ldg(&b[threadIdx.x]));
}
"""
    (function,) = _analysis(source, "k.cu", "k:1:32").functions
    (region,) = function.regions
    assert region.traffic["compulsory"].read_bytes == 32 * (4 + 2)
    assert region.flops.total == 32 and not region.unknowns


def test_launch_from_pyproject(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`[tool.aiscan.launch]` in pyproject.toml, with a template kernel's argument after
    its name: the table's launch replaces the file's (and says so), BLOCK is 256."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.aiscan.launch]\n"sum_squares<256>" = "n/256:256"\n'
    )
    kernel = tmp_path / "block_reduce.cu"
    kernel.write_text((FIXTURES / "block_reduce.cu").read_text())
    code, out, _ = run(
        capsys,
        "analyze",
        str(kernel),
        "--config",
        str(tmp_path / "pyproject.toml"),
        "--size",
        "n=4096",
        "--format",
        "json",
    )
    assert code == 0
    (function,) = json.loads(out)["files"][0]["functions"]
    (nest,) = function["nests"]
    assert nest["gpu_launch"]["launch"]["origin"] == "configuration"
    assert nest["gpu_launch"]["launch"]["block"] == ["256", "1", "1"]
    assert nest["flops"]["total_value"] == 4096 + 1289 * 16


def test_hover_says_atomics_and_bank_conflicts(tmp_path: Path) -> None:
    from aiscan.lsp.document import analyze_document, settings_for
    from aiscan.lsp.hover import hover_markdown

    path = str(tmp_path / "t.cu")
    settings = settings_for(path, ("h100",))
    result = analyze_document(_TRANSPOSE_32.replace("PAD", "0"), path, settings)
    assert result.analysis is not None
    (region,) = result.analysis.functions[0].regions
    text = hover_markdown(region, settings.devices, result.analysis.sizes, False)
    assert "- bank conflict, line 11: `tile[threadIdx_x][threadIdx_y]` 32-way" in text
    result = analyze_document((FIXTURES / "dot_atomic.cu").read_text(), path, settings)
    assert result.analysis is not None
    (region,) = result.analysis.functions[0].regions
    text = hover_markdown(region, settings.devices, result.analysis.sizes, False)
    assert "- atomics, line 9: `out[0]` updated `135168` times" in text


def test_other_atomics_are_read() -> None:
    """`atomicMax` is a read, a comparison (no FLOP) and a write, said when every thread
    updates one address; `atomicSub` to per-thread addresses is counted, not said."""
    source = """__global__ void amax(const float *x, float *m, int *hits, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicMax(&m[0], x[i]);
        atomicSub(&hits[i], 1);
    }
}
"""
    (function,) = _analysis(source, "k.cu", "amax:n/256:256").functions
    (region,) = function.regions
    assert region.flops.total == 0
    counts = [(a.access.text, str(a.count)) for a in region.atomics]
    assert counts == [("m[0]", "n"), ("hits[i]", "n")]
    (said,) = [u for u in function.function.unknowns if u.kind is UnknownKind.ATOMIC_CONTENTION]
    assert said.message.startswith("atomicMax to one address (m[0]) from every thread")


def test_device_functions_are_counted_as_their_bodies() -> None:
    """Issue 31: `__device__` helpers (`__forceinline__` too) inlined where called, with
    exactly the counts of the hand-inlined kernel; the report says what was inlined."""
    helpers = (
        "__device__ float sq(float x) { return x * x; }\n"
        "__device__ __forceinline__ float axpy1(float a, float x, float y) { return a * x + y; }\n"
        "__global__ void k(const float* __restrict__ x, float* y, float a, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) y[i] = axpy1(a, sq(x[i]), y[i]);\n"
        "}\n"
    )
    by_hand = (
        "__global__ void k(const float* __restrict__ x, float* y, float a, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) y[i] = a * (x[i] * x[i]) + y[i];\n"
        "}\n"
    )
    (ours,) = _analysis(helpers, "k.cu", "k:n/256:256").functions
    (twin,) = _analysis(by_hand, "k.cu", "k:n/256:256").functions
    assert ours.flops == twin.flops
    assert str(ours.flops.total) == "3*n"
    for model in ("compulsory", "streaming"):
        assert ours.traffic[model].total(False) == twin.traffic[model].total(False)
    assert not [u for u in ours.unknowns if u.kind is UnknownKind.UNKNOWN_CALL]
    assert [(f.name, f.span.line, f.call_lines) for f in ours.function.inlined] == [
        ("sq", 1, (5,)),
        ("axpy1", 2, (5,)),
    ]


def test_a_device_function_brings_the_axes_it_reads() -> None:
    """A helper reading `threadIdx.y` makes the kernel's y axis a real one."""
    source = (
        "__device__ int row() { return blockIdx.y * blockDim.y + threadIdx.y; }\n"
        "__global__ void k(float* y, int n) {\n"
        "  int i = row();\n"
        "  if (i < n) y[i] = 2.0f * y[i];\n"
        "}\n"
    )
    (function,) = _analysis(source, "k.cu").functions
    assert str(function.flops.total) == "n"


def test_reference_parameters_of_device_functions_are_their_arguments() -> None:
    """`float &acc` in a `__device__` function: each use is the caller's lvalue, so the
    kernel counts exactly as the hand-inlined one."""
    helpers = (
        "__device__ void accumulate(float &acc, float a, float b) { acc += a * b; }\n"
        "__device__ void bump(float& s, const float& v) { s = s + v * v; }\n"
        "__global__ void dot(const float *x, const float *y, float *out, float *z, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  float acc = 0.0f;\n"
        "  for (int k = 0; k < n; k++) accumulate(acc, x[k], y[k]);\n"
        "  bump(out[i], y[i]);\n"
        "  bump(z[i], acc);\n"
        "}\n"
    )
    by_hand = (
        "__global__ void dot(const float *x, const float *y, float *out, float *z, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  float acc = 0.0f;\n"
        "  for (int k = 0; k < n; k++) acc += x[k] * y[k];\n"
        "  out[i] = out[i] + y[i] * y[i];\n"
        "  z[i] = z[i] + acc * acc;\n"
        "}\n"
    )
    (ours,) = _analysis(helpers, "k.cu", "dot:n/256:256").functions
    (twin,) = _analysis(by_hand, "k.cu", "dot:n/256:256").functions
    assert ours.flops == twin.flops
    for model in ("compulsory", "streaming"):
        assert ours.traffic[model].total(False) == twin.traffic[model].total(False)
    assert _at(ours.flops.total, {"n": 512}) == 512 * (2 * 512 + 4)
    # out and z written through the references: 4 bytes each per thread.
    assert _at(ours.traffic["streaming"].write_bytes, {"n": 512}) == 2 * 4 * 512
    assert [f.name for f in ours.function.inlined] == ["accumulate", "bump"]
    assert [u.message for u in ours.unknowns] == [u.message for u in twin.unknowns]
    assert not [u for u in ours.unknowns if u.kind is UnknownKind.UNKNOWN_CALL]


def test_language_cuda_reads_cuda_in_any_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (FIXTURES / "vector_add.cu").read_text()
    for name in ("kernels.h", "kernels.cpp"):
        path = tmp_path / name
        path.write_text(source)
        code, out, _ = run(capsys, "analyze", "--no-cache", "--language", "cuda", str(path))
        assert code == 0
        assert "launch      grid (ceiling(n/256), 1, 1), block (256, 1, 1)" in out
    code, _, err = run(capsys, "analyze", "--no-cache", str(tmp_path / "kernels.cpp"))
    assert code == 2
    assert "`--language cuda` reads another as CUDA" in err


def test_auto_locals_with_an_obvious_type_are_read() -> None:
    """`auto` from a literal, a grid index, an element of a parameter or a typed local is
    that type; any other `auto` stays a located error and the rest is analyzed."""
    source = (
        "__global__ void k(const float *__restrict__ x, float *__restrict__ y, int n) {\n"
        "  auto i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  auto two = 2.0f;\n"
        "  if (i < n) {\n"
        "    auto v = x[i];\n"
        "    auto w = v;\n"
        "    y[i] = two * w + v;\n"
        "  }\n"
        "}\n"
        "__global__ void bad(float *y, int n) {\n"
        "  auto f = y;\n"
        "  y[0] = 1.0f;\n"
        "}\n"
    )
    module = lower_source(source, "k.cu", PipelineOptions(launches=("k:n/256:256",)))
    errors = [(d.span.line, d.message) for d in module.diagnostics]
    assert errors == [(11, "C++ construct not read: `auto`")]
    (function,) = analyze_module(module).functions
    assert str(function.flops.total) == "2*n"
    assert str(function.traffic["compulsory"].total(False)) == "8*n"
    assert function.precision == "fp32"


def test_hover_counts_a_kernel_with_its_device_functions(tmp_path: Path) -> None:
    from aiscan.lsp.document import analyze_document, settings_for
    from aiscan.lsp.hover import hover_markdown

    path = str(tmp_path / "helpers.cu")
    settings = settings_for(path, ("h100",))
    result = analyze_document((FIXTURES / "device_helpers.cu").read_text(), path, settings)
    assert result.analysis is not None
    (region,) = result.analysis.functions[0].regions
    text = hover_markdown(region, settings.devices, result.analysis.sizes, False)
    assert "- FLOPs: `2*n**2 + 3*n` (add n**2 + n, mul n**2 + 2*n)" in text
    assert "- bytes, compulsory: `4*n**2 + 12*n`" in text
    assert "unknown" not in text


def test_a_line_splice_is_read_as_the_preprocessor_reads_it() -> None:
    """A backslash-newline inside `blockIdx` (a fuzzed saxpy): the grid-stride loop is
    still read as one loop over n, and the lines after the splice keep their numbers."""
    source = (FIXTURES / "saxpy_grid_stride.cu").read_text()
    split = source.replace("i = blockIdx.x", "i = block\\\r\nIdx.x")
    assert split.count("\n") == source.count("\n") + 1
    plain, spliced = (_analysis(text).functions[0].regions[0] for text in (source, split))
    assert str(spliced.flops.total) == str(plain.flops.total) == "2*n"
    assert str(spliced.traffic["compulsory"].total(False)) == "12*n"
    lines = [(r.region.span.line, r.region.span.end_line) for r in (plain, spliced)]
    assert lines[1] == (lines[0][0], lines[0][1] + 1)  # the loop's line, one more to its end
    with pytest.raises(InputError) as caught:
        lower_source(
            split + "__global__ void k(float *x) { x[0] = ; }\n", "k.cu", PipelineOptions()
        )
    assert caught.value.diagnostic.span.line == split.count("\n") + 1
