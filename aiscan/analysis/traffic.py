"""Bytes moved by a region under MODEL.md's traffic models.

`compulsory`: an infinite cache, cold at the start of the region. Each distinct element
whose first touch is a read costs one read; each distinct element written costs one
write-back; with write-allocate, an element first touched by a write also costs a read.

`streaming`: no reuse between iterations. Every reference executed costs its width;
identical references in one body are merged (a register holds `x[i]` for the body), and a
read of an element the body already wrote is served from that register.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from aiscan.algebra import ONE, SYMPY, ZERO, expand
from aiscan.analysis.domain import bounds_of, untiled
from aiscan.analysis.flops import guarded_executions, weighted_sum
from aiscan.analysis.footprint import Footprint, footprint_of, integer_value, union_size
from aiscan.analysis.polynomials import expanded, linear_coefficient
from aiscan.analysis.walk import Placed, guards_of
from aiscan.ir.nodes import Access, Branch, Loop, Node, Statement, Unknown, UnknownKind
from aiscan.ir.symbols import loop_symbol
from aiscan.ir.tiles import tile_cover

if TYPE_CHECKING:
    import sympy

    from aiscan.analysis.polyhedral import ExactCounts
else:
    sympy = SYMPY

__all__ = ["MODELS", "NUMPY_VIEWS", "Traffic", "compulsory_traffic", "streaming_traffic"]

MODELS = ("compulsory", "streaming")
NUMPY_VIEWS = ("fused", "eager", "jit")


@dataclass(frozen=True, slots=True)
class Traffic:
    """Bytes of one model; `allocate_bytes` is the extra read a write-allocate cache makes."""

    model: str
    read_bytes: sympy.Expr
    write_bytes: sympy.Expr
    allocate_bytes: sympy.Expr
    exact: bool = True

    def reads(self, write_allocate: bool) -> sympy.Expr:
        return _expanded_sum(self.read_bytes, self.allocate_bytes if write_allocate else ZERO)

    def total(self, write_allocate: bool) -> sympy.Expr:
        return _expanded_sum(self.reads(write_allocate), self.write_bytes)

    def __add__(self, other: Traffic) -> Traffic:
        return Traffic(
            self.model,
            _expanded_sum(self.read_bytes, other.read_bytes),
            _expanded_sum(self.write_bytes, other.write_bytes),
            _expanded_sum(self.allocate_bytes, other.allocate_bytes),
            self.exact and other.exact,
        )

    @staticmethod
    def zero(model: str) -> Traffic:
        return Traffic(model, ZERO, ZERO, ZERO)


@lru_cache(maxsize=16384)
def _expanded_sum(first: sympy.Expr, second: sympy.Expr) -> sympy.Expr:
    """Memoized: intensities, reports and function totals ask for the same sums."""
    return expanded(first + second)


@dataclass(frozen=True, slots=True)
class _Reference:
    access: Access
    placed: Placed
    position: int
    """Evaluation order across the region: statement order, then access order."""


def _references(statements: Sequence[Placed]) -> list[_Reference]:
    references = []
    for placed in statements:
        for offset, access in enumerate(placed.statement.accesses):
            references.append(_Reference(access, placed, placed.order * 10_000 + offset))
    return references


def compulsory_traffic(statements: Sequence[Placed]) -> tuple[Traffic, list[Unknown]]:
    by_array: dict[str, list[_Reference]] = defaultdict(list)
    for reference in _references(statements):
        by_array[reference.access.array].append(reference)
    read = write = allocate = ZERO
    exact = True
    unknowns: list[Unknown] = []
    first_positions = _first_positions(statements)
    for array, references in by_array.items():
        width = references[0].access.element.width_bytes
        writes = [r for r in references if r.access.is_write]
        zero_trip = _zero_trip_loop(references) or _ordered_over_triangle(references, writes)
        guarded = next((r for r in references if r.placed.guards), None)
        # Where the boxes cannot be exact, the sets are asked first: the boxes are made
        # only where the sets cannot count (a tenth of an LU's analysis went to them).
        counts = None
        if zero_trip is not None or guarded is not None:
            counts = _exact_by_sets(references, first_positions)
        if counts is None:
            footprints = {id(r): footprint_of(r.access, r.placed.loops) for r in references}
            everything = union_size([footprints[id(r)] for r in references])
            written = union_size([footprints[id(r)] for r in writes])
            write_first = _first_written(writes, references, footprints)
            bounded = next((f for f in (everything, written, write_first) if not f.exact), None)
            if bounded is not None and zero_trip is None and guarded is None:
                counts = _exact_by_sets(references, first_positions)
        if counts is not None:
            read += counts.read_first * width
            write += counts.written * width
            allocate += (counts.touched - counts.read_first) * width
            continue
        read += (everything.count - write_first.count) * width
        write += written.count * width
        allocate += write_first.count * width
        if bounded is None and guarded is not None:
            reason = (
                f"`{guarded.access.text}` runs under a condition on the loop indices the "
                "integer sets could not count; counted as if it always ran"
            )
            bounded = Footprint(everything.count, None, (), False, reason)
        if bounded is None and zero_trip is not None:
            bounded = Footprint(everything.count, None, (), False, zero_trip.reason)
        if bounded is not None:
            exact = False
            unknowns.append(
                Unknown(
                    UnknownKind.FOOTPRINT_BOUND,
                    f"{array}: {bounded.reason}; compulsory bytes are an upper bound",
                    references[0].access.span,
                )
            )
    return Traffic("compulsory", expand(read), expand(write), expand(allocate), exact), unknowns


def _first_positions(statements: Sequence[Placed]) -> dict[int, int]:
    """Each loop's first program position (the order of its first statement), by id."""
    first: dict[int, int] = {}
    for placed in statements:
        for loop in placed.loops:
            first.setdefault(id(loop), placed.order)
    return first


