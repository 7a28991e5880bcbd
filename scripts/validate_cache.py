"""Compare aiscan's predicted memory traffic with valgrind's cache simulation of the same C code.

For each affine kernel in `fixtures/c/` this script writes a C twin: a small driver that includes
the fixture's own source unchanged (or, for sizes fixed by `#define`, a copy with those defines
rewritten), allocates 64-byte-aligned arrays, and calls the kernel through a volatile function
pointer so that gcc cannot inline or specialise it. The twin is built with `gcc -O2` and run under
`valgrind --tool=callgrind --cache-sim=yes --simulate-wb=yes` with the cache of
`scripts/cachegrind-default.toml`: D1 32 KiB 8-way, LL 256 KiB 8-way, 64-byte lines.

Only the kernel is measured (`--toggle-collect`), from a cold cache: before the call the driver
reads a 4 MiB buffer twice, which leaves only clean, unrelated lines in both levels. After the call
it reads that buffer twice more (`aiscan_drain`), and the dirty lines the kernel left behind are
written back then; those write-backs are counted, the drain's own fills are not. Measured memory
traffic is the bytes crossing the LL boundary: 64 x (LL read and write misses) as fills plus
64 x (misses that evicted a dirty line) as write-backs.

The prediction is read from `aiscan analyze --format json --device-file <toml>`: the last level of
`cache_traffic` (main memory) where the report has it; the `compulsory` and `streaming` bytes with
write-allocate (the simulator's policy) are always shown beside it, as the best and worst cases.

Where the report states a range for main memory (a layer condition that holds only when a working
set may fill the whole LL, not half of it: `whole_cache`, schema 1.8), its other end and whether the
measurement lies inside the range are shown too.

With `--full-capacity` a second prediction is shown beside it: the same caches with layer
conditions at their whole capacity (`fixtures/devices/cachegrind-lru.toml`).

Usage: python scripts/validate_cache.py [--only NAME[,NAME...]] [--small] [--full-capacity]
       [-o table.md]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "c"
DEVICE_FILE = Path(__file__).resolve().parent / "cachegrind-default.toml"
FULL_CAPACITY_FILE = ROOT / "fixtures" / "devices" / "cachegrind-lru.toml"
"""The same caches with layer conditions at the whole capacity (`cache_safety_factor = 1`):
`--full-capacity` adds its prediction beside the default one."""
LINE_BYTES = 64
CACHE_OPTIONS = (
    f"--I1=32768,8,{LINE_BYTES}",
    f"--D1=32768,8,{LINE_BYTES}",
    f"--LL=262144,8,{LINE_BYTES}",
)
FLUSH_BYTES = 4 << 20
TOLERANCE = 0.15
GCC_FLAGS = ("-O2", "-std=gnu11", "-w")

Sizes = Mapping[str, int]


@dataclasses.dataclass(frozen=True)
class Twin:
    """How to call one fixture function: its arrays, its arguments, the sizes to run it at.

    `arrays` are (name, C element type, element count as a C expression in the sizes);
    `args` are C expressions in the array and size names. `defines` names sizes that the
    fixture fixes with `#define`: the twin compiles (and aiscan analyzes) a copy with them
    rewritten. `flag`, when set, is why the model is not expected to match. `cflags` are
    `-I`/`-D` options that both gcc and aiscan get (PolyBench's include directory).
    """

    fixture: str
    function: str
    args: tuple[str, ...]
    sizes: tuple[dict[str, int], ...]
    arrays: tuple[tuple[str, str, str], ...] = ()
    prelude: str = ""
    setup: str = ""
    defines: bool = False
    flag: str = ""
    cflags: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        stem = Path(self.fixture).stem
        return self.function if stem == self.function else f"{stem}:{self.function}"


def _vec(
    fixture: str,
    function: str,
    args: str,
    arrays: str,
    sizes: Sequence[int] = (100_000, 400_000),
    ctype: str = "double",
    flag: str = "",
) -> Twin:
    """A one-dimensional kernel over `n` whose arrays are all `ctype[n + 1]`."""
    return Twin(
        fixture,
        function,
        tuple(a.strip() for a in args.split(",")),
        tuple({"n": n} for n in sizes),
        tuple((a, ctype, "n + 1") for a in arrays.split()),
        flag=flag,
    )


def _square(
    fixture: str,
    function: str,
    args: str,
    arrays: str,
    sizes: Sequence[int],
    count: str = "n * n + 1",
) -> Twin:
    """A kernel over an n x n problem whose arrays hold `count` doubles each."""
    return Twin(
        fixture,
        function,
        tuple(a.strip() for a in args.split(",")),
        tuple({"n": n} for n in sizes),
        tuple((a, "double", count) for a in arrays.split()),
    )


_BLACK_BOX = "double black_box(double v) { return v; }  /* declared, not defined, in the fixture */"

_POLYBENCH = ("-Ifixtures/c/polybench",)
"""PolyBench fixtures: array extents fixed by the dataset's `#define`s, loops to the run-time
sizes the twin passes (smaller), so rows are a fixed pitch apart."""

_POLYBENCH_RUNTIME = """#undef main
void *polybench_alloc_data(unsigned long long count, int size) { return malloc(count * size); }
void polybench_timer_start(void) {}
void polybench_timer_stop(void) {}
void polybench_timer_print(void) {}"""

TWINS: tuple[Twin, ...] = (
    _vec("daxpy.c", "daxpy", "n, 2.0, x, y", "x y"),
    _vec("daxpy_plus_square.c", "daxpy_plus_square", "n, 2.0, x, y", "x y"),
    _vec("vector_add.c", "vector_add", "n, x, y, z", "x y z"),
    _vec("triad.c", "triad", "n, a, b, c, d", "a b c d"),
    _vec("reuse_x.c", "reuse_x", "n, x, y, z", "x y z"),
    _vec("sum_squares.c", "sum_squares", "n, a", "a"),
    _vec("shared_input_one_loop.c", "shared_input_one_loop", "n, buf, b, d, a, c", "buf b d a c"),
    _vec("shared_input_two_loops.c", "shared_input_two_loops", "n, buf, b, d, a, c", "buf b d a c"),
    Twin(
        "mixed_precision.c",
        "mixed_precision",
        ("n", "x", "y", "f", "z"),
        ({"n": 100_000}, {"n": 400_000}),
        (("x", "double", "n"), ("y", "double", "n"), ("f", "float", "n"), ("z", "double", "n")),
    ),
    _vec(
        "complex_axpy.c", "zaxpy", "n, (double _Complex)2.0, x, y", "x y", ctype="double _Complex"
    ),
    _vec("branches.c", "relu_scale", "n, x, y", "x y"),
    dataclasses.replace(_vec("math_calls.c", "specials", "n, x, y", "x y"), prelude=_BLACK_BOX),
    dataclasses.replace(_vec("math_calls.c", "divides", "n, x, y", "x y"), prelude=_BLACK_BOX),
    _vec("loop_forms.c", "downward", "n, x, y", "x y"),
    _vec("loop_forms.c", "inclusive", "n, x, y", "x y"),
    _vec("loop_forms.c", "not_equal", "n, x, y", "x y", ctype="float"),
    _vec("loop_forms.c", "stride_two", "n, x", "x"),
    _vec("loop_forms.c", "stride_down", "n, y", "y"),
    _vec("loop_forms.c", "while_counter", "n, x, y", "x y"),
    _vec("real_world.c", "scale", "n, 2.0f, v", "v", ctype="float"),
    Twin(
        "real_world.c",
        "relax",
        ("&aiscan_grid", "0.5"),
        ({"g_n": 100_000}, {"g_n": 400_000}),
        (("u", "double", "g_n"), ("f", "double", "g_n")),
        prelude="static struct grid aiscan_grid;",
        setup="aiscan_grid.n = g_n; aiscan_grid.u = u; aiscan_grid.f = f;",
    ),
    Twin(
        "bf16_dot.c",
        "bf16_dot",
        ("N", "a", "b", "out"),
        ({"N": 100_000}, {"N": 400_000}),
        (("a", "_Float16", "N"), ("b", "_Float16", "N"), ("out", "_Float16", "1")),
    ),
    _vec("first_touch.c", "shift_left", "n, a", "a"),
    _vec("first_touch.c", "scale_by_first", "n, b", "b"),
    _vec("first_touch.c", "two_stores", "n, x", "x"),
    Twin(
        "first_touch.c",
        "partial_reuse",
        ("T", "n", "a"),
        ({"T": 3, "n": 50_000}, {"T": 3, "n": 200_000}),
        (("a", "double", "2 * n"),),
    ),
    _vec("first_touch.c", "mixed_patterns", "n, b", "b", sizes=(1000, 2000)),
    Twin(
        "time_stencil.c",
        "jacobi_1d",
        ("T", "n", "a", "b"),
        ({"T": 4, "n": 100_000}, {"T": 4, "n": 400_000}),
        (("a", "double", "n"), ("b", "double", "n")),
    ),
    _vec("time_stencil.c", "gauss_seidel_1d", "n, a", "a"),
    _square("real_world.c", "matvec_rows", "n, a, x, y", "a x y", (300, 600)),
    _square("dgemm_ijk.c", "dgemm", "n, a, b, c", "a b c", (100, 200)),
    _square("linearized_update.c", "dgemm_ikj_linear", "n, a, b, c", "a b c", (100, 200)),
    _square("linearized_update.c", "dgemm_ikj_2d", "n, a, b, c", "a b c", (100, 200)),
    _square("linearized_update.c", "upper_scale", "n, 2.0, a", "a", (300, 600)),
    _square("linearized_rows.c", "within_rows", "n, a", "a", (300, 600)),
    _square("linearized_rows.c", "across_rows", "n, a", "a", (300, 600)),
    _square("triangular.c", "lower_matvec", "n, a, x, y", "a x y", (300, 600)),
    _square("triangular.c", "upper_pairs", "n, x, d", "x d", (300, 600)),
    Twin(
        "bf16_matmul.c",
        "bf16_matmul",
        ("N", "a", "b", "c"),
        ({"N": 128}, {"N": 384}),
        (("a", "_Float16", "N * N"), ("b", "_Float16", "N * N"), ("c", "_Float16", "N * N")),
    ),
    Twin(
        "stencil_cross9.c",
        "stencil_cross9",
        ("n", "m", "a", "b"),
        ({"n": 200, "m": 200}, {"n": 400, "m": 400}),
        (("a", "double", "n * m"), ("b", "double", "n * m")),
    ),
    Twin(
        "deep_nest.c",
        "conv2d",
        ("C", "H", "W", "R", "S", "in", "w", "out"),
        (
            {"C": 4, "H": 64, "W": 64, "R": 3, "S": 3},
            {"C": 4, "H": 128, "W": 128, "R": 3, "S": 3},
        ),
        (
            ("in", "float", "C * (H + R) * (W + S)"),
            ("w", "float", "C * R * S"),
            ("out", "float", "H * W"),
        ),
        flag="cache safety factor: the c loop's working set (out + one channel of in) is "
        "just over half the LL; LRU keeps it",
    ),
    Twin(
        "fp16_linear.c",
        "linear",
        (),
        ({"M": 64, "K": 128, "N": 512}, {"M": 128, "K": 256, "N": 512}),
        # The arrays are static and Y is never read: without escaping, gcc drops the kernel.
        prelude="void *volatile aiscan_escape[] = {X, W, Y};",
        setup="memset(X, 1, sizeof X); memset(W, 1, sizeof W);",
        defines=True,
        flag="cache safety factor (W + a row: just over half the LL) at M=64; set conflicts of "
        "W's power-of-two column walk at K=256 (the model has no associativity)",
    ),
    Twin(
        "jacobi2d_time.c",
        "jacobi_2d",
        ("T", "n", "a", "b"),
        ({"T": 2, "n": 300}, {"T": 2, "n": 500}),
        (("a", "double", "n * n"), ("b", "double", "n * n")),
    ),
    Twin(
        "linearized_twins.c",
        "stencil_cross9_flat",
        ("n", "m", "a", "b"),
        ({"n": 200, "m": 200}, {"n": 400, "m": 400}),
        (("a", "double", "n * m"), ("b", "double", "n * m")),
    ),
    Twin(
        "linearized_twins.c",
        "jacobi_2d_flat",
        ("T", "n", "a", "b"),
        ({"T": 2, "n": 300}, {"T": 2, "n": 500}),
        (("a", "double", "n * n"), ("b", "double", "n * n")),
    ),
    _square("linearized_twins.c", "dgemm_2d", "n, a, b, c", "a b c", (100, 200)),
    *(
        Twin(
            "linearized_twins.c",
            function,
            ("nx", "ny", "nz", "u", "v"),
            ({"nx": 40, "ny": 40, "nz": 40}, {"nx": 100, "ny": 100, "nz": 100}),
            (("u", "double", "nx * ny * nz"), ("v", "double", "nx * ny * nz")),
        )
        for function in ("heat7", "heat7_flat")
    ),
    _square("polyhedral_footprints.c", "zero_trip", "n, a", "a", (200, 300)),
    _square("polyhedral_footprints.c", "matvec_accumulate", "n, a, x, y", "a x y", (300, 600)),
    _square("polyhedral_footprints.c", "forward_substitution", "n, l, b, x", "l b x", (300, 600)),
    Twin(
        "polyhedral_footprints.c",
        "sibling_loops",
        ("n", "m", "a", "b", "t"),
        ({"n": 200, "m": 400}, {"n": 400, "m": 400}),
        (("a", "double", "n * m"), ("b", "double", "n * m"), ("t", "double", "m")),
    ),
    _square("polyhedral_footprints.c", "lu", "n, a", "a", (200, 300)),
    Twin(
        "polyhedral_footprints.c",
        "syrk_mirror",
        ("n", "m", "a", "c"),
        ({"n": 200, "m": 200}, {"n": 300, "m": 300}),
        (("a", "double", "n * m"), ("c", "double", "n * n")),
    ),
    _vec(
        "polyhedral_footprints.c",
        "reversed_triangle",
        "n, 2.0, r, y, z",
        "r y z",
        sizes=(12_000, 14_000),
    ),
    _square("index_conditions.c", "band_above", "n, a, b", "a b", (300, 600)),
    _square("index_conditions.c", "diagonal", "n, a, b", "a b", (300, 600)),
    _vec("index_conditions.c", "skip_first", "n, x", "x"),
    # Triangles over a strided counter whose rows cross the LL's capacity (range split).
    _vec("strided_domains.c", "strided_tails", "n, a, b", "a b", sizes=(20_000,)),
    _vec("strided_domains.c", "strided_prefix", "n, a", "a", sizes=(20_000,)),
    _square("index_conditions.c", "off_diagonal", "n, a", "a", (300, 600)),
    _vec("while_loops.c", "count_down", "n, x, y", "x y"),
    _vec("while_loops.c", "count_up", "n, x, y", "x y"),
    _vec("while_loops.c", "do_while", "n, x, y", "x y"),
    _vec("while_loops.c", "walk_axpy", "n, 2.0, x, y", "x y"),
    _vec("while_loops.c", "walk_post_increment", "n, x, y", "x y", ctype="float"),
    Twin(
        "while_loops.c",
        "walk_pairs",
        ("n", "x", "y"),
        ({"n": 100_000}, {"n": 400_000}),
        (("x", "double", "2 * n"), ("y", "double", "n")),
    ),
    _vec("while_loops.c", "copy_scaled", "n, x, y", "x y"),
    _vec("while_loops.c", "prefix_test", "n, x, y", "x y"),
    _vec("while_loops.c", "header_walk", "n, x, y", "x y"),
    _vec("sigmoid_f32.c", "sigmoid", "n, x, y", "x y", ctype="float"),
    _vec("literal_powers.c", "powers", "n, x, y", "x y"),
    Twin(
        "polybench_gemm.c",
        "kernel_gemm",
        ("ni", "nj", "nk", "1.5", "1.2", "c", "a", "b"),
        ({"ni": 200, "nj": 200, "nk": 200}, {"ni": 300, "nj": 300, "nk": 300}),
        (
            ("c", "double", "1000 * 1100"),
            ("a", "double", "1000 * 1200"),
            ("b", "double", "1200 * 1100"),
        ),
        # The fixture is a whole PolyBench program: its `main` is renamed out of the driver's
        # way, and the PolyBench runtime it calls (never run here) is given empty bodies.
        prelude=_POLYBENCH_RUNTIME,
        cflags=(*_POLYBENCH, "-Dmain=aiscan_fixture_main"),
    ),
    Twin(
        "polybench_atax.c",
        "kernel_atax",
        ("m", "n", "a", "x", "y", "tmp"),
        ({"m": 300, "n": 300}, {"m": 600, "n": 600}),
        (
            ("a", "double", "1900 * 2100"),
            ("x", "double", "2100"),
            ("y", "double", "2100"),
            ("tmp", "double", "1900"),
        ),
        cflags=_POLYBENCH,
    ),
    Twin(
        "polybench_jacobi_2d.c",
        "kernel_jacobi_2d",
        ("tsteps", "n", "a", "b"),
        ({"tsteps": 2, "n": 200}, {"tsteps": 2, "n": 250}),
        (("a", "double", "250 * 250"), ("b", "double", "250 * 250")),
        cflags=_POLYBENCH,
    ),
    # Issue 32's largest misses: triangular nests and several references to one array.
    Twin(
        "polybench_2mm.c",
        "kernel_2mm",
        ("ni", "nj", "nk", "nl", "1.5", "1.2", "tmp", "a", "b", "c", "d"),
        tuple({"ni": s, "nj": s, "nk": s, "nl": s} for s in (100, 200)),
        (
            ("tmp", "double", "800 * 900"),
            ("a", "double", "800 * 1100"),
            ("b", "double", "1100 * 900"),
            ("c", "double", "900 * 1200"),
            ("d", "double", "800 * 1200"),
        ),
        cflags=_POLYBENCH,
    ),
    Twin(
        "polybench_cholesky.c",
        "kernel_cholesky",
        ("n", "a"),
        ({"n": 200}, {"n": 300}),
        (("a", "double", "2000 * 2000"),),
        cflags=_POLYBENCH,
    ),
    Twin(
        "polybench_gramschmidt.c",
        "kernel_gramschmidt",
        ("m", "n", "a", "r", "q"),
        ({"m": 200, "n": 200}, {"m": 300, "n": 300}),
        (
            ("a", "double", "1000 * 1200"),
            ("r", "double", "1200 * 1200"),
            ("q", "double", "1000 * 1200"),
        ),
        cflags=_POLYBENCH,
    ),
    Twin(
        "polybench_covariance.c",
        "kernel_covariance",
        ("m", "n", "2.0", "data", "cov", "mean"),
        ({"m": 200, "n": 200}, {"m": 300, "n": 300}),
        (
            ("data", "double", "1400 * 1200"),
            ("cov", "double", "1200 * 1200"),
            ("mean", "double", "1200"),
        ),
        cflags=_POLYBENCH,
    ),
    Twin(
        "polybench_lu.c",
        "kernel_lu",
        ("n", "a"),
        ({"n": 200}, {"n": 300}),
        (("a", "double", "2000 * 2000"),),
        cflags=_POLYBENCH,
    ),
    Twin(
        "polybench_syrk.c",
        "kernel_syrk",
        ("n", "m", "1.5", "1.2", "c", "a"),
        ({"n": 200, "m": 200}, {"n": 300, "m": 300}),
        (("c", "double", "1200 * 1200"), ("a", "double", "1200 * 1000")),
        cflags=_POLYBENCH,
    ),
    Twin(
        "polybench_trmm.c",
        "kernel_trmm",
        ("m", "n", "1.5f", "a", "b"),
        ({"m": 300, "n": 300}, {"m": 400, "n": 400}),
        (("a", "float", "1000 * 1000"), ("b", "float", "1000 * 1200")),
        cflags=_POLYBENCH,
    ),
)
"""Every fixture function with affine accesses. Left out: `scalar_recurrence` (no memory
traffic), `octal_literals` (a handful of elements), `unknown_call` (an undefined function), and
`indirect.c` (indirect indices: aiscan gives a bound, not a prediction), index_conditions'
`data_dependent` (a named data-dependent fraction), while_loops' `halving` and `until_zero`
(named trip counts) and `walk_sometimes` (a pointer moved on some passes: indirect, a bound)."""

_DRIVER = """\
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "{source}"

{size_globals}
{array_globals}
{prelude}
static volatile unsigned char aiscan_sink;

__attribute__((noinline)) void aiscan_flush(const unsigned char *buffer, size_t length)
{{
    unsigned char s = 0;
    for (size_t i = 0; i < length; i += {line})
        s += buffer[i];
    aiscan_sink = s;
}}

__attribute__((noinline)) void aiscan_drain(const unsigned char *buffer, size_t length)
{{
    unsigned char s = 0;
    for (size_t i = 0; i < length; i += {line})
        s += buffer[i];
    aiscan_sink = s;
}}

static __typeof__({function}) *volatile aiscan_target = {function};

__attribute__((noinline)) void aiscan_kernel(void)
{{
    aiscan_target({call});
}}

static void *aiscan_array(size_t bytes)
{{
    size_t rounded = (bytes + {line} - 1) / {line} * {line};
    void *p = aligned_alloc({line}, rounded ? rounded : {line});
    memset(p, 0, rounded ? rounded : {line});
    return p;
}}

int main(void)
{{
    unsigned char *flush = aiscan_array({flush});
    memset(flush, 1, {flush});
{allocations}
{setup}
    aiscan_flush(flush, {flush});
    aiscan_flush(flush, {flush});
    aiscan_kernel();
    aiscan_drain(flush, {flush});
    aiscan_drain(flush, {flush});
    return 0;
}}
"""


@dataclasses.dataclass(frozen=True)
class Measurement:
    """Bytes crossing the LL boundary during one kernel call: line fills and write-backs."""

    read_bytes: int
    write_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.read_bytes + self.write_bytes


@dataclasses.dataclass(frozen=True)
class Prediction:
    """aiscan's memory traffic at one size: the cache model's, where reported, and the bounds."""

    cache_bytes: float | None
    compulsory_bytes: float | None
    streaming_bytes: float | None
    note: str = ""
    full_capacity_bytes: float | None = None
    """The cache model's bytes with layer conditions at the whole capacity, when asked."""
    whole_cache_bytes: float | None = None
    """The other end of the range the report states (`whole_cache`), where it states one."""


def _prefixed(text: str, names: Iterable[str]) -> str:
    """Rename the driver's size and array names `x` to `aiscan_x`, so none clashes with the
    fixture's own identifiers."""
    for name in sorted(set(names), key=len, reverse=True):
        text = re.sub(rf"(?<![\w.>]){re.escape(name)}\b", f"aiscan_{name}", text)
    return text


def _rewrite_defines(source: str, sizes: Sizes) -> str:
    for name, value in sizes.items():
        source, count = re.subn(
            rf"^(\s*#\s*define\s+{re.escape(name)}\s+)\S+", rf"\g<1>{value}", source, flags=re.M
        )
        if count != 1:
            raise ValueError(f"no single '#define {name}' to rewrite")
    return source


def kernel_source(twin: Twin, sizes: Sizes, workdir: Path) -> Path:
    """The C file both gcc and aiscan see: the fixture itself, or its rewritten copy."""
    fixture = FIXTURES / twin.fixture
    if not twin.defines:
        return fixture
    copy = workdir / twin.fixture
    copy.write_text(_rewrite_defines(fixture.read_text(), sizes))
    return copy


def driver_text(twin: Twin, sizes: Sizes, source: Path) -> str:
    """The C twin's driver for `twin` at `sizes`, including `source`."""
    size_names = [] if twin.defines else list(sizes)
    names = size_names + [a[0] for a in twin.arrays]
    size_globals = "\n".join(f"static long aiscan_{k} = {sizes[k]};" for k in size_names)
    array_globals = "\n".join(f"static void *aiscan_{a[0]};" for a in twin.arrays)
    allocations = "\n".join(
        f"    aiscan_{a}= aiscan_array((size_t)({_prefixed(count, names)}) * sizeof({ctype}));"
        for a, ctype, count in twin.arrays
    )
    return _DRIVER.format(
        source=source.resolve(),
        size_globals=size_globals,
        array_globals=array_globals,
        prelude=twin.prelude,
        function=twin.function,
        call=", ".join(_prefixed(a, names) for a in twin.args),
        line=LINE_BYTES,
        flush=FLUSH_BYTES,
        allocations=allocations,
        setup="    " + _prefixed(twin.setup, names) if twin.setup else "",
    )


def build(twin: Twin, sizes: Sizes, workdir: Path) -> Path:
    """Compile the twin with gcc; `__bf16` becomes `_Float16` (same 2 bytes, same accesses),
    since gcc before 13 has no bf16 arithmetic."""
    source = kernel_source(twin, sizes, workdir)
    driver = workdir / f"{Path(twin.fixture).stem}_{twin.function}_driver.c"
    driver.write_text(driver_text(twin, sizes, source))
    binary = driver.with_suffix("")
    command = ["gcc", *GCC_FLAGS, *_paths(twin.cflags), "-D__bf16=_Float16", str(driver)]
    command += ["-o", str(binary), "-lm"]
    compiled = subprocess.run(command, capture_output=True, text=True)
    if compiled.returncode != 0:
        raise RuntimeError(f"gcc failed on the twin of {twin.name}:\n{compiled.stderr}")
    return binary


def parse_callgrind(text: str) -> tuple[dict[str, int], dict[str, int]]:
    """Totals of the collected events, and the drain's own (exclusive) events.

    Needs a profile written with `--compress-strings=no --compress-pos=no`.
    """
    events: list[str] = []
    totals: dict[str, int] = {}
    drain = dict.fromkeys(events, 0)
    function = ""
    after_call = False
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
            drain = dict.fromkeys(events, 0)
        elif line.startswith("totals:"):
            totals = dict(zip(events, map(int, line.split()[1:]), strict=False))
        elif line.startswith("fn="):
            function = line[3:].strip()
        elif line.startswith("calls="):
            after_call = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            if function == "aiscan_drain" and not after_call:
                values = list(map(int, line.split()[1:]))
                for event, value in zip(events, values, strict=False):
                    drain[event] += value
            after_call = False
    return totals, drain


def measure(binary: Path, workdir: Path) -> Measurement:
    """Run `binary` under callgrind's cache simulator; the kernel's traffic beyond LL."""
    profile = workdir / "callgrind.out"
    command = [
        "valgrind",
        "--tool=callgrind",
        "--cache-sim=yes",
        "--simulate-wb=yes",
        *CACHE_OPTIONS,
        "--toggle-collect=aiscan_kernel",
        "--toggle-collect=aiscan_drain",
        "--compress-strings=no",
        "--compress-pos=no",
        f"--callgrind-out-file={profile}",
        str(binary),
    ]
    subprocess.run(command, check=True, capture_output=True, text=True)
    totals, drain = parse_callgrind(profile.read_text())
    if "DLdmr" not in drain:
        raise RuntimeError("callgrind reported no write-back events (--simulate-wb)")
    # A cost line leaves out its trailing zeros.
    fills = sum(totals.get(e, 0) - drain[e] for e in ("DLmr", "DLmw"))
    write_backs = sum(totals.get(e, 0) for e in ("DLdmr", "DLdmw"))
    return Measurement(fills * LINE_BYTES, write_backs * LINE_BYTES)


def _value(expr: str | None, sizes: Sizes) -> float | None:
    if expr is None:
        return None
    import sympy
    from sympy.parsing.sympy_parser import parse_expr

    names = {name: sympy.Symbol(name, positive=True, integer=True) for name in sizes}
    try:
        value = parse_expr(expr, local_dict=names).subs({names[k]: v for k, v in sizes.items()})
        return float(value)
    except (TypeError, ValueError, SyntaxError, AttributeError):
        return None


def _function_report(report: dict[str, Any], function: str) -> dict[str, Any]:
    for file in report["files"]:
        for entry in file.get("functions", []):
            if entry["name"] == function:
                return dict(entry)
    raise LookupError(f"aiscan reported no function {function!r}")


def _main_memory(entry: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The last level of the function's `cache_traffic` on device `name`, if reported."""
    for device in entry.get("cache_traffic") or []:
        if device.get("device") == name and device.get("levels"):
            return dict(device["levels"][-1])
    return None


def _whole_cache_bytes(entry: dict[str, Any], name: str) -> float | None:
    """The whole-cache end of main memory's range on device `name`, where there is one."""
    memory = _main_memory(entry, name)
    whole = None if memory is None else memory.get("whole_cache")
    return None if whole is None else float(whole["value"])


def _cache_bytes(entry: dict[str, Any], sizes: Sizes, name: str) -> float | None:
    """Main memory's read + write bytes from the function's `cache_traffic` on device
    `name`, if reported."""
    memory = _main_memory(entry, name)
    if memory is not None:
        read = memory.get("read_value")
        write = memory.get("write_value")
        if read is None:
            read = _value(memory.get("read"), sizes)
        if write is None:
            write = _value(memory.get("write"), sizes)
        if read is not None and write is not None:
            return float(read) + float(write)
    return None


def _paths(cflags: Sequence[str]) -> list[str]:
    """`-I` directories relative to the repository root made absolute (gcc runs elsewhere)."""
    return [f"-I{ROOT / f[2:]}" if f.startswith("-I") else f for f in cflags]


def _analyze(
    source: Path, sizes: Sizes, cflags: Sequence[str] = (), device_file: Path = DEVICE_FILE
) -> tuple[dict[str, Any], str]:
    """aiscan's JSON report with the cache device; without it (and a note) where the device
    file does not load yet."""
    size_option = ",".join(f"{k}={v}" for k, v in sizes.items())
    base = [sys.executable, "-m", "aiscan", "analyze", str(source), "--format", "json"]
    base += ["--size", size_option, "--write-allocate", "--no-cache"]
    base += [option for flag in _paths(cflags) for option in (flag[:2], flag[2:])]
    with_device = [*base, "--device-file", str(device_file), "--device", device_file.stem]
    run = subprocess.run(with_device, capture_output=True, text=True, cwd=ROOT)
    if run.returncode == 0:
        return json.loads(run.stdout), ""
    note = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "device file refused"
    run = subprocess.run(base, capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(run.stdout), note


def predict(twin: Twin, sizes: Sizes, source: Path, *, full_capacity: bool = False) -> Prediction:
    report, note = _analyze(source, sizes, twin.cflags)
    entry = _function_report(report, twin.function)
    byte_models = entry.get("bytes", {})
    compulsory = _value(byte_models.get("compulsory", {}).get("total"), sizes)
    streaming = _value(byte_models.get("streaming", {}).get("total"), sizes)
    whole = None
    if full_capacity:
        report, _ = _analyze(source, sizes, twin.cflags, FULL_CAPACITY_FILE)
        whole = _cache_bytes(_function_report(report, twin.function), sizes, "cachegrind-lru")
    cache = _cache_bytes(entry, sizes, DEVICE_FILE.stem)
    other_end = _whole_cache_bytes(entry, DEVICE_FILE.stem)
    return Prediction(cache, compulsory, streaming, note, whole, other_end)


@dataclasses.dataclass(frozen=True)
class Row:
    twin: Twin
    sizes: dict[str, int]
    measured: Measurement
    predicted: Prediction

    @property
    def model_bytes(self) -> float | None:
        """The prediction compared: the cache model's, else the compulsory bytes."""
        if self.predicted.cache_bytes is not None:
            return self.predicted.cache_bytes
        return self.predicted.compulsory_bytes

    @property
    def ratio(self) -> float | None:
        if self.model_bytes is None or self.measured.total_bytes == 0:
            return None
        return self.model_bytes / self.measured.total_bytes

    @property
    def within(self) -> bool:
        return self.ratio is not None and abs(self.ratio - 1.0) <= TOLERANCE

    @property
    def in_range(self) -> bool | None:
        """Whether the measurement lies between the two ends of the stated range; None
        where the report states none."""
        low, high = self.predicted.cache_bytes, self.predicted.whole_cache_bytes
        if low is None or high is None:
            return None
        low, high = min(low, high), max(low, high)
        return low <= self.measured.total_bytes <= high

    @property
    def reason(self) -> str:
        """Why a row misses 15%: what the numbers themselves show, else the twin's flag."""
        predicted, streaming = self.model_bytes, self.predicted.streaming_bytes
        if predicted is not None and streaming is not None and predicted > streaming * 1.001:
            return "above the streaming bound (no cache): a defect of the model"
        if self.predicted.cache_bytes is None:
            return "compulsory bytes: no cache model in this report"
        return self.twin.flag


def run_twin(twin: Twin, sizes: dict[str, int], *, full_capacity: bool = False) -> Row:
    with tempfile.TemporaryDirectory(prefix="aiscan-validate-") as directory:
        workdir = Path(directory)
        binary = build(twin, sizes, workdir)
        measured = measure(binary, workdir)
        source = kernel_source(twin, sizes, workdir)
        predicted = predict(twin, sizes, source, full_capacity=full_capacity)
    return Row(twin, sizes, measured, predicted)


def _bytes(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def markdown_table(rows: Sequence[Row]) -> str:
    """The validation table: one row per kernel and size."""
    model = "cache" if any(r.predicted.cache_bytes is not None for r in rows) else "compulsory"
    whole = any(r.predicted.full_capacity_bytes is not None for r in rows)
    ranged = any(r.in_range is not None for r in rows)
    extra = " full capacity (ratio) |" if whole else ""
    extra += " stated range's other end (ratio), measured inside? |" if ranged else ""
    lines = [
        f"| kernel | sizes | measured bytes | predicted bytes ({model}) | ratio |{extra} "
        "compulsory | streaming | within 15%? |",
        "|---|---|---:|---:|---:|"
        + ("---:|" if whole else "")
        + ("---:|" if ranged else "")
        + "---:|---:|---|",
    ]
    for row in rows:
        sizes = ", ".join(f"{k}={v}" for k, v in row.sizes.items())
        ratio = "—" if row.ratio is None else f"{row.ratio:.3f}"
        verdict = "yes" if row.within else "**no**"
        if (not row.within or row.predicted.cache_bytes is None) and row.reason:
            verdict += f": {row.reason}"
        column = ""
        if whole:
            full = row.predicted.full_capacity_bytes
            share = "" if full is None else f" ({full / max(row.measured.total_bytes, 1):.3f})"
            column = f" {_bytes(full)}{share} |"
        if ranged:
            end = row.predicted.whole_cache_bytes
            share = "" if end is None else f" ({end / max(row.measured.total_bytes, 1):.3f})"
            inside = {None: "", True: ", yes", False: ", no"}[row.in_range]
            column += f" {_bytes(end)}{share}{inside} |"
        lines.append(
            f"| {row.twin.name} | {sizes} | {_bytes(row.measured.total_bytes)} "
            f"| {_bytes(row.model_bytes)} | {ratio} |{column} "
            f"{_bytes(row.predicted.compulsory_bytes)} "
            f"| {_bytes(row.predicted.streaming_bytes)} | {verdict} |"
        )
    within = sum(r.within for r in rows)
    lines.append("")
    lines.append(f"{within} of {len(rows)} within 15%.")
    if ranged:
        stated = [r for r in rows if r.in_range is not None]
        inside = sum(bool(r.in_range) for r in stated)
        lines.append(f"{len(stated)} rows state a range; the measurement is inside {inside}.")
    notes = sorted({r.predicted.note for r in rows if r.predicted.note})
    lines.extend(f"Note: {n}" for n in notes)
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated kernel or function names")
    parser.add_argument("--small", action="store_true", help="only the first size of each")
    parser.add_argument("-o", "--output", metavar="PATH", help="write the table here too")
    parser.add_argument(
        "--full-capacity",
        action="store_true",
        help="also predict with layer conditions at the whole capacity (cachegrind-lru)",
    )
    arguments = parser.parse_args(argv)
    missing = [tool for tool in ("gcc", "valgrind") if shutil.which(tool) is None]
    if missing:
        print(f"validate_cache: needs {' and '.join(missing)}", file=sys.stderr)
        return 2
    wanted = {w for w in arguments.only.split(",") if w}
    twins = [t for t in TWINS if not wanted or wanted & {t.name, t.function}]
    rows = []
    for twin in twins:
        for sizes in twin.sizes[:1] if arguments.small else twin.sizes:
            start = time.perf_counter()
            row = run_twin(twin, sizes, full_capacity=arguments.full_capacity)
            elapsed = time.perf_counter() - start
            print(
                f"{twin.name} {sizes}: measured {row.measured.total_bytes:,} "
                f"predicted {_bytes(row.model_bytes)} ({elapsed:.1f} s)",
                file=sys.stderr,
            )
            rows.append(row)
    table = markdown_table(rows)
    print(table)
    if arguments.output:
        Path(arguments.output).write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
