"""Python tile loops against brute force: `range(s, n, B)` around `range(ii, min(ii + B, n))`
counts and footprints as the untiled range, exactly, as C's tiled loops do
(tests/test_tiled_brute_force.py).

Random nests of one or two tiled dimensions (the tile size a literal, an int parameter or a
module constant; the `min` in either order, `ii + B` written inline or through a variable;
point loops right under their tile loops or after every tile loop; one statement reading
and writing arrays at small offsets, the tile variable in an index or not) are generated
with a description the test runs itself: the brute force is the loops executed in plain
Python, counting iterations and the elements touched first by a read or a write. The
fixture `fixtures/python/tiles.py` is checked the same way, each function against a loop
nest written here from its definition.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from test_domain_sums import evaluated

from aiscan.analysis.kernel import FunctionAnalysis, analyze_module
from aiscan.ir.symbols import size_symbol
from aiscan.pipeline import PipelineOptions, lower_source

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "python" / "tiles.py"
TILE_SIZES = ("literal", "parameter", "constant")
CLAMPS = ("inline", "inline_n_first", "variable", "variable_n_first")

Reference = tuple[str, int, int, bool]
"""(array, row offset, column offset, transposed); in 1-D the column offset alone."""


@dataclass(frozen=True)
class Tiled:
    dims: int
    tile_size: str
    clamp: str
    interleaved: bool
    """`ii, i, jj, j` instead of `ii, jj, i, j`."""
    start: int
    """Where the (1-D) tiles start: `range(start, n, B)`."""
    within: bool
    """The first reference is indexed by `i - ii` (the offset inside the tile), 1-D only."""
    references: tuple[Reference, ...]
    """Read, read, written."""
    literal: int


@st.composite
def tiled(draw: st.DrawFn) -> Tiled:
    dims = draw(st.integers(1, 2))
    references = tuple(
        (
            draw(st.sampled_from("ab")),
            draw(st.integers(0, 1)) if dims == 2 else 0,
            draw(st.integers(0, 2)),
            dims == 2 and draw(st.booleans()),
        )
        for _ in range(3)
    )
    return Tiled(
        dims,
        draw(st.sampled_from(TILE_SIZES)),
        draw(st.sampled_from(CLAMPS)),
        dims == 2 and draw(st.booleans()),
        draw(st.integers(0, 2)) if dims == 1 else 0,
        dims == 1 and draw(st.booleans()),
        references,
        draw(st.integers(2, 5)),
    )


def source(program: Tiled) -> str:
    size = {"literal": str(program.literal), "parameter": "b", "constant": "BS"}
    tile = size[program.tile_size]
    # Room for the offsets: every access is in range, as NumPy requires.
    shape = '"n+2"' if program.dims == 1 else '"n+2 n+2"'
    lines = [
        "import numpy as np",
        "from jaxtyping import Float64",
        "",
        "BS = 4",
        "",
        "",
        f"def f(a: Float64[np.ndarray, {shape}], b_: Float64[np.ndarray, {shape}],"
        " n: int, b: int):",
    ]
    points = ("i", "j")[: program.dims]
    depth = 1

    def add(line: str) -> None:
        lines.append("    " * depth + line)

    def tile_loop(var: str) -> None:
        nonlocal depth
        start = program.start if var == "i" else 0
        add(f"for {var}{var} in range({start}, n, {tile}):")
        depth += 1
        if program.clamp.startswith("variable"):
            add(f"hi_{var} = {var}{var} + {tile}")

    def point_loop(var: str) -> None:
        nonlocal depth
        end = f"hi_{var}" if program.clamp.startswith("variable") else f"{var}{var} + {tile}"
        bound = f"min(n, {end})" if program.clamp.endswith("n_first") else f"min({end}, n)"
        add(f"for {var} in range({var}{var}, {bound}):")
        depth += 1

    if program.interleaved:
        for var in points:
            tile_loop(var)
            point_loop(var)
    else:
        for var in points:
            tile_loop(var)
        for var in points:
            point_loop(var)
    texts = [reference_text(program, position) for position in range(3)]
    add(f"{texts[2]} = {texts[0]} + {texts[1]}")
    return "\n".join(lines) + "\n"


def reference_text(program: Tiled, position: int) -> str:
    array, row, column, transposed = program.references[position]
    name = "a" if array == "a" else "b_"
    if program.dims == 1:
        index = "i - ii" if program.within and position == 0 else "i"
        return f"{name}[{index} + {column}]"
    first, second = ("j", "i") if transposed else ("i", "j")
    return f"{name}[{first} + {row}, {second} + {column}]"


def brute_force(program: Tiled, n: int, tile: int) -> tuple[int, int, int]:
    """Iterations, and compulsory bytes with and without write-allocate, by running the
    loops the source describes."""
    touched: dict[tuple[str, tuple[int, ...]], bool] = {}  # element -> first touched by a write
    written: set[tuple[str, tuple[int, ...]]] = set()
    iterations = 0

    def tiles(start: int) -> range:
        return range(start, n, tile)

    def points(low: int) -> range:
        return range(low, min(low + tile, n))

    def body(ii: int, i: int, j: int) -> None:
        nonlocal iterations
        iterations += 1
        for position, (array, row, column, transposed) in enumerate(program.references):
            element: tuple[int, ...]
            if program.dims == 1:
                index = i - ii if program.within and position == 0 else i
                element = (index + column,)
            else:
                first, second = (j, i) if transposed else (i, j)
                element = (first + row, second + column)
            is_write = position == 2
            touched.setdefault((array, element), is_write)
            if is_write:
                written.add((array, element))

    if program.dims == 1:
        for ii in tiles(program.start):
            for i in points(ii):
                body(ii, i, 0)
    elif program.interleaved:
        for ii in tiles(0):
            for i in points(ii):
                for jj in tiles(0):
                    for j in points(jj):
                        body(ii, i, j)
    else:
        for ii in tiles(0):
            for jj in tiles(0):
                for i in points(ii):
                    for j in points(jj):
                        body(ii, i, j)
    allocated = 8 * (len(touched) + len(written))
    plain = 8 * (sum(not first for first in touched.values()) + len(written))
    return iterations, allocated, plain


def _analyze(text: str, name: str = "tiles.py") -> dict[str, FunctionAnalysis]:
    module = lower_source(text, name, PipelineOptions())
    return {f.function.name: f for f in analyze_module(module).functions}


def at(expr: sympy.Expr, **sizes: int) -> sympy.Expr:
    values = {size_symbol(name): value for name, value in sizes.items()}
    return evaluated(sympy.sympify(expr).subs(values))


def _tile_values(program: Tiled) -> list[int]:
    return [program.literal] if program.tile_size == "literal" else [1, 2, 3, 5, 8]


def check_against_brute_force(program: Tiled, *, exact: bool) -> None:
    """FLOPs equal brute force, with no fraction or unknown trip left; so do the compulsory
    bytes where aiscan says they are exact (they may only exceed it where it says they are
    an upper bound, as a tile-local index beside a global one to the same array is)."""
    text = source(program)
    function = _analyze(text)["f"]
    kinds = {u.kind.value for u in function.unknowns}
    assert kinds <= {"footprint-bound"}, (text, [u.message for u in function.unknowns])
    traffic = function.traffic["compulsory"]
    assert traffic.exact or not exact, text
    for tile in _tile_values(program):
        for n in range(program.start + 1, 21):  # where the loops run
            iterations, allocated, plain = brute_force(program, n, tile)
            where = (n, tile, text)
            assert at(function.flops.add, n=n, b=tile, BS=tile) == iterations, where
            for write_allocate, actual in ((True, allocated), (False, plain)):
                counted = at(traffic.total(write_allocate), n=n, b=tile, BS=tile)
                assert not counted.free_symbols, counted
                if traffic.exact:
                    assert counted == actual, (write_allocate, *where)
                else:
                    assert counted >= actual, (write_allocate, *where)


@settings(max_examples=20, deadline=None)
@given(tiled())
def test_tiled_python_nests_are_brute_force(program: Tiled) -> None:
    """Every tile/point pair is recognised (no fraction, no unknown trip), and its FLOPs
    and compulsory bytes equal brute force from the sizes where the tiles run."""
    check_against_brute_force(program, exact=False)


READ_BEFORE_THE_NEXT_COLUMN_TILE = Tiled(
    2,
    "parameter",
    "inline",
    False,
    0,
    False,
    (("a", 1, 0, True), ("a", 1, 1, False), ("a", 0, 2, True)),
    2,
)
"""`a[j, i + 2] = a[j + 1, i] + a[i + 1, j + 1]` over `ii, jj, i, j` (found by the property
above): `a[j + 1, i]` is read before `a[j, i + 2]` stores it where `j + 1` starts a later
column tile of the same row tile, which needs three tiles in a range (n > 2b)."""


def test_first_touch_that_depends_on_the_tile_order_is_an_upper_bound() -> None:
    """Compulsory bytes once fitted on sizes with at most two tiles came out as the untiled
    nest's, marked exact: 720 at n = 7, b = 3 where running the loops gives 728."""
    program = READ_BEFORE_THE_NEXT_COLUMN_TILE
    assert brute_force(program, 7, 3)[2] == 728
    assert brute_force(program, 7, 7)[2] == 720  # one tile: the untiled order
    traffic = _analyze(source(program))["f"].traffic["compulsory"]
    assert not traffic.exact
    assert at(traffic.total(False), n=7, b=3) == 8 * (7 * 7 + 7 * 7 + 7)  # every read first
    check_against_brute_force(program, exact=False)