class _Projection(NamedTuple):
    reason: str


def _zero_trip_loop(references: Sequence[_Reference]) -> _Projection | None:
    """Why the box-based projection of a reference's domain may be too large, or None:
    a loop whose variable the index does not use and whose trip count depends on an
    enclosing loop (`for k < i` around `A[i][j]`: for `i = 0` it runs no times, so the
    box of the other variables overcounts what the reference touches); or an unused
    variable two used loops depend on (`l < i <= j` around `b[l*n + j]` touches only
    `l < j`, not every `l` with every `j`)."""
    for reference in references:
        index = reference.access.index
        if index is None:
            continue
        used = {s for e in index for s in e.free_symbols}
        outer: set[sympy.Symbol] = set()
        dependents: dict[sympy.Symbol, int] = {}
        # A tile loop and its point loop cover the point loop's whole range (`untiled`).
        for loop in untiled(bounds_of(reference.placed.loops), frozenset(used)):
            var = loop_symbol(loop.var)
            depends = (loop.start.free_symbols | loop.trip.free_symbols) & outer
            if var not in used and depends:
                return _Projection(
                    f"loop {loop.var} runs zero times for some iterations around it, where "
                    "references outside its index touch nothing"
                )
            if var in used:
                for other in depends & dependents.keys():
                    dependents[other] += 1
            else:
                dependents[var] = 0
            outer.add(var)
        coupled = [var for var, count in dependents.items() if count > 1]
        if coupled:
            return _Projection(
                f"`{reference.access.text}`: loops over its indices depend on each other "
                f"through {coupled[0]}, which it does not use; bounded by their box"
            )
    return None


def _ordered_over_triangle(
    references: Sequence[_Reference], writes: Sequence[_Reference]
) -> _Projection | None:
    """Reads and stores of one array in loops whose ranges depend on enclosing loops: the
    order `_precedes` derives (a sibling nest runs first) assumes every loop runs, and an
    inner loop that runs zero times for some outer iteration breaks it (`b[l]` stored for
    `l < i`, read for `l >= i`: at `i = 0` the read comes first)."""
    if not writes or len(writes) == len(references):
        return None
    first = references[0]
    if all(r.access.index == first.access.index and _same_loops(r, first) for r in references):
        # Every reference touches the same element at the same iteration (`C[i][j] +=`
        # under tiles): the body's order decides first touch, whatever the domain.
        return None
    for reference in references:
        loops = reference.placed.loops
        outer = {loop_symbol(loop.var) for loop in loops}
        if any((loop.start.free_symbols | loop.trip.free_symbols) & outer for loop in loops):
            return _Projection(
                "reads and stores over loops whose ranges depend on each other; the order "
                "of first touch assumes every loop runs"
            )
    return None


