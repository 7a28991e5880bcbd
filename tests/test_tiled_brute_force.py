"""Property: counts of random tiled loop nests equal brute-force iteration.

Random C nests of one or two tiled dimensions: tile loops `for (ii = 0; ii < n; ii += B)`
with the tile size B a `#define`, a parameter or a constant, point loops clamped to `n` by
a `MIN` macro, a ternary or a `min` function (or not clamped at all, so the last tile runs
past `n`), the point loops right under their tile loops or after every tile loop, and
one statement reading and writing arrays at small offsets. FLOPs must equal brute force at
every size, tile sizes smaller, equal to and larger than `n`, dividing it or not; so must
the compulsory bytes where aiscan says they are exact (they may only exceed brute force
where it says they are an upper bound).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_domain_sums import evaluated

from aiscan.ir.symbols import size_symbol
from aiscan.pipeline import PipelineOptions, analyze_text

CLAMPS = ("macro", "ternary", "function", "none")
TILE_SIZES = ("define", "parameter", "constant")


@dataclass(frozen=True)
class Tiled:
    dims: int
    tile_size: str
    clamp: str
    interleaved: bool
    """`ii, i, jj, j` instead of `ii, jj, i, j`."""
    references: tuple[tuple[str, int, int, bool], ...]
    """(array, row offset, column offset, transposed) per reference; the last is written."""
    constant: int


@st.composite
def tiled(draw: st.DrawFn) -> Tiled:
    dims = draw(st.integers(1, 2))
    references = tuple(
        (
            draw(st.sampled_from("ab")),
            draw(st.integers(-1, 1)) if dims == 2 else 0,
            draw(st.integers(-1, 2)),
            dims == 2 and draw(st.booleans()),
        )
        for _ in range(3)
    )
    return Tiled(
        dims,
        draw(st.sampled_from(TILE_SIZES)),
        draw(st.sampled_from(CLAMPS)),
        dims == 2 and draw(st.booleans()),
        references,
        draw(st.integers(2, 5)),
    )


def tile_text(program: Tiled) -> str:
    return {"define": "BS", "parameter": "bs", "constant": str(program.constant)}[program.tile_size]


def source(program: Tiled) -> str:
    size = tile_text(program)
    lines = [
        "#define BS 64",
        "#define MIN(a, b) ((a) < (b) ? (a) : (b))",
        "static inline int min(int a, int b) { return a < b ? a : b; }",
        "void f(int n, int bs, double *restrict a, double *restrict b) {",
    ]
    points = ("i", "j")[: program.dims]

    def tile_loop(var: str) -> str:
        return f"for (int {var}{var} = 0; {var}{var} < n; {var}{var} += {size})"

    def point_loop(var: str) -> str:
        end = f"{var}{var} + {size}"
        bound = {
            "macro": f"MIN({end}, n)",
            "ternary": f"({end} < n ? {end} : n)",
            "function": f"min({end}, n)",
            "none": end,
        }[program.clamp]
        return f"for (int {var} = {var}{var}; {var} < {bound}; {var}++)"

    if program.interleaved:
        headers = [h for var in points for h in (tile_loop(var), point_loop(var))]
    else:
        headers = [tile_loop(var) for var in points] + [point_loop(var) for var in points]
    lines += ["  " + header for header in headers]
    texts = [reference_text(program, r) for r in program.references]
    lines.append(f"    {texts[2]} = {texts[0]} + {texts[1]};\n}}\n")
    return "\n".join(lines)


def reference_text(program: Tiled, reference: tuple[str, int, int, bool]) -> str:
    array, row, column, transposed = reference
    if program.dims == 1:
        return f"{array}[i + {column}]"
    first, second = ("j", "i") if transposed else ("i", "j")
    return f"{array}[({first} + {row}) * n + {second} + {column}]"


def brute_force(program: Tiled, n: int, tile: int) -> tuple[int, int, int]:
    """Iterations, and compulsory bytes with and without write-allocate."""
    touched: dict[tuple[str, int], bool] = {}  # element -> first touched by a write
    written: set[tuple[str, int]] = set()
    iterations = 0

    def points(start: int) -> range:
        end = start + tile if program.clamp == "none" else min(start + tile, n)
        return range(start, end)

    def body(i: int, j: int) -> None:
        nonlocal iterations
        iterations += 1
        for position, (array, row, column, transposed) in enumerate(program.references):
            if program.dims == 1:
                element = i + column
            else:
                first, second = (j, i) if transposed else (i, j)
                element = (first + row) * n + second + column
            is_write = position == 2
            touched.setdefault((array, element), is_write)
            if is_write:
                written.add((array, element))

    tiles = range(0, n, tile)
    if program.dims == 1:
        for ii in tiles:
            for i in points(ii):
                body(i, 0)
    elif program.interleaved:
        for ii in tiles:
            for i in points(ii):
                for jj in tiles:
                    for j in points(jj):
                        body(i, j)
    else:
        for ii in tiles:
            for jj in tiles:
                for i in points(ii):
                    for j in points(jj):
                        body(i, j)
    allocated = 8 * (len(touched) + len(written))
    plain = 8 * (sum(not first for first in touched.values()) + len(written))
    return iterations, allocated, plain


def at(expr: sympy.Expr, program: Tiled, n: int, tile: int) -> Any:
    values = {size_symbol("n"): n, size_symbol("bs"): tile, size_symbol("BS"): tile}
    return evaluated(sympy.sympify(expr).subs(values))


@settings(max_examples=25, deadline=None)
@given(tiled())
@example(  # isl's coalescing failed its own check on the first reads: "internal error"
    Tiled(
        2,
        "constant",
        "macro",
        False,
        (("a", 0, 0, True), ("a", 0, 0, False), ("a", 0, 0, False)),
        2,
    )
)
def test_tiled_counts_are_brute_force(program: Tiled) -> None:
    text = source(program)
    analysis = analyze_text(text, "k.c", PipelineOptions()).analysis
    assert analysis is not None
    function = next(f for f in analysis.functions if f.function.name == "f")
    assert not [u for u in function.unknowns if u.kind == "data-dependent-bound"], text
    traffic = function.traffic["compulsory"]
    tiles = [program.constant] if program.tile_size == "constant" else [1, 2, 3, 5]
    for tile in tiles:
        for n in range(1, 11):
            iterations, allocated, plain = brute_force(program, n, tile)
            assert at(function.flops.add, program, n, tile) == iterations, (n, tile, text)
            for write_allocate, actual in ((True, allocated), (False, plain)):
                counted = at(traffic.total(write_allocate), program, n, tile)
                assert not counted.free_symbols, counted
                if traffic.exact:
                    assert counted == actual, (n, tile, write_allocate, text)
                else:
                    assert counted >= actual, (n, tile, write_allocate, text)


EXACT = [
    Tiled(
        1, "define", "macro", False, (("a", 0, 0, False), ("b", 0, 1, False), ("a", 0, 2, False)), 2
    ),
    Tiled(
        1,
        "constant",
        "ternary",
        False,
        (("a", 0, 2, False), ("b", 0, 0, False), ("a", 0, 0, False)),
        3,
    ),
    Tiled(
        1,
        "parameter",
        "none",
        False,
        (("a", 0, 0, False), ("a", 0, 1, False), ("b", 0, 0, False)),
        2,
    ),
    Tiled(
        2,
        "parameter",
        "ternary",
        False,
        (("a", 0, 1, True), ("b", 1, 0, False), ("b", 0, 0, False)),
        2,
    ),
    Tiled(
        2,
        "define",
        "function",
        True,
        (("a", 1, 0, False), ("a", 0, 0, False), ("a", 0, 1, False)),
        2,
    ),
    Tiled(
        2,
        "constant",
        "macro",
        False,
        (("a", 0, 0, True), ("a", 0, 0, False), ("b", 0, 0, False)),
        4,
    ),
]


def test_tiled_nests_that_must_be_exact() -> None:
    """Tilings whose counts aiscan derives exactly (not merely bounds) equal brute force:
    1-D strips in every form, 2-D tiles of read-only arrays, tiles interleaved with their
    point loops (the order of the untiled nest)."""
    for program in EXACT:
        text = source(program)
        analysis = analyze_text(text, "k.c", PipelineOptions()).analysis
        assert analysis is not None
        function = next(f for f in analysis.functions if f.function.name == "f")
        traffic = function.traffic["compulsory"]
        assert traffic.exact, text
        tiles = [program.constant] if program.tile_size == "constant" else [1, 2, 3, 7]
        for tile in tiles:
            for n in range(1, 11):
                iterations, allocated, plain = brute_force(program, n, tile)
                assert at(function.flops.add, program, n, tile) == iterations, (n, tile, text)
                assert at(traffic.total(True), program, n, tile) == allocated, (n, tile, text)
                assert at(traffic.total(False), program, n, tile) == plain, (n, tile, text)


def test_tiles_larger_than_the_fitting_sizes_are_not_fitted_below_them() -> None:
    """64-wide unclamped tiles over a linearized index: below n = 64 all of it is one tile,
    whose count is a polynomial in n; fitted there alone it was reported exact, and wrong
    (1008n + 1024 bytes) past n = 64. It must now hold at sizes past one tile."""
    program = Tiled(
        2, "constant", "none", False, (("a", 0, 0, True), ("a", 0, 0, True), ("b", 0, 0, False)), 64
    )
    text = source(program)
    analysis = analyze_text(text, "k.c", PipelineOptions()).analysis
    assert analysis is not None
    function = next(f for f in analysis.functions if f.function.name == "f")
    traffic = function.traffic["compulsory"]
    for n in (40, 70, 130):
        _, allocated, _ = brute_force(program, n, 64)
        counted = at(traffic.total(True), program, n, 64)
        assert counted == allocated if traffic.exact else counted >= allocated, n


def test_tiles_counted_by_index_are_the_untiled_range() -> None:
    """`for (t = 0; t < (n + bs - 1) / bs; t++)` around `i` from `t*bs` to `MIN(t*bs + bs,
    n)`: floor((n - 1)/bs) + 1 tiles is ceiling(n/bs), so the pair is the loop over [0, n)
    (it was a `Sum` of `Min` terms over the tiles)."""
    text = (
        "#define MIN(a, b) ((a) < (b) ? (a) : (b))\n"
        "void f(int n, int bs, double *restrict a) {\n"
        "  for (int t = 0; t < (n + bs - 1) / bs; t++)\n"
        "    for (int i = t * bs; i < MIN(t * bs + bs, n); i++)\n"
        "      a[i] = 2.0 * a[i];\n"
        "}\n"
    )
    analysis = analyze_text(text, "k.c", PipelineOptions()).analysis
    assert analysis is not None
    (function,) = analysis.functions
    n = size_symbol("n")
    assert sympy.expand(function.flops.total - n) == 0
    traffic = function.traffic["compulsory"]
    assert traffic.exact and sympy.expand(traffic.total(False) - 16 * n) == 0


def test_first_touch_across_tiles_is_a_bound_at_least_brute_force() -> None:
    """`b[j][i + 1] = b[j + 1][i] + a[i][j]` under `ii, jj, i, j` tiles: the untiled order
    writes `b[r][c]` at `(c - 1, r)` before reading it at `(c, r - 1)`, but where `r`
    starts a column tile the read runs first. The iteration distance has mixed signs there
    and does not decide: a flagged bound at least brute force (it was 16n**2 + 16n - 8,
    flagged, 184 bytes at n = 3 against 192)."""
    text = (
        "#define MIN(a, b) ((a) < (b) ? (a) : (b))\n"
        "void f(int n, double a[restrict n + 2][n + 2], double b[restrict n + 2][n + 2]) {\n"
        "  for (int ii = 0; ii < n; ii += 2)\n"
        "    for (int jj = 0; jj < n; jj += 2)\n"
        "      for (int i = ii; i < MIN(ii + 2, n); i++)\n"
        "        for (int j = jj; j < MIN(jj + 2, n); j++)\n"
        "          b[j][i + 1] = b[j + 1][i] + a[i][j];\n"
        "}\n"
    )
    analysis = analyze_text(text, "k.c", PipelineOptions()).analysis
    assert analysis is not None
    (function,) = analysis.functions
    traffic = function.traffic["compulsory"]
    assert not traffic.exact
    for n in range(1, 11):
        first_touch: dict[tuple[str, int, int], bool] = {}
        for ii in range(0, n, 2):
            for jj in range(0, n, 2):
                for i in range(ii, min(ii + 2, n)):
                    for j in range(jj, min(jj + 2, n)):
                        for element in (("b", j + 1, i, False), ("a", i, j, False)):
                            first_touch.setdefault(element[:3], False)
                        first_touch.setdefault(("b", j, i + 1), True)
        plain = 8 * (sum(not w for w in first_touch.values()) + n * n)
        assert evaluated(traffic.total(False).subs(size_symbol("n"), n)) >= plain, n