EXAMPLES = [
    Tiled(1, "literal", "inline", False, 0, False, (("a", 0, 0, False),) * 3, 8),
    Tiled(
        1,
        "literal",
        "variable_n_first",
        False,
        2,
        True,
        (("b", 0, 0, False), ("a", 0, 1, False), ("a", 0, 2, False)),
        3,
    ),
    Tiled(
        1,
        "parameter",
        "variable_n_first",
        False,
        2,
        False,
        (("b", 0, 0, False), ("a", 0, 1, False), ("a", 0, 2, False)),
        2,
    ),
    Tiled(
        1,
        "constant",
        "inline_n_first",
        False,
        1,
        False,
        (("b", 0, 2, False), ("a", 0, 0, False), ("a", 0, 1, False)),
        2,
    ),
    Tiled(
        2,
        "parameter",
        "inline",
        False,
        0,
        False,
        (("a", 0, 0, True), ("b", 1, 0, False), ("b", 0, 0, False)),
        2,
    ),
    Tiled(
        2,
        "literal",
        "variable",
        True,
        0,
        False,
        (("a", 1, 0, False), ("a", 0, 0, False), ("a", 0, 1, False)),
        3,
    ),
    Tiled(
        2,
        "constant",
        "variable_n_first",
        False,
        0,
        False,
        (("a", 0, 0, False), ("a", 0, 0, True), ("b", 0, 0, True)),
        4,
    ),
]


