"""The `cache` traffic model: bytes each level of a cache hierarchy serves, by layer conditions.

The layer-condition analysis of the ECM/roofline literature (Stengel et al., "Quantifying
performance bottlenecks of stencil computations using the Execution-Cache-Memory model",
ICS 2015; Kerncraft's LC predictor) asks, for every loop, whether the data touched between
a reuse and the reuse itself fits in a cache. Here the question is asked per loop of the
nest tree, outermost first, with one reuse distance per loop: one iteration of the loop
(what the loops inside it touch, in whole cache lines). When that working set fits in the
cache's capacity times the safety factor 1/2, reuse between iterations of the loop is kept
and the loop costs its footprint in lines (every line once); otherwise no reuse crosses its
iterations and it costs the sum over its iterations of what its body costs. The region as
a whole starts cold, so no level ever moves less than the compulsory lines.

Pure functions from IR to typed results. Sizes decide each layer condition when given;
without them a working set that grows with the sizes is taken not to fit (the large-size
branch), and each condition says at which size it breaks. Indirect and non-affine
references make the reuse undecidable: the level's traffic is then the range between the
compulsory and the streaming bytes, flagged with the reference and its line. Flat
subscripts (`u[i*nx*ny + j*nx + k]`) are split into their dimensions first, where the
loops prove the split exact (`analysis.delinearize`), so that they are decided as the
multi-dimensional form is.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from math import gcd
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, ZERO, constant, expand, is_poly, symbol
from aiscan.analysis.delinearize import delinearized
from aiscan.analysis.domain import sum_over_loop, sum_over_loops
from aiscan.analysis.footprint import Footprint, footprint_of, union_size
from aiscan.analysis.intensity import finite_value, size_bindings
from aiscan.analysis.point_values import NotEvaluated, point_value, symbol_names
from aiscan.analysis.polyhedral import PolyReference, exact_counts
from aiscan.analysis.polynomials import linear_coefficient
from aiscan.analysis.traffic import Traffic, compulsory_traffic, streaming_traffic
from aiscan.analysis.walk import Placed, placed_statements
from aiscan.analysis.working_sets import exact_union
from aiscan.ir.nodes import Access, Branch, Loop, Node
from aiscan.ir.symbols import is_size_symbol, loop_symbol
from aiscan.real_roots import integer_coefficients, numeric_roots
from aiscan.substitution import substituted

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = [
    "MAX_COUNTED_ELEMENTS",
    "SAFETY_FACTOR",
    "BrokenReuse",
    "CacheLevelSpec",
    "LayerCondition",
    "LevelTraffic",
    "WholeCache",
    "broken_reuses",
    "cache_traffic",
    "miss_traffic",
]

SAFETY_FACTOR = Fraction(1, 2)
"""A layer condition holds when the working set fills at most half the cache: the safety
margin of the ECM layer-condition papers (Stengel et al. 2015), which absorbs conflict
misses, LRU approximations and the other data a real cache holds. (Kerncraft's LC
predictor compares with the full capacity; see docs/model.md.)"""


MAX_COUNTED_ELEMENTS = 2_000_000
"""A union is counted by integer sets only where the box rules bound it by this many
elements or fewer at the sizes (16 MB of doubles, past every private cache's share):
isl's counts take time with the points counted, and beyond it the bound stays."""


@dataclass(frozen=True, slots=True)
class CacheLevelSpec:
    """One cache as the model sees it: the capacity one core's working set may use (its
    share of a shared cache; see docs/model.md) and the line a miss moves."""

    name: str
    capacity_bytes: float
    line_bytes: int
    safety_factor: float = float(SAFETY_FACTOR)
    """The fraction of the capacity a working set may fill for its reuse to be kept."""


@dataclass(frozen=True, slots=True)
class LayerCondition:
    """Whether one iteration of a loop fits in a cache: `working_set <= capacity` with the
    safety factor already applied to `capacity_bytes`."""

    cache: str
    loop_var: str
    line: int
    working_set: sympy.Expr
    capacity_bytes: float
    holds: bool
    by_size: bool
    """True when decided at the given sizes; False when by the large-size assumption."""
    iterations: tuple[sympy.Expr, sympy.Expr] | None = None
    """The first and last value of the counter when the condition is decided for a piece
    of the loop's range (the range split where a working set crosses the capacity)."""
    inside: tuple[Loop, ...] = ()
    """The loops inside this one, over whose ranges `breaks_at` takes the working set."""

    @property
    def breaks_at(self) -> float | None:
        """With all sizes equal, the size above which the working set no longer fits.
        Computed when read: only the JSON report writes it, and a root of degree two
        imports mpmath, a tenth of a one-kernel run."""
        return _breaking_size(self.working_set, self.inside, self.capacity_bytes)


@dataclass(frozen=True, slots=True)
class BrokenReuse:
    """A reuse a loop carries that the cache loses at the given sizes: one iteration of
    `loop` touches `working_set_bytes`, over `capacity_bytes` (half the cache), so the
    cache moves `lost_bytes` more than if it fitted. Blocking `block_loop` (the loop
    inside it) by `block_size` iterations would make an iteration fit; None when no
    block of one iteration or more does."""

    cache: str
    loop: Loop
    working_set_bytes: float
    capacity_bytes: float
    lost_bytes: float
    fitted_bytes: float
    """What the cache would move were the condition to hold."""
    block_loop: Loop | None
    block_size: int | None


@dataclass(frozen=True, slots=True)
class Undecided:
    reason: str
    line: int


@dataclass(frozen=True, slots=True)
class WholeCache:
    """A level's bytes if working sets may fill the whole cache (a safety factor of 1):
    the other end of a range whose placed end is the safety factor's, kept where some
    layer condition is decided otherwise there (issue 32: an LRU cache keeps what fills
    it whole, which the ECM margin does not count on)."""

    read: sympy.Expr
    write: sympy.Expr
    conditions: tuple[LayerCondition, ...]
    """The conditions that hold only at the whole cache: their working set lies between
    the safety factor's share of the capacity and the capacity."""
    safety_factor: float
    """The share of the cache the placed end allows."""

    @property
    def total(self) -> sympy.Expr:
        return expand(self.read + self.write)


@dataclass(frozen=True, slots=True)
class LevelTraffic:
    """Bytes one level serves to the levels inside it (to the core, for the first)."""

    level: str
    read: sympy.Expr
    write: sympy.Expr
    exact: bool
    conditions: tuple[LayerCondition, ...] = ()
    undecided: tuple[Undecided, ...] = ()
    read_lower: sympy.Expr | None = None
    """When undecided: the compulsory read bytes, the low end of the range `read` tops."""
    write_lower: sympy.Expr | None = None
    whole_cache: WholeCache | None = None
    """At given sizes, where a layer condition holds at the whole cache and not at its
    safe share: the bytes then (`read`/`write` stay the placed, conservative end)."""

    @property
    def total(self) -> sympy.Expr:
        return expand(self.read + self.write)


def cache_traffic(
    body: tuple[Node, ...],
    caches: Sequence[CacheLevelSpec],
    main_memory: str,
    *,
    write_allocate: bool,
    sizes: Mapping[str, int] | None = None,
    whole_cache: bool = True,
) -> tuple[LevelTraffic, ...]:
    """Per level, from the core outwards: the first entry is what the innermost cache
    serves to the core (every load and store the body makes, register reuse within an
    iteration only: the streaming model without write-allocate); each later entry, the
    misses of the cache before it; the last, `main_memory`, the misses of the outermost.
    `whole_cache`: each miss level also carries its bytes at the whole capacity where
    they differ (`LevelTraffic.whole_cache`, the reports' ranges)."""
    if not caches:
        return ()
    body = delinearized(body)
    streaming = streaming_traffic(body)
    levels = [LevelTraffic(caches[0].name, streaming.read_bytes, streaming.write_bytes, True)]
    names = [c.name for c in caches[1:]] + [main_memory]
    for cache, name in zip(caches, names, strict=True):
        levels.append(
            miss_traffic(
                body,
                cache,
                name,
                write_allocate=write_allocate,
                sizes=sizes,
                streaming=streaming,
                whole_cache=whole_cache,
            )
        )
    return tuple(levels)


def miss_traffic(
    body: tuple[Node, ...],
    cache: CacheLevelSpec,
    level: str,
    *,
    write_allocate: bool,
    sizes: Mapping[str, int] | None = None,
    streaming: Traffic | None = None,
    whole_cache: bool = False,
) -> LevelTraffic:
    """The bytes `cache` misses, which `level` (the next level out) serves: its layer
    conditions decided at `sizes`, or the range between compulsory and streaming bytes
    where some reference's reuse is undecidable (`streaming`: the body's streaming
    traffic, when the caller has it). GPUs ask it for their L2 alone
    (`analysis.gpu_dram`). `whole_cache`: also the bytes at the whole capacity
    (`LevelTraffic.whole_cache`), evaluated only where a working set came out between
    the safe share and the whole."""
    statements = placed_statements(body)
    undecided = _undecided(statements)
    if undecided:
        streaming = streaming or streaming_traffic(body)
        compulsory, _ = compulsory_traffic(statements)
        return LevelTraffic(
            level,
            streaming.reads(write_allocate),
            streaming.write_bytes,
            False,
            undecided=undecided,
            read_lower=compulsory.reads(write_allocate),
            write_lower=compulsory.write_bytes,
        )
    band = _band(cache) if whole_cache else None
    model = _Model(cache, write_allocate, dict(sizes or {}), band=band)
    read, write = model.sequence(body, ())
    read, write = expand(read), expand(write)
    other = None
    if model.near_boundary:
        other = _whole_cache(body, cache, write_allocate, dict(sizes or {}), (read, write))
    return LevelTraffic(
        level, read, write, not model.bounded, tuple(model.conditions), whole_cache=other
    )


def _band(cache: CacheLevelSpec) -> tuple[float, float] | None:
    """The working sets a layer condition decides differently at the cache's safe share
    and at its whole capacity; None where the share is the whole."""
    if cache.safety_factor >= 1:
        return None
    return float(cache.capacity_bytes * cache.safety_factor), float(cache.capacity_bytes)


def _whole_cache(
    body: tuple[Node, ...],
    cache: CacheLevelSpec,
    write_allocate: bool,
    sizes: dict[str, int],
    placed: tuple[sympy.Expr, sympy.Expr],
) -> WholeCache | None:
    """The level's bytes with the whole capacity; None where they are not below the
    placed bytes at the sizes (or either is not a number there): more room keeps more
    reuse, so where the model says otherwise its footprints are loose bounds (as where a
    range split comes out higher, in `_Model.loop`) and there is no range to state."""
    model = _Model(replace(cache, safety_factor=1.0), write_allocate, sizes, band=_band(cache))
    read, write = model.sequence(body, ())
    read, write = expand(read), expand(write)
    ends = [finite_value(_at_sizes(expand(r + w), sizes)) for r, w in (placed, (read, write))]
    if ends[0] is None or ends[1] is None or ends[1] >= ends[0]:
        return None
    return WholeCache(read, write, tuple(model.near), cache.safety_factor)


def broken_reuses(
    body: tuple[Node, ...],
    cache: CacheLevelSpec,
    *,
    write_allocate: bool,
    sizes: Mapping[str, int],
) -> tuple[BrokenReuse, ...]:
    """The reuses `cache` loses at `sizes` (layer conditions that break there and cost
    bytes), with the loop to block and the block size that would keep them."""
    body = delinearized(body)
    if not sizes or _undecided(placed_statements(body)):
        return ()
    model = _Model(cache, write_allocate, dict(sizes), explain=True)
    model.sequence(body, ())
    return tuple(model.broken)


def _undecided(statements: Sequence[Placed]) -> tuple[Undecided, ...]:
    """References whose footprint is not exact: their reuse cannot be decided."""
    found: dict[str, Undecided] = {}
    for placed in statements:
        for access in placed.statement.accesses:
            footprint = footprint_of(access, placed.loops)
            if not footprint.exact:
                found.setdefault(
                    access.text,
                    Undecided(
                        f"{footprint.reason}: reuse undecidable, range between compulsory "
                        "and streaming",
                        access.span.line,
                    ),
                )
    return tuple(found.values())


_ArrayBytes = tuple[tuple["sympy.Expr", ...], tuple["sympy.Expr", ...], bool]
"""Bytes read and written per array group, and whether every count is exact."""

_SIZE_FREE_ARRAYS: dict[tuple[object, ...], _ArrayBytes] = {}
"""`_Model._arrays` by its nodes, fixed loops, kind and line size, where its counts hold
at every size. The nodes memoize their hash, and equal nests have equal counts."""
_SIZE_FREE_LIMIT = 8192
"""Entries kept before the memo starts over (a long-lived editor server's bound)."""


@dataclass
class _Model:
    cache: CacheLevelSpec
    write_allocate: bool
    sizes: dict[str, int]
    explain: bool = False
    band: tuple[float, float] | None = None
    """Working sets above the first and up to the second (the cache's safe share, its
    whole capacity) are noted: there the whole cache decides otherwise."""
    conditions: list[LayerCondition] = field(default_factory=list)
    broken: list[BrokenReuse] = field(default_factory=list)
    bounded: bool = False
    """Some footprint was an upper bound (a union the box rules cannot count exactly, or
    groups of references with other line costs added): the level's bytes are a bound."""
    near: list[LayerCondition] = field(default_factory=list)
    """The conditions decided with a working set in `band`."""
    near_boundary: bool = False
    """Some working set (a condition's, or one a range split crossed) fell in `band`."""
    sized_union: bool = False
    """The `_arrays` being counted reached a union that the sizes may decide."""

    @property
    def capacity(self) -> float:
        return float(self.cache.capacity_bytes * self.cache.safety_factor)

    def sequence(
        self, nodes: tuple[Node, ...], outer: tuple[Loop, ...]
    ) -> tuple[sympy.Expr, sympy.Expr]:
        """Bytes of running `nodes` once, the loops in `outer` fixed. Statements between
        loops run once each: together they move each line they touch once (`a[0] = ...;
        return a[0];` reads a's line once, not once per statement)."""
        read, write = ZERO, ZERO
        for is_loop, run in itertools.groupby(nodes, key=lambda n: isinstance(n, Loop)):
            if is_loop:
                for node in run:
                    assert isinstance(node, Loop)
                    r, w = self.loop(node, outer)
                    read, write = read + r, write + w
            else:
                r, w = self.footprint(tuple(run), outer)
                read, write = read + r, write + w
        return read, write

    def loop(self, loop: Loop, outer: tuple[Loop, ...]) -> tuple[sympy.Expr, sympy.Expr]:
        """Bytes of `loop`, its range split where a working set crosses the capacity."""
        pieces = self._pieces(loop, outer)
        if len(pieces) == 1:
            return self._decided(loop, outer)
        before = self._state()
        whole = self._decided(loop, outer)
        undivided = self._state()
        self._restore(before)
        read, write = ZERO, ZERO
        for piece in pieces:
            r, w = self._decided(piece, outer, whole=loop)
            read, write = read + r, write + w
        # Keeping reuse in some pieces can only lower the traffic; where a fitting piece's
        # footprint is a loose bound (unions the box rules over-count) it can come out
        # higher, and where a size is not given it cannot be compared: the loop is then
        # decided whole, as without the split.
        split, kept = self._moved((read, write), outer), self._moved(whole, outer)
        if split is None or kept is None or split > kept:
            self._restore(undivided)
            return whole
        return read, write

    def _moved(
        self, traffic: tuple[sympy.Expr, sympy.Expr], outer: tuple[Loop, ...]
    ) -> float | None:
        """Bytes at the sizes over every execution (the loops in `outer` run it many times)."""
        return finite_value(
            _at_sizes(sum_over_loops(traffic[0] + traffic[1], list(outer)), self.sizes)
        )

    def _state(
        self,
    ) -> tuple[list[LayerCondition], list[BrokenReuse], bool, list[LayerCondition]]:
        return list(self.conditions), list(self.broken), self.bounded, list(self.near)

    def _restore(
        self, state: tuple[list[LayerCondition], list[BrokenReuse], bool, list[LayerCondition]]
    ) -> None:
        self.conditions[:] = state[0]
        self.broken[:] = state[1]
        self.bounded = state[2]
        self.near[:] = state[3]

    def _in_band(self, low: float, high: float) -> bool:
        """Whether working sets from `low` to `high` meet `band` (and note it)."""
        if self.band is not None and low <= self.band[1] and high > self.band[0]:
            self.near_boundary = True
            return True
        return False

    def _decided(
        self, loop: Loop, outer: tuple[Loop, ...], *, whole: Loop | None = None
    ) -> tuple[sympy.Expr, sympy.Expr]:
        """Bytes of `loop` with its layer condition decided once, over its whole range
        (`whole`: the loop that `loop` is a piece of)."""
        inside = (*outer, loop)
        working_set = self.working_set(loop.body, inside)
        if self.fits(working_set, loop, inside, piece=whole is not None):
            return self.footprint((loop,), outer)
        read, write = self.sequence(loop.body, inside)
        # At the loop's own nesting level: a sum with no closed form inside keeps its own
        # variable, which this sum must not capture.
        level = len(outer)
        read = sum_over_loop(read, loop, level, outer)
        write = sum_over_loop(write, loop, level, outer)
        if self.explain and self.conditions[-1].by_size:
            self._explain(loop, outer, working_set, read + write, whole or loop)
        return read, write

    def _pieces(self, loop: Loop, outer: tuple[Loop, ...]) -> tuple[Loop, ...]:
        """`loop`'s range cut where the working set of it or of a loop inside it crosses
        the capacity as `loop`'s counter moves (triangular nests: LU's trailing matrix,
        a triangle's growing rows), so that each piece is decided on its own side instead
        of the whole range at its largest working set. Only at given sizes, and only
        where an inner loop's bounds move with the counter; `(loop,)` otherwise."""
        if not self.sizes:
            return (loop,)
        var = loop_symbol(loop.var)
        inner = list(_loops_inside(loop.body, (loop,)))
        if not any(var in (m.start.free_symbols | m.trip.free_symbols) for m, _ in inner):
            return (loop,)
        # Each cut is found at the sizes and at every size one larger: a cut that keeps
        # its distance from the range's start (or end) there is written from that end, so
        # the pieces stay exact polynomials while the sizes grow (a growing triangle's
        # rows that fit, a shrinking one's).
        larger = {name: value + 1 for name, value in self.sizes.items()}
        offsets: dict[int, sympy.Expr] = {}
        for member, path in [(loop, (loop,)), *inner]:
            working_set = self.working_set(member.body, (*outer, *path))
            found = [
                self._crossing(working_set, loop, (*outer, *path[1:]), s)
                for s in (self.sizes, larger)
            ]
            if found[0] is None:
                continue
            (cut, trip), other = found[0], found[1]
            if other is not None and other[1] - other[0] == trip - cut and other[0] != cut:
                offsets[cut] = expand(loop.trip - (trip - cut))  # the same distance from the end
            else:
                offsets[cut] = constant(cut)
        if not offsets:
            return (loop,)
        bounds = [ZERO, *(offsets[c] for c in sorted(offsets)), loop.trip]
        return tuple(
            replace(loop, start=expand(loop.start + loop.step * a), trip=expand(b - a))
            for a, b in itertools.pairwise(bounds)
        )

    def _crossing(
        self,
        working_set: sympy.Expr,
        loop: Loop,
        others: tuple[Loop, ...],
        sizes: Mapping[str, int],
    ) -> tuple[int, int] | None:
        """The first iteration of `loop` at `sizes` whose working set is on the other side
        of the capacity from the first iteration's (by bisection: working sets move one
        way with the counter), with the trip; None when both ends are on one side. The
        `others` loops are taken where the working set is largest, as `fits` takes them."""
        var = loop_symbol(loop.var)
        at_sizes = _worst_at_sizes(working_set, others, sizes, var.name)
        trip = finite_value(_at_sizes(loop.trip, sizes))
        if at_sizes.free_symbols != {var} or trip is None or trip < 2:
            return None
        start = _at_sizes(loop.start, sizes)
        origin = start.constant_value() if is_poly(start) and is_poly(at_sizes) else None

        def value(t: int) -> float | None:
            if origin is not None:  # exact, without sympy's substitution (a bisection's steps)
                at = {var.name: Fraction(origin) + loop.step * t}
                return finite_value(constant(point_value(at_sizes, at)))
            return finite_value(at_sizes.subs(var, start + loop.step * t))

        def fits(t: int) -> bool | None:
            found = value(t)
            return None if found is None else found <= self.capacity

        low, high = value(0), value(int(trip) - 1)
        if low is not None and high is not None:  # the cut moves with the capacity
            self._in_band(min(low, high), max(low, high))
        first, last = fits(0), fits(int(trip) - 1)
        if first is None or last is None or first == last:
            return None
        low, high = 0, int(trip) - 1  # fits(low) == first != fits(high)
        while high - low > 1:
            middle = (low + high) // 2
            side = fits(middle)
            if side is None:
                return None
            low, high = (middle, high) if side == first else (low, middle)
        return high, int(trip)

    def _explain(
        self,
        loop: Loop,
        outer: tuple[Loop, ...],
        working_set: sympy.Expr,
        cost: sympy.Expr,
        whole: Loop,
    ) -> None:
        """Record the broken condition when it costs bytes at the sizes (a loop whose
        iterations share nothing loses nothing), with a block of the next loop inside;
        under `whole`, the loop as written, its pieces' losses added up."""
        fitted_read, fitted_write = self.footprint((loop,), outer)
        inside = (*outer, loop)
        # Over every execution of the loop (the loops around it run it many times).
        fitted = finite_value(
            _at_sizes(sum_over_loops(fitted_read + fitted_write, list(outer)), self.sizes)
        )
        paid = finite_value(_at_sizes(sum_over_loops(cost, list(outer)), self.sizes))
        size = finite_value(_worst_at_sizes(working_set, inside, self.sizes))
        if fitted is None or paid is None or size is None or paid <= fitted:
            return
        inner = next((n for n in loop.body if isinstance(n, Loop)), None)
        block = None if inner is None else self._block(loop, inner, inside)
        found = BrokenReuse(
            self.cache.name, whole, size, self.capacity, paid - fitted, fitted, inner, block
        )
        for index, earlier in enumerate(self.broken):
            if earlier.loop is whole:  # another piece of the same loop
                found = replace(
                    earlier if earlier.working_set_bytes >= size else found,
                    lost_bytes=earlier.lost_bytes + found.lost_bytes,
                    fitted_bytes=earlier.fitted_bytes + found.fitted_bytes,
                )
                self.broken[index] = found
                return
        self.broken.append(found)

    def _block(self, loop: Loop, inner: Loop, inside: tuple[Loop, ...]) -> int | None:
        """The largest number of `inner`'s iterations one iteration of `loop` may run for
        its working set to fit; None when not even one does."""
        block = sympy.Symbol("aiscan_block", positive=True, integer=True)
        body = tuple(replace(n, trip=block) if n is inner else n for n in loop.body)
        working_set = _worst_at_sizes(
            self.working_set(body, inside), inside, self.sizes, block.name
        )
        if working_set.free_symbols != {block}:
            return None
        best = None
        low, high = 1, 1 << 40
        trip = finite_value(_at_sizes(inner.trip, self.sizes))
        if trip is not None:
            high = int(trip)
        while low <= high:  # working sets grow with the block: bisect
            middle = (low + high) // 2
            value = finite_value(working_set.subs(block, middle))
            if value is not None and value <= self.capacity:
                best, low = middle, middle + 1
            else:
                high = middle - 1
        return best

    def working_set(self, nodes: tuple[Node, ...], outer: tuple[Loop, ...]) -> sympy.Expr:
        """Distinct bytes (whole lines) `nodes` touch with `outer` fixed (at the sizes,
        where a union is counted by integer sets: it is only compared there)."""
        return expand(sum(self._arrays(nodes, outer, everything=True, at_sizes=True)[0], ZERO))

    def footprint(
        self, nodes: tuple[Node, ...], outer: tuple[Loop, ...]
    ) -> tuple[sympy.Expr, sympy.Expr]:
        """Read and written bytes of `nodes` when every line is moved once."""
        reads, writes, exact = self._arrays(nodes, outer, everything=self.write_allocate)
        self.bounded = self.bounded or not exact
        return expand(sum(reads, ZERO)), expand(sum(writes, ZERO))

    def _arrays(
        self,
        nodes: tuple[Node, ...],
        outer: tuple[Loop, ...],
        *,
        everything: bool,
        at_sizes: bool = False,
    ) -> _ArrayBytes:
        """Bytes read and written per array group, and whether every count is exact
        (`at_sizes`: a count may hold the given sizes as numbers). Memoized where no union
        was counted at the sizes: the counts are then the same at every size, and a size
        path asks for them again at every size of its sweep (`_SIZE_FREE_ARRAYS`)."""
        key = (nodes, outer, everything, at_sizes, self.cache.line_bytes)
        found = _SIZE_FREE_ARRAYS.get(key)
        if found is not None:
            return found
        self.sized_union = False
        counted = self._counted_arrays(nodes, outer, everything=everything, at_sizes=at_sizes)
        if not self.sized_union:
            if len(_SIZE_FREE_ARRAYS) >= _SIZE_FREE_LIMIT:
                _SIZE_FREE_ARRAYS.clear()
            _SIZE_FREE_ARRAYS[key] = counted
        return counted

    def _counted_arrays(
        self,
        nodes: tuple[Node, ...],
        outer: tuple[Loop, ...],
        *,
        everything: bool,
        at_sizes: bool,
    ) -> _ArrayBytes:
        by_array: dict[str, list[_Member]] = defaultdict(list)
        statements = _statements(nodes)
        first_positions = _first_positions(statements)
        for placed in statements:
            inner = placed.loops  # the loops inside `nodes`; `outer` stays fixed
            for offset, access in enumerate(placed.statement.accesses):
                reference = _Member(access, inner, placed, offset)
                by_array[access.array].append(reference)
        reads, writes = [], []
        exact = True
        for refs in by_array.values():
            # References that move the same bytes per element (contiguous rows, column
            # walks, one stride) share lines: their union counts once. Groups with other
            # line costs are added (an upper bound where they overlap, e.g. `x[i]` beside
            # `x[j]`: one line besides the row).
            groups: dict[tuple[sympy.Expr, int], list[_Member]] = defaultdict(list)
            for member in refs:
                stride, per_stride = _per_stride(member.access)
                groups[self._line_factor(member.access, member.loops), stride].append(
                    replace(member, access=per_stride)
                )
            exact = exact and len(groups) == 1
            for (factor, _), members in groups.items():
                if all(not m.loops for m in members):
                    # Single elements (no loop moves them): one line per distinct index,
                    # whether or not two symbolic indices coincide (an upper bound).
                    chosen_at = {m.access.index for m in members if everything or not m.is_write}
                    written_at = {m.access.index for m in members if m.is_write}
                    reads.append(len(chosen_at) * factor)
                    writes.append(len(written_at) * factor)
                    continue
                chosen = [m for m in members if everything or not m.is_write]
                written = [m for m in members if m.is_write]
                for side, counts in ((chosen, reads), (written, writes)):
                    union = self._union(side, outer, first_positions, at_sizes)
                    counts.append(union.count * factor)
                    exact = exact and union.exact
        return tuple(reads), tuple(writes), exact

    def _union(
        self,
        members: Sequence[_Member],
        outer: tuple[Loop, ...],
        first: dict[int, int],
        at_sizes: bool,
    ) -> Footprint:
        """The footprint of `members` together: by the box rules, or where those only bound
        it and sizes are given, by integer sets (a triangle's union is a triangle, not the
        boxes' sum): at the sizes for a working set (`working_sets`), in the sizes for the
        bytes of a whole nest (`exact_counts`, as the compulsory bytes); a nest's part
        inside outer loops keeps its bound, so that no count holds a size as a number."""
        union = union_size([footprint_of(m.access, m.loops) for m in members])
        if union.exact or any(m.placed.guards is None for m in members):
            return union
        if not at_sizes and outer:
            return union
        self.sized_union = True  # from here the count depends on the sizes given, if any
        if not self.sizes:
            return union
        bound = finite_value(_worst_at_sizes(union.count, outer, self.sizes))
        if bound is None or bound > MAX_COUNTED_ELEMENTS:
            return union  # isl's count takes time with the points it counts
        references = [
            PolyReference(
                m.access,
                tuple(m.loops),
                tuple(first[id(loop)] for loop in m.loops),
                m.placed.order,
                m.offset,
                m.placed.guards or (),
            )
            for m in members
        ]
        if not at_sizes:
            counts = exact_counts(references)
            return union if counts is None else replace(union, count=counts.touched, exact=True)
        found = exact_union(references, outer, self.sizes)
        if found is None:
            return union
        return replace(union, count=found.count, exact=found.exact)

    def _line_factor(self, access: Access, loops: Sequence[Loop]) -> sympy.Expr:
        """Bytes moved per distinct element: its width when the innermost subscript walks
        memory with unit stride, a whole line per element when it does not move (column
        walks), and `stride * width` up to a line for a constant stride."""
        assert access.index is not None  # indirect references are undecided earlier
        width = access.element.width_bytes
        line = self.cache.line_bytes
        last = expand(access.index[-1])
        strides = []
        for loop in loops:
            coefficient = linear_coefficient(last, loop_symbol(loop.var)) * abs(loop.step)
            if coefficient != 0:
                strides.append(abs(coefficient))
        if not strides:
            return constant(line)
        numeric = [int(s) for s in strides if s.is_number]
        if not numeric:
            return constant(line)
        return constant(min(line, min(numeric) * width))

    def fits(
        self,
        working_set: sympy.Expr,
        loop: Loop,
        inside: tuple[Loop, ...],
        *,
        piece: bool = False,
    ) -> bool:
        at_sizes = _worst_at_sizes(working_set, inside, self.sizes)
        value = finite_value(at_sizes)
        if value is not None:
            holds, by_size = value <= self.capacity, True
        else:
            holds, by_size = False, False  # grows with sizes not given: the large-size branch
        condition = LayerCondition(
            self.cache.name,
            loop.var,
            loop.span.line,
            working_set,
            self.capacity,
            holds,
            by_size,
            (loop.start, expand(loop.start + loop.step * (loop.trip - 1))) if piece else None,
            inside,
        )
        self.conditions.append(condition)
        if value is not None and self._in_band(value, value):
            self.near.append(condition)
        return holds


@dataclass(frozen=True, slots=True)
class _Member:
    """One reference of an array group, with the statement it is in and its place there."""

    access: Access
    loops: tuple[Loop, ...]
    placed: Placed
    offset: int

    @property
    def is_write(self) -> bool:
        return self.access.is_write


def _first_positions(statements: Sequence[Placed]) -> dict[int, int]:
    """Each loop's first program position (the order of its first statement), by id."""
    first: dict[int, int] = {}
    for placed in statements:
        for loop in placed.loops:
            first.setdefault(id(loop), placed.order)
    return first


def _loops_inside(
    nodes: tuple[Node, ...], path: tuple[Loop, ...]
) -> Iterator[tuple[Loop, tuple[Loop, ...]]]:
    """Every loop under `nodes` with the loops from `path`'s first down to it."""
    for node in nodes:
        if isinstance(node, Loop):
            yield node, (*path, node)
            yield from _loops_inside(node.body, (*path, node))
        elif isinstance(node, Branch):
            yield from _loops_inside(node.then_body, path)
            yield from _loops_inside(node.else_body, path)


def _per_stride(access: Access) -> tuple[int, Access]:
    """A reference whose last subscript moves by a constant stride `c` (`x[2*i + 1]`), as
    the number of its stride-`c` block (`x[i]`), with `c`; `(1, access)` for others.
    References of one stride share their blocks' lines: `x[2*i]` and `x[2*i + 1]` (a
    pointer walked by 2, complex pairs) touch the same lines, which their union in
    blocks counts once where their union in elements counted them twice."""
    assert access.index is not None
    *leading, last = access.index
    last = expand(last)
    symbols = last.free_symbols
    if any(is_size_symbol(s) for s in symbols):
        return 1, access
    coefficients = [linear_coefficient(last, s) for s in symbols]
    offset = expand(last - sum((c * s for c, s in zip(coefficients, symbols, strict=True)), ZERO))
    if not offset.is_Integer or not all(c.is_Integer for c in coefficients):
        return 1, access
    stride = 0
    for c in coefficients:
        stride = gcd(stride, int(c))
    if stride < 2:
        return 1, access
    blocks = expand(last - offset) / stride + int(offset) // stride
    return stride, replace(access, index=(*leading, expand(blocks)))


def _statements(nodes: tuple[Node, ...]) -> list[Placed]:
    """The statements under `nodes`, their loops counted from `nodes` inwards."""
    return placed_statements(nodes)


def _at_sizes(expr: sympy.Expr, sizes: Mapping[str, int]) -> sympy.Expr:
    return _at_size_items(expr, tuple(sorted(sizes.items())))


@lru_cache(maxsize=8192)
def _at_size_items(expr: sympy.Expr, size_items: tuple[tuple[str, int], ...]) -> sympy.Expr:
    """Memoized: every cache level's model, and each loop inside a split one
    (`_Model._crossing`), asks for the same trips and working sets at the same sizes."""
    values = size_bindings(expr, dict(size_items))
    return expand(substituted(expr, values)) if values else expr


def _worst_at_sizes(
    expr: sympy.Expr,
    loops: tuple[Loop, ...],
    sizes: Mapping[str, int],
    wanted: str | None = None,
) -> sympy.Expr:
    """`expr` at the sizes, at its worst over `loops` (`_worst_over_loops`), memoized: a
    device's every level asks for the same working sets at the same sizes, and a size
    path asks at every size of its sweep. Every caller needs a number, or an expression
    in the one symbol `wanted` alone; where the result is sure to keep another symbol
    (`_keeps_unbound`), `expr` itself is returned, as symbolic as that result."""
    return _worst_at(expr, loops, tuple(sorted(sizes.items())), wanted)


@lru_cache(maxsize=8192)
def _worst_at(
    expr: sympy.Expr,
    loops: tuple[Loop, ...],
    size_items: tuple[tuple[str, int], ...],
    wanted: str | None,
) -> sympy.Expr:
    sizes = dict(size_items)
    if not is_poly(expr) and _keeps_unbound(expr, loops, sizes, wanted):
        return expr
    return _worst_over_loops(_at_sizes(expr, sizes), loops, sizes)


_BASE_VALUE = Fraction(7)
_PROBE_VALUES = (Fraction(2), Fraction(3), Fraction(1009))
"""Values a free symbol is moved through (all valid for every kind of symbol: positive
integers) to see whether the worst-end working set moves with it."""


def _keeps_unbound(
    expr: sympy.Expr, loops: tuple[Loop, ...], sizes: Mapping[str, int], wanted: str | None
) -> bool:
    """Whether `_worst_over_loops(_at_sizes(expr, sizes), loops, sizes)` surely keeps a
    symbol that neither the sizes nor `loops` bind, other than `wanted` (a tile size
    `bs`, an outer loop's counter): then no caller gets a number from it.

    That result is `expr` with each loop's counter set to its last value, innermost first,
    unless some step's two ends were both numbers; a value of that composition that moves
    with a free symbol rules such a step out (from then on it would be a number), so the
    result is that composition and holds the symbol. Decided on exact values at a few
    points (`point_values`): False, and sympy asked, wherever they cannot tell."""
    counters = [loop_symbol(loop.var).name for loop in loops]
    lasts = [expand(loop.start + loop.step * (loop.trip - 1)) for loop in loops]
    names = symbol_names(expr).union(*(symbol_names(last) for last in lasts))
    if any(name in sizes for name in counters) or len(set(counters)) != len(counters):
        return False
    free = sorted(names - set(sizes) - set(counters) - {wanted})
    if not free or _name_clash(expr):
        return False
    given = {name: Fraction(value) for name, value in sizes.items()}

    def worst_end(values: dict[str, Fraction]) -> Fraction:
        at = {**given, **values}
        for counter, last in zip(counters, lasts, strict=True):  # outermost first
            at[counter] = point_value(last, at)
        return point_value(expr, at)

    base = {name: _BASE_VALUE for name in free}
    if wanted is not None:
        base[wanted] = _BASE_VALUE
    try:
        reference = worst_end(base)
        return any(
            worst_end({**base, name: probe}) != reference
            for name in free
            for probe in _PROBE_VALUES
        )
    except (NotEvaluated, ZeroDivisionError):
        return False


def _name_clash(expr: sympy.Expr) -> bool:
    """Two free symbols of one name (a size `i` beside a counter `i`): values by name
    cannot tell them apart."""
    symbols = expr.free_symbols
    return len({s.name for s in symbols}) != len(symbols)


def _worst_over_loops(
    expr: sympy.Expr, loops: Sequence[Loop], sizes: Mapping[str, int]
) -> sympy.Expr:
    """A working set that depends on an outer loop's variable (triangular nests), at the
    end of that loop's range where it is largest, so that 'fits' is never optimistic."""
    for loop in reversed(loops):
        var = loop_symbol(loop.var)
        if var not in expr.free_symbols:
            continue
        first = _at_sizes(loop.start, sizes)
        last = _at_sizes(loop.start + loop.step * (loop.trip - 1), sizes)
        ends = [expand(expr.subs(var, first)), expand(expr.subs(var, last))]
        values = [finite_value(e) for e in ends]
        if all(v is not None for v in values):
            expr = ends[0] if values[0] >= values[1] else ends[1]  # type: ignore[operator]
        else:
            expr = ends[1]
    return expr


@lru_cache(maxsize=4096)
def _breaking_size(
    working_set: sympy.Expr, loops: tuple[Loop, ...], capacity: float
) -> float | None:
    """With all sizes set to one `x`, the largest x with working_set(x) = capacity; a
    working set that moves with a loop variable is taken at both ends of its range.
    Memoized: it holds at every size, and a size path decides each layer condition at
    every size of its sweep."""
    candidates = [working_set]
    for loop in reversed(loops):
        var = loop_symbol(loop.var)
        last = loop.start + loop.step * (loop.trip - 1)
        candidates = [
            expand(c.subs(var, end)) if var in c.free_symbols else c
            for c in candidates
            for end in (loop.start, last)
        ]
    roots = [_root(c, capacity) for c in dict.fromkeys(candidates)]
    found = [r for r in roots if r is not None]
    return max(found) if found else None


def _root(working_set: sympy.Expr, capacity: float) -> float | None:
    growing = [s for s in working_set.free_symbols if is_size_symbol(s)]
    if not growing or working_set.free_symbols - set(growing):
        return None
    if is_poly(working_set) and working_set.hinged:
        # A hinge `Max(0, c - s)` of a growing size: `sympy.Poly` of the gap refuses it
        # (PolynomialError), so the layer condition has no root here either.
        return None
    x = symbol("x", "positive")
    gap = expand(working_set.subs({s: x for s in growing}) - constant(Fraction(repr(capacity))))
    coefficients = integer_coefficients(gap, ("x", "positive")) if is_poly(gap) else None
    try:
        if coefficients is not None:  # sympy's `nroots`, bit for bit, without sympy
            roots = numeric_roots(coefficients)
        else:
            roots = [complex(r) for r in sympy.Poly(gap, x).nroots()]
    except ArithmeticError:  # no convergence
        return None
    except (sympy.PolynomialError, TypeError, ValueError):
        return None
    positive = [r.real for r in roots if abs(r.imag) < 1e-9 and r.real > 0]
    return max(positive) if positive else None