def _exact_by_sets(
    references: Sequence[_Reference], first_positions: dict[int, int]
) -> ExactCounts | None:
    """One array's exact counts by integer sets (see `polyhedral`); None when a statement
    sits under a data-dependent branch, or the sets cannot say."""
    if any(r.placed.guards is None for r in references):
        return None
    from aiscan.analysis.polyhedral import PolyReference, exact_counts

    poly = []
    for reference in references:
        placed = reference.placed
        poly.append(
            PolyReference(
                reference.access,
                placed.loops,
                tuple(first_positions[id(loop)] for loop in placed.loops),
                placed.order,
                reference.position - placed.order * 10_000,
                placed.guards or (),
            )
        )
    return exact_counts(poly)


def _first_written(
    writes: Sequence[_Reference],
    references: Sequence[_Reference],
    footprints: dict[int, Footprint],
) -> Footprint:
    """The elements whose first touch is a write.

    For one write reference, element by element: its footprint less those of the reads
    that touch every element they share with it first (`a[i] = a[i-1] + a[i+1]` for `i`
    in `1 .. n-2` writes `a[1]` first, and only it). Otherwise, or when those unions are
    not exact, whole references: the footprints of the writes no read covers entirely.
    A read that may come first though nothing shows it (see `_undecided`) is counted as
    first, which makes the reads an upper bound, flagged."""
    reads = [r for r in references if not r.access.is_write]
    if len(writes) == 1:
        (write,) = writes
        earlier: list[_Reference] = []
        maybe: list[_Reference] = []
        for read in reads:
            if _precedes(read, write):
                earlier.append(read)
            elif _undecided(read, write, footprints):
                maybe.append(read)
        if earlier or maybe:
            lowest = _first_written_by(write, [*earlier, *maybe], footprints)
            if lowest is not None:
                if not maybe:
                    return Footprint(lowest, None, ("first-written", id(write)), True)
                highest = _first_written_by(write, earlier, footprints)
                certain = highest is not None and expand(highest - lowest) == 0
                first = Footprint(lowest, None, ("first-written", id(write)), True)
                return first if certain else _flagged(first, maybe)
    uncovered: list[_Reference] = []
    uncertain: list[_Reference] = []
    pinned = _Pinned.of(reads, references, footprints)
    for write in writes:
        if pinned is not None:
            if pinned.read_first(write, footprints):
                continue
            first_for_part = pinned.first_for_part(write, footprints)
        elif _read_first(write, references, footprints):
            continue
        else:
            # A read that comes first for part of the write (or may) makes a
            # whole-reference decision uncertain: counted as read first.
            first_for_part = [
                r for r in reads if _precedes(r, write) or _undecided(r, write, footprints)
            ]
        if first_for_part:
            uncertain += first_for_part
        else:
            uncovered.append(write)
    return _flagged(union_size([footprints[id(r)] for r in uncovered]), uncertain)