@pytest.mark.parametrize("program", EXAMPLES, ids=lambda p: f"{p.dims}d-{p.tile_size}-{p.clamp}")
def test_tiled_python_nests_that_must_be_exact(program: Tiled) -> None:
    """Fixed cases of the property above, so each form is checked on every run: strips
    from 0 and from 1 or 2, the tile variable in an index, 2-D tiles interleaved with their
    point loops or not, transposed references, written and read arrays overlapping."""
    check_against_brute_force(program, exact=True)


# ---- the fixture, function by function ----------------------------------------------------


Touch = tuple[str, tuple[int, ...], bool]
"""(array, element, is a write), in the order a statement touches them."""

Loops = Callable[[int, int], Iterator[tuple[int, list[Touch]]]]
"""A loop nest at `(n, b)`: per iteration, its FLOPs and what it touches."""


def _blocked_sum(n: int, b: int) -> Iterator[tuple[int, list[Touch]]]:
    for ii in range(0, n, 8):
        for i in range(ii, min(ii + 8, n)):
            yield 1, [("x", (i,), False)]


def _tiled_matmul(n: int, b: int) -> Iterator[tuple[int, list[Touch]]]:
    for ii in range(0, n, b):
        for jj in range(0, n, b):
            for kk in range(0, n, b):
                for i in range(ii, min(ii + b, n)):
                    for j in range(jj, min(jj + b, n)):
                        for k in range(kk, min(kk + b, n)):
                            reads = [("C", (i, j), False), ("A", (i, k), False)]
                            yield 2, [*reads, ("B", (k, j), False), ("C", (i, j), True)]


