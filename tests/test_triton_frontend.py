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
from aiscan.ir.nodes import Access, Branch, Loop, Node, UnknownKind
from aiscan.pipeline import PipelineOptions, lower_source

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "triton"
SCHEMA = ROOT / "aiscan" / "report" / "schema" / "report.schema.json"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.py"))
INDIRECT = {"embedding"}
"""Fixtures whose main-memory bytes are a bound (a gather): compared as one."""
NOT_INTERPRETED = {"matmul_block_ptr"}
"""Fixtures Triton 3.9's interpreter cannot run: block pointers were removed from Triton
("in favor of the tensor descriptor API"); older kernels still use them."""


def _launch(name: str) -> RegionAnalysis:
    path = FIXTURES / f"{name}.py"
    module = lower_source(path.read_text(), str(path), PipelineOptions())
    analysis = analyze_module(module)
    (launch,) = [f for f in analysis.functions if "launched in" in f.function.name]
    (region,) = launch.regions
    return region


def _at(expr: sympy.Expr, sizes: dict[str, int]) -> int:
    value = _summed(
        sympy.sympify(expr).subs(
            {sympy.Symbol(k, integer=True, positive=True): v for k, v in sizes.items()}
        )
    )
    assert not value.free_symbols, (expr, sizes)
    return int(value)


def _summed(expr: sympy.Expr) -> sympy.Expr:
    """`expr` with every `Sum` (a triangle of loops, nested) added up term by term,
    outermost first, so that inner limits are numbers when they are reached."""
    if isinstance(expr, sympy.Sum):
        *inner, (var, low, high) = expr.limits
        summand = sympy.Sum(expr.function, *inner) if inner else expr.function
        return sum(
            (_summed(summand.subs(var, v)) for v in range(int(low), int(high) + 1)),
            sympy.Integer(0),
        )
    if not expr.args or not expr.has(sympy.Sum):
        return expr
    return expr.func(*(_summed(a) for a in expr.args))


@pytest.mark.parametrize("name", sorted(set(NAMES) - INDIRECT))
def test_expected_values(name: str) -> None:
    want = tomllib.loads((FIXTURES / f"{name}.expected.toml").read_text())
    useful_fractions = want.pop("useful_fraction_lines", [])
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
    notes = (UnknownKind.ASSUMPTION, UnknownKind.ATOMIC_CONTENTION)
    unknowns = [u for u in region.unknowns if u.kind not in notes]
    # Only the useful FLOPs may carry a named fraction, on the lines the fixture names.
    assert [u.span.line for u in unknowns] == useful_fractions, unknowns
    assert all("whose inputs are masked in" in u.message for u in unknowns)