@dataclass
class _Pinned:
    """An array whose every reference is one fixed element outside any loop (straight-line
    code: `a[3] = a[3] + b[3]`), its reads indexed by element and by index.

    There `_precedes(read, write)` is `read.position < write.position`; a read covers a
    write only at the same element or the same index, and a later read is undecided only
    at the same element. So `_read_first` looks up its few candidates, and the reads first
    for part of a write are the earlier ones (a prefix of the reads, in order: a prefix an
    earlier write already gave is not given again, which changes no flagged text) and the
    later ones at its element. The same answers as the whole scan, in time near-linear
    instead of quadratic in the statements (1,000 assignments took 12.5 s).
    """

    reads: Sequence[_Reference]
    positions: list[int]
    by_element: dict[tuple[int, ...], list[int]]
    by_index: dict[tuple[int, ...], list[int]]
    given: int = 0
    """How many reads of the prefix were given as first for part of a write already."""

    @staticmethod
    def of(
        reads: Sequence[_Reference],
        references: Sequence[_Reference],
        footprints: dict[int, Footprint],
    ) -> _Pinned | None:
        """None unless every reference is pinned, with one box shape, reads in order."""
        shapes = set()
        for reference in references:
            if reference.placed.loops or _element(reference, footprints) is None:
                return None
            box = footprints[id(reference)].box
            assert box is not None  # `_element` said so
            shapes.add((len(box.intervals), box.strides))
        positions = [r.position for r in reads]
        if len(shapes) > 1 or positions != sorted(positions):
            return None
        by_element: dict[tuple[int, ...], list[int]] = defaultdict(list)
        by_index: dict[tuple[int, ...], list[int]] = defaultdict(list)
        for ordinal, read in enumerate(reads):
            element, index = _element(read, footprints) or ((), ())
            by_element[element].append(ordinal)
            by_index[index].append(ordinal)
        return _Pinned(reads, positions, by_element, by_index)

    def read_first(self, write: _Reference, footprints: dict[int, Footprint]) -> bool:
        element, index = _element(write, footprints) or ((), ())
        candidates = (*self.by_element.get(element, ()), *self.by_index.get(index, ()))
        return any(_covers(self.reads[i], write, footprints) for i in candidates)

    def first_for_part(
        self, write: _Reference, footprints: dict[int, Footprint]
    ) -> list[_Reference]:
        element, _ = _element(write, footprints) or ((), ())
        earlier = bisect_left(self.positions, write.position)
        first = list(self.reads[self.given : earlier])
        if earlier:
            first = first or [self.reads[earlier - 1]]  # say "some", as the whole scan did
        self.given = max(self.given, earlier)
        first += [
            self.reads[i]
            for i in self.by_element.get(element, ())
            if i >= earlier and _undecided(self.reads[i], write, footprints)
        ]
        return first


