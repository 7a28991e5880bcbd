"""Property: counts of random loop nests equal brute-force iteration.

Random C nests of up to three loops, each starting at 0 or at an enclosing loop's
variable, running to `n` or to an enclosing variable (`<` or `<=`), with steps of 1 to 3:
triangular and strided domains and their mixtures, some of whose counts have no closed
form and stay exact `Sum`s. Every loop runs at least once for every `n >= 1`, as the
counting contract assumes (docs/model.md). FLOPs must equal the iterations; compulsory
bytes, with write-allocate (every distinct element touched, plus every distinct element
written back) and without (the elements first touched by a read, plus those written),
must equal brute force where aiscan says they are exact, and may only exceed it where it
says they are an upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_domain_sums import evaluated

from aiscan.ir.symbols import size_symbol
from aiscan.pipeline import PipelineOptions, analyze_text

NAMES = ("i", "j", "k")


@dataclass(frozen=True)
class Loop:
    start: str | None
    """None for 0, else the enclosing loop variable it starts at."""
    end: str | None
    """None for `n`, else the enclosing loop variable it runs to."""
    inclusive: bool
    step: int


@st.composite
def nests(draw: st.DrawFn) -> list[Loop]:
    loops: list[Loop] = []
    for depth in range(draw(st.integers(1, 3))):
        outer = list(NAMES[:depth])
        start = draw(st.sampled_from([None, *outer]))
        # Every loop runs: from an outer variable v, run to n (v < n); from 0, run to n or
        # to an outer variable inclusively (v >= 0).
        end = None if start is not None else draw(st.sampled_from([None, *outer]))
        inclusive = end is not None or draw(st.booleans())
        loops.append(Loop(start, end, inclusive, draw(st.integers(1, 3))))
    return loops


def source(loops: list[Loop]) -> str:
    lines = ["void f(int n, double *restrict a, double *restrict b) {"]
    for depth, loop in enumerate(loops):
        var = NAMES[depth]
        relation = "<=" if loop.inclusive else "<"
        bound = loop.end or ("n - 1" if loop.inclusive else "n")
        step = f"{var}++" if loop.step == 1 else f"{var} += {loop.step}"
        lines.append(f"  for (int {var} = {loop.start or 0}; {var} {relation} {bound}; {step})")
    lines.append("    a[0] += 2.0 * b[0];\n}\n")
    return "\n".join(lines)


def iterations(loops: list[Loop], n: int) -> int:
    def run(depth: int, values: dict[str, int]) -> int:
        if depth == len(loops):
            return 1
        loop = loops[depth]
        start = values[loop.start] if loop.start else 0
        last = values[loop.end] if loop.end else n - 1
        return sum(
            run(depth + 1, {**values, NAMES[depth]: v}) for v in range(start, last + 1, loop.step)
        )

    return run(0, {})


@settings(max_examples=60, deadline=None)
@given(nests())
def test_flop_count_is_brute_force_iteration(loops: list[Loop]) -> None:
    analysis = analyze_text(source(loops), "k.c", PipelineOptions()).analysis
    assert analysis is not None
    (function,) = analysis.functions
    assert not function.unknowns, [u.message for u in function.unknowns]
    additions = function.flops.add  # one add (and one multiply) per iteration
    assert function.flops.mul == additions
    for n in range(1, 9):
        assert evaluated(additions.subs(size_symbol("n"), n)) == iterations(loops, n), n


Index = tuple[str | None, str | None, int]
"""`row*n + column + offset`, each of the first two a loop variable or absent."""


@st.composite
def indices(draw: st.DrawFn, depth: int) -> Index:
    names = list(NAMES[:depth])
    offset = draw(st.integers(-1, 2))
    kind = draw(st.sampled_from(["shift", "shift", "linear", "constant"][: 4 if depth > 1 else 2]))
    if kind == "constant" or not names:
        return (None, None, offset)
    column = draw(st.sampled_from(names))
    if kind == "shift":
        return (None, column, offset)
    return (draw(st.sampled_from([v for v in names if v != column])), column, offset)


@st.composite
def statements(draw: st.DrawFn) -> tuple[list[Loop], list[tuple[str, Index]]]:
    """A nest and its one statement `w[.] = r1[.] + r2[.]`: reads first, then the write."""
    loops = draw(nests())
    arrays = st.sampled_from("ab")
    references = [(draw(arrays), draw(indices(len(loops)))) for _ in range(3)]
    return loops, references


def index_text(index: Index) -> str:
    row, column, offset = index
    parts = [f"{row} * n"] if row else []
    parts += [column] if column else []
    return " + ".join([*parts, str(offset)] if offset or not parts else parts)


def footprint_bytes(
    loops: list[Loop], references: list[tuple[str, Index]], n: int, write_allocate: bool = True
) -> int:
    """Compulsory bytes by brute force: with write-allocate every distinct element touched
    plus every distinct element written; without, the elements first touched by a read
    plus every distinct element written."""
    touched: dict[tuple[str, int], bool] = {}  # element -> first touched by a write
    written: set[tuple[str, int]] = set()

    def run(depth: int, values: dict[str, Any]) -> None:
        if depth == len(loops):
            for position, (array, (row, column, offset)) in enumerate(references):
                element = offset + (values[row] * n if row else 0)
                element += values[column] if column else 0
                is_write = position == len(references) - 1
                touched.setdefault((array, element), is_write)
                if is_write:
                    written.add((array, element))
            return
        loop = loops[depth]
        start = values[loop.start] if loop.start else 0
        last = values[loop.end] if loop.end else n - 1
        for value in range(start, last + 1, loop.step):
            run(depth + 1, {**values, NAMES[depth]: value})

    run(0, {})
    read = len(touched) if write_allocate else sum(not first for first in touched.values())
    return 8 * (read + len(written))


@settings(max_examples=40, deadline=None)
@given(statements())
def test_compulsory_bytes_are_brute_force_first_touches(
    program: tuple[list[Loop], list[tuple[str, Index]]],
) -> None:
    loops, references = program
    (read1, index1), (read2, index2), (target, index0) = references
    statement = (
        f"    {target}[{index_text(index0)}] = "
        f"{read1}[{index_text(index1)}] + {read2}[{index_text(index2)}];"
    )
    text = source(loops).replace("    a[0] += 2.0 * b[0];", statement)
    analysis = analyze_text(text, "k.c", PipelineOptions()).analysis
    assert analysis is not None
    traffic = analysis.functions[0].traffic["compulsory"]
    for n in (9, 12):
        for write_allocate in (True, False):
            counted = evaluated(traffic.total(write_allocate).subs(size_symbol("n"), n))
            actual = footprint_bytes(loops, references, n, write_allocate)
            assert not counted.free_symbols, counted
            assert counted == actual if traffic.exact else counted >= actual, (n, text)


@dataclass(frozen=True)
class Condition:
    """`scale*i + offset OP n + shift`, written with the counter on the `side` given."""

    scale: int
    offset: int
    operator: str
    shift: int
    counter_left: bool
    step: int

    def text(self) -> str:
        counter = "i" if self.scale == 1 else f"{self.scale}*i"
        counter += f" + {self.offset}" if self.offset else ""
        bound = "n" + (f" + {self.shift}" if self.shift > 0 else "")
        bound += f" - {-self.shift}" if self.shift < 0 else ""
        if self.counter_left:
            return f"{counter} {self.operator} {bound}"
        flipped = {"<": ">", "<=": ">=", "!=": "!="}[self.operator]
        return f"{bound} {flipped} {counter}"

    def holds(self, i: int, n: int) -> bool:
        left, right = self.scale * i + self.offset, n + self.shift
        return {"<": left < right, "<=": left <= right, "!=": left != right}[self.operator]


@st.composite
def conditions(draw: st.DrawFn) -> Condition:
    operator = draw(st.sampled_from(["<", "<=", "!="]))
    if operator == "!=":  # `!=` stops only on an exact hit: unit scale and step
        return Condition(1, draw(st.integers(0, 2)), "!=", draw(st.integers(0, 2)), True, 1)
    return Condition(
        draw(st.integers(1, 3)),
        draw(st.integers(0, 2)),
        operator,
        draw(st.integers(-2, 2)),
        draw(st.booleans()),
        draw(st.integers(1, 3)),
    )


@settings(max_examples=60, deadline=None)
@given(conditions(), st.booleans())
def test_affine_loop_conditions_count_as_brute_force(condition: Condition, nested: bool) -> None:
    """`i + 1 < n`, `n - 2 >= 2*i`, `i + 2 != n + 1`...: the trip count in closed form equals
    running the loop, wherever the loop runs at all (bounds in order, docs/model.md)."""
    step = "i++" if condition.step == 1 else f"i += {condition.step}"
    loop = f"  for (int i = 0; {condition.text()}; {step})\n    a[i] += 2.0 * b[i];\n"
    outer = "  for (int j = 0; j < n; j++)\n" if nested else ""
    text = f"void f(int n, double *restrict a, double *restrict b) {{\n{outer}{loop}}}\n"
    analysis = analyze_text(text, "k.c", PipelineOptions()).analysis
    assert analysis is not None
    (function,) = analysis.functions
    assert not function.unknowns, [u.message for u in function.unknowns]
    for n in range(1, 13):
        trips, i = 0, 0
        while condition.holds(i, n) and trips < 100:
            trips, i = trips + 1, i + condition.step
        if trips == 0 or trips == 100:
            continue  # the loop does not run (or `!=` overshoots): outside the contract
        counted = evaluated(function.flops.add.subs(size_symbol("n"), n))
        assert counted == trips * (n if nested else 1), (n, text)


@dataclass(frozen=True)
class Walk:
    """`a[wa] = a[ra] + 2.0 * b[rb]; a += sa; b += sb;` in a `for` over `n` or in
    `while (n > 0) { ...; n -= count_step; }`."""

    as_while: bool
    count_step: int
    a_step: int
    b_step: int
    write_offset: int
    read_offset: int
    b_offset: int

    def source(self) -> str:
        body = (
            f"a[{self.write_offset}] = a[{self.read_offset}] + 2.0 * b[{self.b_offset}];"
            f" a += {self.a_step}; b += {self.b_step};"
        )
        if self.as_while and self.count_step == 1:
            loop = f"  while (n--) {{ {body} }}\n"  # the counter moved in the test
        elif self.as_while:
            loop = f"  while (n > 0) {{ {body} n -= {self.count_step}; }}\n"
        else:
            loop = f"  for (int i = 0; i < n; i++) {{ {body} }}\n"
        return f"void f(int n, double *restrict a, double *restrict b) {{\n{loop}}}\n"

    def trips(self, n: int) -> int:
        return -(-n // self.count_step) if self.as_while else n


walks = st.builds(
    Walk,
    st.booleans(),
    st.integers(1, 3),
    st.integers(1, 2),
    st.integers(0, 2),
    st.integers(0, 2),
    st.integers(0, 2),
    st.integers(0, 1),
)


@settings(max_examples=40, deadline=None)
@given(walks)
def test_pointer_walks_count_as_brute_force(walk: Walk) -> None:
    """A pointer moved by a constant each pass reads element `t*step + c` at iteration `t`:
    FLOPs and compulsory bytes equal running the loop (exact), or exceed it (flagged)."""
    analysis = analyze_text(walk.source(), "k.c", PipelineOptions()).analysis
    assert analysis is not None
    (function,) = analysis.functions
    traffic = function.traffic["compulsory"]
    # Sizes with at least two passes: the union of shifted ranges (a[t], a[t + 2]) is
    # counted as one interval, which misses the gap a single pass leaves (issue 14).
    for n in (6, 8, 13):
        trips = walk.trips(n)
        assert evaluated(function.flops.total.subs(size_symbol("n"), n)) == 2 * trips
        touched: dict[tuple[str, int], bool] = {}
        written: set[tuple[str, int]] = set()
        for t in range(trips):
            a, b = t * walk.a_step, t * walk.b_step
            for element, is_write in (
                (("a", a + walk.read_offset), False),
                (("b", b + walk.b_offset), False),
                (("a", a + walk.write_offset), True),
            ):
                touched.setdefault(element, is_write)
                if is_write:
                    written.add(element)
        for write_allocate in (True, False):
            read = len(touched) if write_allocate else sum(not w for w in touched.values())
            actual = 8 * (read + len(written))
            counted = evaluated(traffic.total(write_allocate).subs(size_symbol("n"), n))
            assert counted == actual if traffic.exact else counted >= actual, (n, walk)


@settings(max_examples=40, deadline=None)
@given(conditions())
def test_affine_conditions_on_an_outer_counter_sum_as_brute_force(condition: Condition) -> None:
    """The same conditions with the bound on an enclosing counter (`i + 1 < j + 2`): a
    triangular domain, summed exactly; the shift keeps every inner trip count >= 0."""
    shift = max(condition.shift, condition.offset)
    condition = Condition(
        condition.scale,
        condition.offset,
        condition.operator,
        shift,
        condition.counter_left,
        condition.step,
    )
    step = "i++" if condition.step == 1 else f"i += {condition.step}"
    inner = condition.text().replace("n", "j")
    text = (
        "void f(int n, double *restrict a, double *restrict b) {\n"
        f"  for (int j = 0; j < n; j++)\n    for (int i = 0; {inner}; {step})\n"
        "      a[i] += 2.0 * b[j];\n}\n"
    )
    analysis = analyze_text(text, "k.c", PipelineOptions()).analysis
    assert analysis is not None
    (function,) = analysis.functions
    # Footprints over such domains may be flagged bounds; the trip counts may not.
    trips = [u.message for u in function.unknowns if u.kind.value == "data-dependent-bound"]
    assert not trips, trips
    for n in range(1, 10):
        total = 0
        for j in range(n):
            i = 0
            while condition.holds(i, j) and i < 100:
                total, i = total + 1, i + condition.step
        counted = evaluated(function.flops.add.subs(size_symbol("n"), n))
        assert counted == total, (n, text)