def _tiled_transpose(n: int, b: int) -> Iterator[tuple[int, list[Touch]]]:
    for ii in range(0, n, 32):
        for i in range(ii, min(n, ii + 32)):
            for jj in range(0, n, b):  # TILE, a module constant: any positive value
                for j in range(jj, min(n, jj + b)):
                    yield 0, [("A", (i, j), False), ("T", (j, i), True)]


def _strip_from_three(n: int, b: int) -> Iterator[tuple[int, list[Touch]]]:
    for ii in range(3, n, 4):
        for i in range(ii, min(ii + 4, n)):
            yield 2, [("x", (i,), False), ("y", (i,), False), ("y", (i,), True)]


def _within_tile(n: int, b: int) -> Iterator[tuple[int, list[Touch]]]:
    for ii in range(0, n, 8):
        for i in range(ii, min(ii + 8, n)):
            local = (i - ii,)
            yield 1, [("w", local, False), ("x", (i,), False), ("w", local, True)]


def _every_bth(n: int, b: int) -> Iterator[tuple[int, list[Touch]]]:
    for i in range(1, n, b):
        yield 1, [("x", (i,), False), ("x", (i,), True)]


def _tile_index(n: int, b: int) -> Iterator[tuple[int, list[Touch]]]:
    for t in range((n + b - 1) // b):
        for i in range(t * b, min(t * b + b, n)):
            yield 1, [("x", (i,), False)]


def _tile_index8(n: int, b: int) -> Iterator[tuple[int, list[Touch]]]:
    for t in range(-(-n // 8)):
        for i in range(8 * t, min(n, 8 * (t + 1))):
            yield 1, [("x", (i,), False), ("y", (i,), False), ("y", (i,), True)]


def _while_tiles(n: int, b: int) -> Iterator[tuple[int, list[Touch]]]:
    ii = 0
    while ii < n:
        for i in range(ii, min(ii + 8, n)):
            yield 1, [("y", (i,), False), ("x", (i,), False), ("y", (i,), True)]
        ii += 8


FIXTURE_LOOPS: dict[str, Loops] = {
    "blocked_sum": _blocked_sum,
    "tiled_matmul": _tiled_matmul,
    "tiled_transpose": _tiled_transpose,
    "strip_from_three": _strip_from_three,
    "within_tile": _within_tile,
    "every_bth": _every_bth,
    "tile_index": _tile_index,
    "tile_index8": _tile_index8,
    "while_tiles": _while_tiles,
}


def _loops_brute_force(loops: Loops, n: int, b: int) -> tuple[int, int]:
    """FLOPs and compulsory bytes (no write-allocate) of running `loops` at `n` and `b`."""
    flops = 0
    first_touch: dict[tuple[str, tuple[int, ...]], bool] = {}
    written: set[tuple[str, tuple[int, ...]]] = set()
    for count, touches in loops(n, b):
        flops += count
        for array, element, is_write in touches:
            first_touch.setdefault((array, element), is_write)
            if is_write:
                written.add((array, element))
    read_first = sum(not write for write in first_touch.values())
    return flops, 8 * (read_first + len(written))


@pytest.fixture(scope="module")
def fixture_functions() -> dict[str, FunctionAnalysis]:
    return _analyze(FIXTURE.read_text(), str(FIXTURE))


@pytest.mark.parametrize("name", sorted(FIXTURE_LOOPS))
def test_fixture_tiles_are_brute_force(
    name: str, fixture_functions: dict[str, FunctionAnalysis]
) -> None:
    function = fixture_functions[name]
    traffic = function.traffic["compulsory"]
    assert not function.unknowns and traffic.exact, [u.message for u in function.unknowns]
    low = 4 if name == "strip_from_three" else 1  # where the loops run
    for b in (1, 2, 3, 5, 16):
        for n in range(low, 21 if name != "tiled_matmul" else 13):
            flops, compulsory = _loops_brute_force(FIXTURE_LOOPS[name], n, b)
            sizes = {"n": n, "b": b, "TILE": b}
            assert at(function.flops.total, **sizes) == flops, (name, n, b)
            assert at(traffic.total(False), **sizes) == compulsory, (name, n, b)


@pytest.mark.parametrize("name", ["other_end", "downward", "half_tiles"])
def test_pairs_that_are_not_tiles_stay_flagged(
    name: str, fixture_functions: dict[str, FunctionAnalysis]
) -> None:
    """A point loop ending elsewhere than its tiles (`min(ii + 8, m)` under `range(0, n,
    8)`), points narrower than the tiles, downward tiles: the alternatives and their named
    fraction, as before."""
    kinds = {u.kind.value for u in fixture_functions[name].unknowns}
    assert "branch-fraction" in kinds
    assert any(s.name.startswith("p_L") for s in fixture_functions[name].flops.total.free_symbols)


_TILE_VARIABLE_IN_BOUNDS = """
import numpy as np
from jaxtyping import Float64


def square_tiles(A: Float64[np.ndarray, "n n"], n: int):
    for ii in range(0, n, 4):
        for i in range(ii, min(ii + 4, n)):
            for k in range(ii, min(ii + 4, n)):
                A[i, k] = A[i, k] + A[k, i]


def triangle_in_tile(x: Float64[np.ndarray, "n"], n: int, b: int):
    s = 0.0
    for ii in range(0, n, b):
        for i in range(ii, min(ii + b, n)):
            for j in range(ii, i):
                s += x[j]
    return s
"""


def _square_tiles(n: int, b: int) -> Iterator[tuple[int, list[Touch]]]:
    for ii in range(0, n, 4):
        for i in range(ii, min(ii + 4, n)):
            for k in range(ii, min(ii + 4, n)):
                yield 1, [("A", (i, k), False), ("A", (k, i), False), ("A", (i, k), True)]


def _triangle_in_tile(n: int, b: int) -> Iterator[tuple[int, list[Touch]]]:
    for ii in range(0, n, b):
        for i in range(ii, min(ii + b, n)):
            for j in range(ii, i):
                yield 1, [("x", (j,), False)]


def test_tile_variable_in_inner_bounds_sums_over_tiles() -> None:
    """Where an inner loop's bounds use the tile variable too (a square tile, a triangle in
    each tile), the pair is not untiled: FLOPs are the exact sum over the tiles (a `Sum` of
    `Min` terms, as in C), and the footprints a flagged upper bound."""
    functions = _analyze(_TILE_VARIABLE_IN_BOUNDS)
    for name, loops in (("square_tiles", _square_tiles), ("triangle_in_tile", _triangle_in_tile)):
        function = functions[name]
        traffic = function.traffic["compulsory"]
        assert {u.kind.value for u in function.unknowns} == {"footprint-bound"}, name
        assert not traffic.exact, name
        for b in (1, 2, 3, 5):
            for n in range(1, 16):
                flops, compulsory = _loops_brute_force(loops, n, b)
                assert at(function.flops.total, n=n, b=b) == flops, (name, n, b)
                assert at(traffic.total(False), n=n, b=b) >= compulsory, (name, n, b)


def test_first_touch_across_tiles_is_not_the_untiled_order() -> None:
    """`b[j, i + 1] = b[j + 1, i] + a[i, j]` under `ii, jj, i, j` tiles: the untiled order
    writes `b[r, c]` at `(c - 1, r)` before reading it at `(c, r - 1)`, but where `r` starts
    a column tile the read runs first (n = 3, tiles of 2: 192 bytes, not 184). The distance
    does not decide there: a flagged bound, never below brute force (it was 184, flagged)."""
    program = Tiled(
        2,
        "literal",
        "inline",
        False,
        0,
        False,
        (("b", 1, 0, True), ("a", 0, 0, False), ("b", 0, 1, True)),
        2,
    )
    function = _analyze(source(program))["f"]
    assert not function.traffic["compulsory"].exact
    check_against_brute_force(program, exact=False)