def _element(
    reference: _Reference, footprints: dict[int, Footprint]
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The one element a reference touches and its index, as integers; None unless its
    index and its footprint are fixed numbers."""
    index = reference.access.index
    box = footprints[id(reference)].box
    if index is None or box is None:
        return None
    values = [integer_value(e) for e in index]
    lows = [integer_value(low) for low, _ in box.intervals]
    highs = [integer_value(high) for _, high in box.intervals]
    if None in values or None in lows or lows != highs:
        return None
    return tuple(v for v in lows if v is not None), tuple(v for v in values if v is not None)


def _first_written_by(
    write: _Reference, earlier: Sequence[_Reference], footprints: dict[int, Footprint]
) -> sympy.Expr | None:
    """How many elements `write` stores before any of `earlier` reads them: its footprint
    less theirs, |w ∪ R| - |R|; None when those unions are not exact."""
    if not earlier:
        own = footprints[id(write)]
        return own.count if own.exact else None
    others = [footprints[id(r)] for r in earlier]
    with_write = union_size([footprints[id(write)], *others])
    reads_alone = union_size(others)
    if not (with_write.exact and reads_alone.exact):
        return None
    return expand(with_write.count - reads_alone.count)


def _flagged(first_written: Footprint, undecided_reads: Sequence[_Reference]) -> Footprint:
    if not undecided_reads:
        return first_written
    texts = ", ".join(dict.fromkeys(f"`{r.access.text}`" for r in undecided_reads))
    reason = (
        f"whether {texts} first reads what this array's stores write could not be decided "
        "element by element; counted as read first"
    )
    return Footprint(first_written.count, None, first_written.key, False, reason)


def _undecided(read: _Reference, write: _Reference, footprints: dict[int, Footprint]) -> bool:
    """For a read `_precedes` does not show to come first: may it still touch an element
    `write` stores before it does? When their indices use other loop variables in the same
    loops (`b[j-1]` and `b[i-1]`), or a loop around both moves the indices; not when the
    footprints are disjoint, nor for an indirect index (its footprint is already a bound)."""
    r_index, w_index = read.access.index, write.access.index
    if r_index is None or w_index is None:
        return False
    if _disjoint(footprints[id(read)], footprints[id(write)]):
        return False
    if _same_loops(read, write):
        return _iteration_distance(r_index, w_index, read.placed.loops) is None
    common = _common_prefix(read.placed.loops, write.placed.loops)
    index_vars = {s for e in (*r_index, *w_index) for s in e.free_symbols}
    return any(loop_symbol(loop.var) in index_vars for loop in common)


def _disjoint(a: Footprint, b: Footprint) -> bool:
    """Provably no element in common (two boxes whose intersection is empty)."""
    if a.box is None or b.box is None or a.box.strides != b.box.strides:
        return False
    if len(a.box.intervals) != len(b.box.intervals):
        return False
    return bool(a.box.intersect(b.box).size() == 0)


def _read_first(
    write: _Reference, references: Sequence[_Reference], footprints: dict[int, Footprint]
) -> bool:
    """Is every element `write` stores read by some reference before it is stored?"""
    reads = (r for r in references if not r.access.is_write)
    return any(_covers(read, write, footprints) for read in reads)


def _covers(read: _Reference, write: _Reference, footprints: dict[int, Footprint]) -> bool:
    """Does `read` touch every element `write` stores, before it stores it?"""
    if not _precedes(read, write):
        return False
    r_index, w_index = read.access.index, write.access.index
    assert r_index is not None and w_index is not None  # `_precedes` said so
    distance = _iteration_distance(r_index, w_index, read.placed.loops)
    if distance is not None and _same_loops(read, write) and not any(distance):
        return True  # in the same iteration, for every element
    # A fixed number of iterations earlier covers all but what the first iterations
    # store (`a[i]` read, `a[i-1]` stored: `a[-1]` is stored first): then, as for a
    # sibling nest that runs first or a constant index read first, the read covers the
    # write when its footprint contains it.
    read_box, write_box = footprints[id(read)].box, footprints[id(write)].box
    return read_box is not None and write_box is not None and read_box.contains(write_box)


def _precedes(read: _Reference, write: _Reference) -> bool:
    """Does `read` touch every element it shares with `write` before `write` stores it?
    In the same loops when it does so a fixed number of iterations earlier (or in the same
    iteration, earlier in the body); in sibling loops when its nest runs first and no loop
    around both moves the indices."""
    r_index, w_index = read.access.index, write.access.index
    if r_index is None or w_index is None:
        return False
    if _same_loops(read, write):
        loop_vars = {loop_symbol(loop.var) for loop in read.placed.loops}
        if read.position < write.position and not any(e.free_symbols & loop_vars for e in r_index):
            return True  # one element (`x[0]`), read in the first iteration, before any write
        distance = _iteration_distance(r_index, w_index, read.placed.loops)
        if distance is None:
            return False
        for step in distance:
            if step != 0:
                return bool(step < 0)
        return read.position < write.position
    if read.position > write.position:
        return False
    common = _common_prefix(read.placed.loops, write.placed.loops)
    index_vars = {s for e in (*r_index, *w_index) for s in e.free_symbols}
    return not any(loop_symbol(loop.var) in index_vars for loop in common)


def _same_loops(read: _Reference, write: _Reference) -> bool:
    return len(read.placed.loops) == len(write.placed.loops) and all(
        a is b for a, b in zip(read.placed.loops, write.placed.loops, strict=True)
    )


def _common_prefix(a: Sequence[Loop], b: Sequence[Loop]) -> list[Loop]:
    prefix: list[Loop] = []
    for x, y in zip(a, b, strict=False):
        if x is not y:
            break
        prefix.append(x)
    return prefix


def _iteration_distance(
    read_index: tuple[sympy.Expr, ...],
    write_index: tuple[sympy.Expr, ...],
    loops: Sequence[Loop],
) -> list[sympy.Expr] | None:
    """Iterations from the write to the read touching the same element, per loop, in order.

    Defined when both indices are the same, or have the same linear part with each
    dimension `±var + c` of distinct variables; loop variables no index uses get distance 0.
    """
    if len(read_index) != len(write_index):
        return None
    if read_index == write_index:
        # The same element at the same iteration, whatever the index's shape (`i*n + j`
        # too): the order within the body decides for every element.
        return [ZERO] * len(loops)
    loop_vars = {loop_symbol(loop.var) for loop in loops}
    distance_by_var: dict[sympy.Symbol, sympy.Expr] = {}
    for r, w in zip(read_index, write_index, strict=True):
        difference = expand(w - r)
        if not difference.is_number:
            return None
        used = r.free_symbols & loop_vars
        if len(used) > 1:
            return None
        if not used:
            if difference != 0:
                return None
            continue
        (var,) = used
        coefficient = linear_coefficient(r, var)
        if coefficient not in (1, -1) or var in distance_by_var:
            return None
        distance_by_var[var] = difference / coefficient
    distance = [distance_by_var.get(loop_symbol(loop.var), ZERO) / loop.step for loop in loops]
    signs = {bool(step > 0) for step in distance if step != 0}
    if len(signs) > 1 and _tiles_apart(loops):
        # Tile loops outside several point loops (`ii, jj, i, j`) run the points in an
        # order the distance alone does not give: `(i - 1, j + 1)` comes before `(i, j)`
        # within a tile and after it where `j + 1` starts the next column tile.
        return None
    return distance


def _tiles_apart(loops: Sequence[Loop]) -> bool:
    """Some tile loop and its point loop with another loop between them."""
    return any(
        tile_cover(loops[outer], loops[inner]) is not None
        for outer in range(len(loops))
        for inner in range(outer + 2, len(loops))
    )


def streaming_traffic(body: tuple[Node, ...]) -> Traffic:
    """Streaming bytes of a region body (see the module docstring)."""
    totals = _StreamingTotals()
    _stream_body(body, (), ONE, _Registers(), totals)
    return Traffic(
        "streaming",
        weighted_sum(totals.read),
        weighted_sum(totals.write),
        weighted_sum(totals.allocate),
    )


@dataclass
class _StreamingTotals:
    """Bytes per execution count: the widths of all references that run equally often
    add up as integers, leaving one sympy product per distinct count."""

    read: Counter[sympy.Expr] = field(default_factory=Counter)
    write: Counter[sympy.Expr] = field(default_factory=Counter)
    allocate: Counter[sympy.Expr] = field(default_factory=Counter)


@dataclass
class _Registers:
    """References a body already holds in registers: read, and written."""

    reads: set[tuple[str, object]] = field(default_factory=set)
    writes: set[tuple[str, object]] = field(default_factory=set)

    def copy(self) -> _Registers:
        return _Registers(set(self.reads), set(self.writes))


def _stream_body(
    body: tuple[Node, ...],
    loops: tuple[Loop, ...],
    weight: sympy.Expr,
    registers: _Registers,
    totals: _StreamingTotals,
    branches: tuple[tuple[Branch, bool], ...] = (),
) -> None:
    for node in body:
        if isinstance(node, Loop):
            _stream_body(node.body, (*loops, node), weight, _Registers(), totals, branches)
        elif isinstance(node, Branch):
            _stream_statement(node.condition, loops, weight, registers, totals, branches)
            p = node.taken_fraction
            then_registers, else_registers = registers.copy(), registers.copy()
            then_side, else_side = (*branches, (node, True)), (*branches, (node, False))
            _stream_body(node.then_body, loops, weight * p, then_registers, totals, then_side)
            _stream_body(node.else_body, loops, weight * (1 - p), else_registers, totals, else_side)
            # What both arms loaded or stored is in a register after the branch.
            registers.reads |= then_registers.reads & else_registers.reads
            registers.writes |= then_registers.writes & else_registers.writes
        else:
            _stream_statement(node, loops, weight, registers, totals, branches)


def _stream_statement(
    statement: Statement,
    loops: tuple[Loop, ...],
    weight: sympy.Expr,
    registers: _Registers,
    totals: _StreamingTotals,
    branches: tuple[tuple[Branch, bool], ...],
) -> None:
    if not statement.accesses:
        return
    runs = guarded_executions(weight, loops, guards_of(branches))
    for access in statement.accesses:
        key = (access.array, access.index if access.index is not None else access.span)
        width = access.element.width_bytes
        if access.is_write:
            if key not in registers.writes:
                registers.writes.add(key)
                totals.write[runs] += width
                if key not in registers.reads:
                    totals.allocate[runs] += width
        elif key not in registers.reads and key not in registers.writes:
            registers.reads.add(key)
            totals.read[runs] += width