@pytest.mark.parametrize("name", sorted(set(NAMES) - NOT_INTERPRETED))
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
        read, written = traffic["compulsory"].read_bytes, traffic["compulsory"].write_bytes
        if name in INDIRECT:
            # Which table rows a gather reads is data: its bytes bound the measured ones.
            assert not traffic["compulsory"].exact
            assert _at(read, sizes) >= row["compulsory_read_bytes"], sizes
        else:
            assert _at(read, sizes) == row["compulsory_read_bytes"], sizes
        assert _at(written, sizes) == row["compulsory_write_bytes"], sizes
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
    figures at a ragged n, placed with the L2 model's bytes (its compulsory ones: nothing
    is read twice) on the CUDA-core roof."""
    path = FIXTURES / "vector_add.py"
    code, out = run(capsys, "analyze", str(path), "--device", "h100", "--size", "n=1000000")
    assert code == 0
    assert "FLOPs       1024*ceiling(n/1024) = 1,000,448   [add 1024*ceiling(n/1024)]" in out
    assert "useful      n = 1,000,000" in out
    assert "L2 → SM     12*n = 12,000,000" in out
    assert "compulsory 12*n = 12,000,000   read 8*n, write 4*n" in out
    assert "h100-sxm fp32: ridge 10 F/B, memory-bound" in out
    assert "roof FP32 CUDA cores (loop code); dram bytes 12000000" in out
    assert "every re-read fits in half of L2's 50 MB" in out
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


def _module_launches(source: str, **options: str) -> list[RegionAnalysis]:
    module = lower_source(source, "k.py", PipelineOptions(**options))  # type: ignore[arg-type]
    return [r for f in analyze_module(module).functions for r in f.regions]


def test_helpers_are_inlined_not_reported() -> None:
    """A `@triton.jit` helper is part of each kernel that calls it, once per call; it is
    not a kernel of its own, and a pointer passed to it is a pointer of the kernel."""
    path = FIXTURES / "rmsnorm.py"
    module = lower_source(path.read_text(), str(path), PipelineOptions())
    names = [f.name for f in module.functions]
    assert "load_chunk" not in names
    region = _launch("rmsnorm")
    # Three calls of the helper, each a masked load at the helper's line.
    loads = [a for a in _accesses(region) if not a.is_write]
    assert sorted(a.array for a in loads) == ["weight", "x", "x"]
    assert {a.span.line for a in loads} == {18}


def _accesses(region: RegionAnalysis) -> list[Access]:
    found: list[Access] = []

    def walk(nodes: tuple[Node, ...]) -> None:
        for node in nodes:
            if isinstance(node, Loop):
                walk(node.body)
            elif isinstance(node, Branch):
                walk(node.then_body)
            else:
                found.extend(node.accesses)

    walk(region.region.body)
    return found


def test_recursive_helper_is_located() -> None:
    recursive = "def helper(x):\n    return helper(x)\n\n\n@triton.jit\ndef k("
    source = KERNEL_HEAD.replace("def k(", recursive) + "    tl.store(x_ptr, helper(1.0))\n"
    (region,) = _module_launches(source)
    found = [u for u in region.unknowns if "recursive call to `helper`" in u.message]
    assert [(u.span.line, u.span.column) for u in found] == [(7, 12)]


def test_grouped_program_ids_become_the_tile_grid() -> None:
    """`pid // group` and `pid % group` split the 1-D grid; the grouped order's rows
    merge back into one loop, so the launch is counted over ceiling(M/64) x ceiling(N/64)
    tiles exactly, with no unknown."""
    region = _launch("matmul_grouped")
    grid = region.region.body[0]
    assert isinstance(grid, Loop) and isinstance(grid.body[0], Loop)
    assert (str(grid.trip), str(grid.body[0].trip)) == ("ceiling(M/64)", "ceiling(N/64)")


def test_program_id_divided_after_use_is_located() -> None:
    body = (
        "    pid = tl.program_id(0)\n"
        "    tl.store(x_ptr + pid, 1.0)\n"
        "    tl.store(y_ptr + pid // 4, 1.0)\n"
    )
    (region,) = _module_launches(KERNEL_HEAD + body)
    found = [u for u in region.unknowns if "divided after it addressed memory" in u.message]
    assert [(u.span.line, u.span.column) for u in found] == [(9, 22)]


def test_autotune_first_config_by_default_all_on_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(FIXTURES / "matmul_grouped.py")
    code, out = run(capsys, "analyze", path)
    assert code == 0
    assert out.count("function grouped_matmul_kernel (launched in") == 1
    assert "config 1 of 3: BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=4, num_warps=4" in out
    assert "assumption (line 15): autotune config 1 of 3 used" in out
    code, out = run(capsys, "analyze", path, "--triton-config", "all")
    assert code == 0
    labels = [line for line in out.splitlines() if "function grouped_matmul_kernel" in line]
    assert [label.split("config ")[1][:6] for label in labels] == ["1 of 3", "2 of 3", "3 of 3"]
    # Config 3's tiles: 128 x 32 with 32-deep K steps.
    assert "262144*ceiling(K/32)*ceiling(M/128)*ceiling(N/32)" in out


def test_triton_config_setting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "aiscan.toml").write_text('triton-config = "all"\n')
    kernel = tmp_path / "grouped.py"
    kernel.write_text((FIXTURES / "matmul_grouped.py").read_text())
    code, out = run(capsys, "analyze", str(kernel), "--config", str(tmp_path / "aiscan.toml"))
    assert code == 0, out
    assert out.count("function grouped_matmul_kernel (launched in") == 3
    (tmp_path / "aiscan.toml").write_text('triton-config = "some"\n')
    code, _ = run(capsys, "analyze", str(kernel), "--config", str(tmp_path / "aiscan.toml"))
    assert code == 2


def test_atomic_to_one_address_is_noted() -> None:
    path = FIXTURES / "sum_atomic.py"
    module = lower_source(path.read_text(), str(path), PipelineOptions())
    (launch,) = [f for f in module.functions if "launched in" in f.name]
    notes = [u for u in launch.unknowns if "updates the same address" in u.message]
    assert [(u.span.line, u.span.column) for u in notes] == [(19, 5)]
    assert "`tl.atomic_add`" in notes[0].message and "total" in notes[0].message


def test_gather_is_flagged_and_bounded() -> None:
    """The table's row comes from loaded ids: the offset is flagged on its line, the load
    is counted per lane as a bound, and the ids and output stay exact."""
    region = _launch("embedding")
    indirect = [u for u in region.unknowns if u.kind is UnknownKind.INDIRECT_ACCESS]
    assert [(u.span.line, u.span.column) for u in indirect] == [(23, 22)]
    assert not region.traffic["compulsory"].exact
    sizes = {"n_ids": 8, "dim": 64, "BLOCK": 64}
    assert _at(region.traffic["compulsory"].write_bytes, sizes) == 8 * 64 * 4
    assert region.flops.total == 0  # an id times a stride is integer arithmetic


def test_key_blocks_past_the_sequence_keep_no_lanes() -> None:
    """With 32-key blocks, the causal loop `range(0, (pid + 1) * 64, 32)` of the last
    query block runs past seq_len = 70 (keys 96..127): those blocks keep no lanes, not
    a negative number. Figures measured by the interpreter (scripts/count_triton.py on
    this variant of the fixture): 43,264 bytes loaded, 26,880 distinct bytes read."""
    text = (FIXTURES / "attention_causal.py").read_text()
    variant = text.replace("BLOCK_M=64, BLOCK_N=64", "BLOCK_M=64, BLOCK_N=32")
    assert variant != text
    module = lower_source(variant, "causal32.py", PipelineOptions())
    (launch,) = [f for f in analyze_module(module).functions if "launched" in f.function.name]
    (region,) = launch.regions
    sizes = {"heads": 1, "seq_len": 70}
    assert _at(region.traffic["streaming"].read_bytes, sizes) == 43264
    assert _at(region.traffic["compulsory"].read_bytes, sizes) == 26880


def test_block_pointers_count_as_the_masked_matmul() -> None:
    """`tl.make_block_ptr` + `tl.advance` + `boundary_check` address and keep what the
    hand-masked pointers of matmul.py do: at its tile shape the two launches' figures are
    the same expressions (the interpreter can no longer run block pointers, so this is
    the cross-check), and the masked matmul's are the interpreter's."""
    text = (FIXTURES / "matmul.py").read_text().replace("BLOCK_N=64", "BLOCK_N=32")
    text = text.replace("triton.cdiv(N, 64)", "triton.cdiv(N, 32)").replace("float16", "bfloat16")
    text = text.replace("Float16", "BFloat16")
    module = lower_source(text, "matmul32.py", PipelineOptions())
    (masked,) = [f for f in analyze_module(module).functions if "launched" in f.function.name]
    (by_hand,) = masked.regions
    blocked = _launch("matmul_block_ptr")
    for model in ("compulsory", "streaming"):
        assert blocked.traffic[model].total(False) == by_hand.traffic[model].total(False)
    assert blocked.flops == by_hand.flops
    assert blocked.useful_flops == by_hand.useful_flops


def test_grouped_ids_stay_split_where_the_group_is_read() -> None:
    """When the kernel also addresses memory with the group number, the group loop
    stays (the rows of a group start at q * GROUP_M): the counts are still exact."""
    body = (
        "    pid = tl.program_id(0)\n"
        "    per_group = 4 * tl.cdiv(n, 32)\n"
        "    group = pid // per_group\n"
        "    rows = min(tl.cdiv(n, 64) - group * 4, 4)\n"
        "    pid_m = group * 4 + (pid % per_group) % rows\n"
        "    pid_n = (pid % per_group) // rows\n"
        "    offs = pid_m * 64 + tl.arange(0, 64)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    tl.store(y_ptr + pid_n * 64 + offs, x * 2.0, mask=offs < n)\n"
        "    tl.store(y_ptr + group, 1.0)\n"
    )
    launch = "\n\ndef run(x, y, n):\n    k[(tl.cdiv(n, 64) * tl.cdiv(n, 32),)](x, y, n, BLOCK=64)\n"
    source = KERNEL_HEAD + body + launch.replace("tl.cdiv", "triton.cdiv")
    (launched,) = [r for r in _module_launches(source) if r.region.gpu_launch]
    grid = launched.region.body[0]
    assert isinstance(grid, Loop) and grid.var == "pid_0q"  # the group loop stays
    n = sympy.Symbol("n", integer=True, positive=True)
    for size in (64, 200, 1000):
        programs = -(-size // 64) * -(-size // 32)
        assert launched.flops.total.subs(n, size) == 64 * programs
    split = (UnknownKind.NON_AFFINE_INDEX, UnknownKind.UNSUPPORTED)
    assert not [u for u in launched.unknowns if u.kind in split]
