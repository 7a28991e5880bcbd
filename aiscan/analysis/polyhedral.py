"""Exact compulsory footprints of one array by integer sets (islpy), for the cases the
box-based code in `footprint.py` can only bound.

Every reference becomes, at fixed sizes, an isl map from its statement's instances to the
elements it touches. The instances are placed in one time space, the classic `2d + 1`
schedule (per loop level: which sibling, then the iteration number), followed by the
statement's program order and the reference's position in it, so that the lexicographic
order of two instances is the order they run in. Then, exactly:

- touched: the union of every reference's image;
- written: the union of the stores' images;
- read first: the elements some read touches at an instance no store to that element
  precedes (their first touch is that read, or an earlier one).

isl counts those sets at fixed sizes only (the PyPI wheel has no symbolic counting), so
each count is taken on a grid of sizes, interpolated exactly (in each size a polynomial
of degree at most the number of loops whose range depends on it), and checked at held-out
sizes, some in other orders (`m > n` and `m < n`), some with many tiles to a range where
a size is a tile size (`_many_tiles`). A count that is not one polynomial there
(`min(m, n)`, `ceiling(n/2)`), or a nest isl cannot express (non-affine index,
data-dependent branch, unknown trip), gives None: the caller keeps its flagged bound.
Branch conditions on loop indices (`i < j - 1`) are constraints like the loop bounds, and
`guarded_runs` counts the iterations that satisfy them the same way. islpy is imported
only here, and only where the fast paths are not exact.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from itertools import permutations, product
from typing import TYPE_CHECKING, Any

from aiscan.algebra import ONE, SYMPY, ZERO, constant, expand, is_poly, to_sympy
from aiscan.analysis import count_memo
from aiscan.analysis.domain import Bounds, LoopLike, bounds_of, sum_over_loops
from aiscan.analysis.isl_boxes import CountAt, box_counter
from aiscan.analysis.isl_build import built_map
from aiscan.analysis.isl_text import (
    NotAffine,
    Param,
    Var,
    affine_text,
    denominator,
    sizes_as_numbers,
)
from aiscan.analysis.polynomials import linear_coefficient
from aiscan.ir.nodes import Access, Loop
from aiscan.ir.symbols import is_size_symbol, loop_symbol
from aiscan.substitution import substituted

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = [
    "ExactCounts",
    "PolyReference",
    "exact_counts",
    "fixed_times",
    "guarded_runs",
    "interpolate",
    "touched_at",
]

BASE_SIZE = 9
"""The smallest size interpolated from: past the small sizes where a stencil's shifted
copies or a triangle's corner still change the shape of the count."""
MAX_GRID_POINTS = 160
"""More sizes and a deeper nest than this many grid points is not worth the time here."""


@dataclass(frozen=True, slots=True)
class PolyReference:
    """One array reference with what places it in time: its loops, outermost first, the
    first program position inside each of them, and its own statement's position."""

    access: Access
    loops: tuple[Loop, ...] | tuple[Bounds, ...]
    """The loops, or their bounds alone once `exact_counts` has taken them."""
    loop_positions: tuple[int, ...]
    order: int
    offset: int
    guards: tuple[sympy.Basic, ...] = ()
    """Affine conditions of the branches around it (`i < j - 1`), negated on else sides."""


@dataclass(frozen=True, slots=True)
class ExactCounts:
    """Distinct elements of one array: touched, written, and first touched by a read."""

    touched: sympy.Expr
    written: sympy.Expr
    read_first: sympy.Expr


def exact_counts(references: Sequence[PolyReference]) -> ExactCounts | None:
    """The exact counts of one array's references, or None (see the module docstring)."""
    try:
        import islpy  # (optional: without it the caller keeps its bound)
    except ImportError:  # pragma: no cover - islpy is a declared dependency
        return None
    if any(isinstance(loop, Loop) and loop.unknowns for r in references for loop in r.loops):
        return None  # a trip count the frontend could not say
    try:
        return _exact_counts(_in_compact_time(references))
    except islpy.Error:
        return None  # an operation isl refuses on these sets: the caller keeps its bound


def _in_compact_time(references: Sequence[PolyReference]) -> tuple[PolyReference, ...]:
    """The references with their loops' bounds alone and their program positions
    renumbered by rank: each time dimension's constants in the same order, so every
    instance keeps its place before or after every other, and the counts are the same.
    Two views of one nest then share their counts where only other arrays' references
    differ: the jit view leaves the local arrays' reads out of a statement, which moves
    the positions of the others in it (`_lu1` read between two of `return`'s).

    Why the order stays: an even time dimension holds only constants (a loop's first
    position, or the statement's order past its loops), ranked per dimension. A
    reference's position in its statement stands where a deeper statement's iteration
    number would, but two instances reach it only when their statement is the same (a
    loop's first position is the order of a statement inside it, never that of a
    statement beside it): so it is ranked among its statement's references alone."""
    by_level: dict[int, set[int]] = {}
    by_statement: dict[int, set[int]] = {}
    for reference in references:
        for level, value in enumerate((*reference.loop_positions, reference.order)):
            by_level.setdefault(level, set()).add(value)
        by_statement.setdefault(reference.order, set()).add(reference.offset)
    level_rank = {level: _ranks(values) for level, values in by_level.items()}
    offset_rank = {order: _ranks(offsets) for order, offsets in by_statement.items()}
    compact = []
    for reference in references:
        depth = len(reference.loops)
        compact.append(
            replace(
                reference,
                loops=bounds_of(reference.loops),
                loop_positions=tuple(
                    level_rank[level][value] for level, value in enumerate(reference.loop_positions)
                ),
                order=level_rank[depth][reference.order],
                offset=offset_rank[reference.order][reference.offset],
            )
        )
    return tuple(compact)


def _ranks(values: set[int]) -> dict[int, int]:
    return {value: rank for rank, value in enumerate(sorted(values))}


@lru_cache(maxsize=1024)
def _exact_counts(references: tuple[PolyReference, ...]) -> ExactCounts | None:
    """Memoized: the counts are polynomials in the sizes, the same whatever sizes the
    caller is at, and the cache model's sweep over sizes asks for a nest's at each of its
    sizes (the fit itself, checks and all, is most of a count the points memo already
    knows)."""
    sizes = _sizes(references)
    if sizes is None:
        return None
    degrees = _degrees(
        sizes, [(r.loops, (*r.access.index, *r.guards)) for r in references if r.access.index]
    )
    period = _period(
        [(r.loops, (*r.access.index, *r.guards)) for r in references if r.access.index], sizes
    )
    tiles = _tile_sizes([r.loops for r in references], sizes)
    nests = list(dict.fromkeys((bounds_of(r.loops), r.guards) for r in references))
    running: dict[tuple[int, ...], bool] = {}

    def runs(point: tuple[int, ...]) -> bool:
        """Does every reference run at these sizes (where counts must be exact)? Asked
        once per point and count: each answer is kept (`_domain_runs`'s own memo hashes
        every loop bound of the nest)."""
        found = running.get(point)
        if found is None:
            assert sizes is not None
            at = tuple(zip(sizes, point, strict=True))
            found = running[point] = all(_domain_runs(n, guards, at) for n, guards in nests)
        return found

    key = count_memo.nest_key(references, sizes)
    count_memo.recall(key, len(sizes))
    try:
        polynomials = _fitted_counts(references, sizes, key, degrees, period, runs, tiles)
    finally:
        count_memo.keep(key)  # the points counted, whether or not they fit one polynomial
    return None if polynomials is None else ExactCounts(*polynomials)


def _fitted_counts(
    references: Sequence[PolyReference],
    sizes: list[sympy.Symbol],
    key: str,
    degrees: list[int],
    period: int | None,
    runs: Callable[[tuple[int, ...]], bool],
    tiles: Sequence[int],
) -> list[sympy.Expr] | None:
    """The touched, written and read-first counts, each fitted to a polynomial."""
    polynomials = []
    for which in range(3):

        def count(point: tuple[int, ...], which: int = which) -> int:
            found = count_memo.known(key, point)
            if found is None:
                found = _counts_at(references, dict(zip(sizes, point, strict=True)))
                count_memo.remember(key, point, found)
            return found[which]

        polynomial = _fitted(sizes, degrees, count, period, runs, tiles)
        if polynomial is None:
            return None
        polynomials.append(polynomial)
    return polynomials


def touched_at(
    references: Sequence[PolyReference], values: Mapping[sympy.Symbol, int]
) -> int | None:
    """The distinct elements the references touch with every size and every variable of
    a loop around them fixed by `values` (the cache model's working sets); None where a
    reference is not affine there or isl is missing."""
    try:
        import islpy  # noqa: F401  (optional: without it the caller keeps its bound)
    except ImportError:  # pragma: no cover - islpy is a declared dependency
        return None
    if any(r.access.index is None for r in references):
        return None
    try:
        return _touched_cached(tuple(references), _sorted_sizes(values))
    except NotAffine:
        return None


def _sizes(references: Sequence[PolyReference]) -> list[sympy.Symbol] | None:
    """The sizes the nest depends on; None when it depends on anything else (a named trip
    count, a fraction) or an access is indirect."""
    found: set[sympy.Symbol] = set()
    for reference in references:
        if reference.access.index is None:
            return None
        loop_vars = {loop_symbol(loop.var) for loop in reference.loops}
        exprs = [*reference.access.index, *reference.guards]
        exprs += [e for loop in reference.loops for e in (loop.start, loop.trip)]
        sizes = _size_symbols(exprs, loop_vars)
        if sizes is None:
            return None
        found |= sizes
    return sorted(found, key=lambda s: s.name)


def _size_symbols(
    exprs: Sequence[sympy.Basic], loop_vars: set[sympy.Symbol]
) -> set[sympy.Symbol] | None:
    """The sizes among `exprs`' symbols; None when one is neither a size nor a loop's."""
    found: set[sympy.Symbol] = set()
    for expr in exprs:
        for symbol in expr.free_symbols:
            if symbol in loop_vars:
                continue
            if not getattr(symbol, "is_Symbol", False) or not is_size_symbol(symbol):
                return None
            found.add(symbol)
    return found


def _grid_point(corner: tuple[int, ...], count: int) -> tuple[int, ...]:
    """Sizes a few apart from each other, so no two are equal by accident."""
    return tuple(BASE_SIZE + 2 * position + step for position, step in enumerate(corner))


def _held_out(count: int, depth: int) -> list[tuple[int, ...]]:
    """Sizes beyond the grid, in increasing, decreasing and mixed order."""
    top = BASE_SIZE + 2 * count + depth + 1
    increasing = tuple(top + 2 * k for k in range(count))
    decreasing = tuple(reversed(increasing))
    mixed = tuple(top + 1 + (3 * k) % (count + 1) for k in range(count))
    return list(dict.fromkeys([increasing, decreasing, mixed]))


def _tile_sizes(
    nests: Sequence[Sequence[LoopLike]], sizes: Sequence[sympy.Symbol]
) -> tuple[int, ...]:
    """The positions of the sizes that are tile sizes: a loop starts at one times an
    enclosing loop's variable (the point loop from `b*t` in tile `t`)."""
    positions: set[int] = set()
    for loops in nests:
        outer: list[sympy.Symbol] = []
        for loop in loops:
            for var in outer:
                used = linear_coefficient(loop.start, var).free_symbols
                positions |= {k for k, size in enumerate(sizes) if size in used}
            outer.append(loop_symbol(loop.var))
    return tuple(sorted(positions))


def _many_tiles(count: int, depth: int, tiles: Sequence[int]) -> list[tuple[int, ...]]:
    """Sizes where every tile size is small beside the others (2, 3 and 5 against about
    20: many tiles, the last one full or not). On the grid, sizes a few apart, a range
    holds at most two tiles, and a count can change past that: with loops between a tile
    loop and its point loop (`ii, jj, i, j`), `a[j + 1, i]` read before `a[j, i + 2]` is
    stored holds only where row `j + 1` starts a later column tile."""
    top = BASE_SIZE + 2 * count + depth + 1
    return [
        tuple(tile if k in tiles else top + 2 * k + tile + 1 for k in range(count))
        for tile in (2, 3, 5)
    ]


def interpolate(sizes: list[sympy.Symbol], values: dict[tuple[int, ...], int]) -> sympy.Expr:
    """The polynomial through `values` on their grid, of degree one less than the grid's
    points in each size (tensor Lagrange interpolation, exact in rationals).

    Computed on coefficients (`_coefficients`), then one sympy sum of monomials, the same
    expanded polynomial that multiplying out every term's factors gave, at a fraction of
    the cost (a conv2d nest spent 15 s there)."""
    return _as_polynomial(sizes, _coefficients(values))


def _as_polynomial(
    sizes: list[sympy.Symbol], coefficients: dict[tuple[int, ...], Fraction]
) -> sympy.Expr:
    if all(is_poly(size) for size in sizes):  # the canonical form, without sympy
        total = ZERO
        for key, value in coefficients.items():
            term = constant(value.numerator if value.denominator == 1 else value)
            for size, power in zip(sizes, key, strict=True):
                term *= size**power
            total += term
        return total
    return sympy.Add(
        *(
            sympy.Rational(value.numerator, value.denominator)
            * sympy.Mul(*(size**power for size, power in zip(sizes, key, strict=True)))
            for key, value in coefficients.items()
        )
    )


def _coefficients(values: dict[tuple[int, ...], int]) -> dict[tuple[int, ...], Fraction]:
    """`interpolate`'s polynomial as exponents and exact coefficients: each size's
    Lagrange basis as a coefficient list, applied one axis after another to the grid's
    values (a few hundred exact fractions)."""
    dimensions = len(next(iter(values)))
    nodes = [tuple(sorted({p[k] for p in values})) for k in range(dimensions)]
    place = [{x: j for j, x in enumerate(axis)} for axis in nodes]
    coefficients: dict[tuple[int, ...], Fraction] = {
        tuple(place[k][x] for k, x in enumerate(point)): Fraction(value)
        for point, value in values.items()
        if value
    }
    for k, axis in enumerate(nodes):
        basis = _lagrange_bases(axis)
        moved: dict[tuple[int, ...], Fraction] = {}
        for key, value in coefficients.items():
            for power, factor in enumerate(basis[key[k]]):
                if factor:
                    spot = (*key[:k], power, *key[k + 1 :])
                    moved[spot] = moved.get(spot, Fraction(0)) + value * factor
        coefficients = {key: value for key, value in moved.items() if value}
    return coefficients


def _evaluated(coefficients: dict[tuple[int, ...], Fraction], point: tuple[int, ...]) -> Fraction:
    """The polynomial of `_coefficients` at `point`, exactly (sympy's `subs` and its
    evaluation took a fifth of the fits)."""
    total = Fraction(0)
    for powers, coefficient in coefficients.items():
        term = coefficient
        for value, power in zip(point, powers, strict=True):
            term *= value**power
        total += term
    return total


@lru_cache(maxsize=256)
def _lagrange_bases(nodes: tuple[int, ...]) -> tuple[list[Fraction], ...]:
    """Each node's `_lagrange_basis`, once per grid: every count of every nest fits on the
    same few axes (`_grid_point`), and the bases were most of a fit's arithmetic."""
    return tuple(_lagrange_basis(nodes, j) for j in range(len(nodes)))


def _lagrange_basis(nodes: Sequence[int], j: int) -> list[Fraction]:
    """Coefficients (constant first) of the polynomial that is 1 at `nodes[j]` and 0 at
    the other nodes."""
    poly = [Fraction(1)]
    for i, other in enumerate(nodes):
        if i == j:
            continue
        scale = Fraction(1, nodes[j] - other)
        # poly * (x - other) / (nodes[j] - other)
        shifted = [Fraction(0), *poly]
        poly = [
            (shifted[e] - other * (poly[e] if e < len(poly) else 0)) * scale
            for e in range(len(shifted))
        ]
    return poly


def _counts_at(
    references: Sequence[PolyReference], sizes: dict[sympy.Symbol, int]
) -> tuple[int, int, int]:
    return _counts_cached(tuple(references), _sorted_sizes(sizes))


def _sorted_sizes(sizes: Mapping[sympy.Symbol, int]) -> tuple[tuple[sympy.Symbol, int], ...]:
    return tuple(sorted(sizes.items(), key=lambda kv: kv[0].name))


_Sets = tuple[Any, Any, Any]
"""The touched, written and read-first elements (None for the last two without stores)."""


@lru_cache(maxsize=2048)
def _counts_cached(
    references: tuple[PolyReference, ...], sizes: tuple[tuple[sympy.Symbol, int], ...]
) -> tuple[int, int, int]:
    found = _sets_at(references, sizes)
    if found is None:
        return _counts_from_maps(references, sizes)
    sets, counters, values = found
    touched, written, read_first = (
        _count_at(parametric, counter, values)
        for parametric, counter in zip(sets, counters, strict=True)
    )
    if sets[1] is None:  # no store: every element is first touched by a read (`_counted`)
        return touched, 0, touched
    return touched, written, read_first


def _count_at(parametric: Any, counter: CountAt | None, values: list[int]) -> int:
    """A parametric set's count at these values: in Python where it is a box
    (`isl_boxes`), else fixed there and counted by isl."""
    if parametric is None:
        return 0
    if counter is not None:
        return counter(values)
    return _count(_fixed_set(parametric, values))


def _counts_from_maps(
    references: tuple[PolyReference, ...], sizes: tuple[tuple[sympy.Symbol, int], ...]
) -> tuple[int, int, int]:
    """`_counts_cached` from each reference's map at these sizes."""
    return _counted(_three_sets(_maps_at(references, sizes)))


def _three_sets(maps: Sequence[tuple[PolyReference, Any]]) -> _Sets:
    """The elements the references touch, those the stores touch, and those a read
    touches first; the last two None without a store (every element is then first
    touched by a read: the touched set, counted once)."""
    touched = _union_range([m for _, m in maps])
    writes = [m for r, m in maps if r.access.is_write]
    if not writes:
        return touched, None, None
    return touched, _union_range(writes), _read_first(maps)


def _counted(sets: _Sets) -> tuple[int, int, int]:
    touched, written, read_first = sets
    if written is None:
        count = _count(touched)
        return count, 0, count
    return _count(touched), _count(written), _count(read_first)


@lru_cache(maxsize=2048)
def _touched_cached(
    references: tuple[PolyReference, ...], sizes: tuple[tuple[sympy.Symbol, int], ...]
) -> int:
    """`_counts_cached`'s first count alone, for the cache model's working sets: the
    stores' and the first reads' sets are not made (a third of the time of the counts)."""
    found = _sets_at(references, sizes)
    if found is not None:  # the touched set alone, at the sizes
        sets, counters, values = found
        return _count_at(sets[0], counters[0], values)
    return _count(_union_range([m for _, m in _maps_at(references, sizes)]))


def _sets_at(
    references: tuple[PolyReference, ...], sizes: tuple[tuple[sympy.Symbol, int], ...]
) -> tuple[_Sets, tuple[CountAt | None, ...], list[int]] | None:
    """The three sets of `_counts_cached` for these sizes from `_parametric_sets`, their
    counters where they are boxes (`_box_counters`), and the values of their parameters
    (`_fixed_set` fixes each there): every size a parameter where every map takes it so,
    else the sizes some reference holds as numbers fixed and the others parameters (as
    `_map_at` tries them); None where those are not made."""
    symbols = tuple(s for s, _ in sizes)
    free: tuple[sympy.Symbol, ...] = symbols
    fixed: tuple[tuple[sympy.Symbol, int], ...] = ()
    sets = _parametric_sets(references, free, fixed)
    values = [v for _, v in sizes]
    if sets is None:
        numbers = frozenset().union(*(_sizes_as_numbers(r, symbols) for r in references))
        if not numbers or len(numbers) == len(symbols):
            return None  # no parameter left: nothing to share between points
        fixed = tuple((s, v) for s, v in sizes if s in numbers)
        free = tuple(s for s in symbols if s not in numbers)
        sets = _parametric_sets(references, free, fixed)
        if sets is None:
            return None
        values = [v for s, v in sizes if s not in numbers]
    return sets, _box_counters(references, free, fixed), values


@lru_cache(maxsize=2048)
def _box_counters(
    references: tuple[PolyReference, ...],
    sizes: tuple[sympy.Symbol, ...],
    numbers: tuple[tuple[sympy.Symbol, int], ...],
) -> tuple[CountAt | None, ...]:
    """`isl_boxes.box_counter` of each of `_parametric_sets`' sets (the same key): once per
    set, not once per grid point."""
    sets = _parametric_sets(references, sizes, numbers)
    assert sets is not None
    return tuple(None if s is None else box_counter(s) for s in sets)


@lru_cache(maxsize=2048)
def _parametric_sets(
    references: tuple[PolyReference, ...],
    sizes: tuple[sympy.Symbol, ...],
    numbers: tuple[tuple[sympy.Symbol, int], ...],
) -> _Sets | None:
    """The three sets of `_counts_cached` once, over `sizes` as isl parameters and with
    `numbers` fixed, where every reference's map can be written so: fixed at a point they
    are the same integer sets as those made there, so they count the same. The unions
    and the `lexmin` were made again at each point of the grid (a third of a nest's
    counts); now once per value of the sizes held as numbers. None sends the caller to
    the maps at each point."""
    import islpy as isl

    width = 2 * max(len(r.loops) for r in references) + 2
    found = [
        _partly_parametric_map(r, sizes, numbers, width) if numbers
        else _parametric_map(r, sizes, width)
        for r in references
    ]  # fmt: skip
    maps = [(r, m) for r, m in zip(references, found, strict=True) if m is not None]
    if len(maps) < len(references) or len({m.dim(isl.dim_type.out) for _, m in maps}) != 1:
        return None
    try:
        return _three_sets(maps)
    except isl.Error:
        return None


def _fixed_set(parametric: Any, values: Sequence[int]) -> Any:
    """`parametric` (a `_parametric_sets` set) at these values of its parameters;
    NotAffine as `_maps_at`."""
    import islpy as isl

    if parametric is None:
        return None
    try:
        return _fixed(parametric, values)
    except isl.Error as error:
        raise NotAffine from error


def _maps_at(
    references: tuple[PolyReference, ...], sizes: tuple[tuple[sympy.Symbol, int], ...]
) -> list[tuple[PolyReference, Any]]:
    """Each reference's map at these sizes, in one time space; NotAffine where one is no
    isl map or the references disagree on the array's rank."""
    import islpy as isl

    width = 2 * max(len(r.loops) for r in references) + 2
    try:
        maps = [(r, _map_at(r, sizes, width)) for r in references]
    except isl.Error as error:
        raise NotAffine from error
    if len({m.dim(isl.dim_type.out) for _, m in maps}) != 1:
        raise NotAffine
    return maps


def _read_first(maps: Sequence[tuple[PolyReference, Any]]) -> Any:
    """The elements whose first touch is a read: each element's earliest instance of any
    reference (`lexmin` of all the references' inverse maps) where that instance is a
    read's. Two references never share an instance (their statement's order and their
    offset in it are time dimensions), so an instance is a read's or a store's. The same
    set as the reads no store to their element precedes, and about a fifth faster."""
    reads = [m.domain() for reference, m in maps if not reference.access.is_write]
    if not reads:
        return None
    touches = maps[0][1].reverse()
    for _, m in maps[1:]:
        touches = touches.union(m.reverse())
    instances = reads[0]
    for domain in reads[1:]:
        instances = instances.union(domain)
    return touches.lexmin().intersect_range(instances).domain()


# ---- sets at fixed sizes -----------------------------------------------------------------
# A nest is counted at every point of a grid of sizes, and isl's parser took two fifths of
# the analysis of PolyBench's kernels. Where the sizes enter affinely (`i < n - 1`,
# `A[i + n]`), each map or set is parsed once with the sizes as isl parameters and fixed at
# each point: the same integer set as the text at those sizes, so the same counts. Where
# some do not (`A[i*n + j]`, `floor(i/floor(n/h))`), those are numbers and the others
# parameters, parsed once per value of the numbers (`_partly_parametric_map`); where none
# can be a parameter, or the partial text fails, `NotAffine` sends the nest back to text
# per point.


def _parameters(sizes: Sequence[sympy.Symbol]) -> dict[sympy.Symbol, Any]:
    return {size: Param(f"P{k}") for k, size in enumerate(sizes)}


def _fixed(parametric: Any, values: Sequence[int]) -> Any:
    """`parametric` (a map or set over `P0, P1, ...`) at `P_k = values[k]`, without them."""
    import islpy as isl

    for position, value in enumerate(values):
        found = parametric.find_dim_by_name(isl.dim_type.param, f"P{position}")
        if found >= 0:
            parametric = parametric.fix_val(isl.dim_type.param, found, value)
    return parametric.project_out(isl.dim_type.param, 0, parametric.dim(isl.dim_type.param))


def _map_at(
    reference: PolyReference, sizes: tuple[tuple[sympy.Symbol, int], ...], width: int
) -> Any:
    """The reference's map at these sizes (see above)."""
    symbols = tuple(s for s, _ in sizes)
    parametric = _parametric_map(reference, symbols, width)
    if parametric is not None:
        return _fixed(parametric, [v for _, v in sizes])
    numbers = _sizes_as_numbers(reference, symbols)
    if len(numbers) < len(symbols):
        fixed = tuple((s, v) for s, v in sizes if s in numbers)
        free = tuple(s for s in symbols if s not in numbers)
        partly = _partly_parametric_map(reference, free, fixed, width)
        if partly is not None:
            return _fixed(partly, [v for s, v in sizes if s not in numbers])
    return _reference_map(reference, dict(sizes), width)


def _reference_map(reference: PolyReference, sizes: dict[sympy.Symbol, Any], width: int) -> Any:
    """The reference's map (`_map_text`), built through isl's constraint API where it can
    be (`isl_build`: a third of the time of isl's parser), else parsed from its text."""
    index = reference.access.index
    assert index is not None
    times = fixed_times(reference, width)
    guards = [_negation_normal_form(guard) for guard in reference.guards]
    array = reference.access.array
    built = built_map(array, index, reference.loops, times, guards, sizes, width)
    return built if built is not None else _parsed_map(_map_text(reference, sizes, width))


def fixed_times(reference: PolyReference, width: int) -> list[int | None]:
    """The reference's instance in the `width` time dimensions (the module docstring's
    schedule): each loop level's first position, then its statement's order and its own
    position in it, then zeros; None where a loop's iteration number varies."""
    depth = len(reference.loops)
    times: list[int | None] = [None] * (2 * depth) + [reference.order, reference.offset]
    times[0 : 2 * depth : 2] = reference.loop_positions
    return times + [0] * (width - len(times))


@lru_cache(maxsize=4096)
def _parsed_map(text: str) -> Any:
    """isl's map of `text`, memoized by the text: the same reference in another nest
    object (a range split's piece, an inlined copy) writes the same text, and a third of
    the parses over the fixtures were of a text parsed before."""
    import islpy as isl

    return isl.Map(text)


@lru_cache(maxsize=2048)
def _parametric_map(
    reference: PolyReference, sizes: tuple[sympy.Symbol, ...], width: int
) -> Any | None:
    import islpy as isl

    try:
        return _reference_map(reference, _parameters(sizes), width)
    except (NotAffine, isl.Error):
        return None


@lru_cache(maxsize=4096)
def _sizes_as_numbers(
    reference: PolyReference, sizes: tuple[sympy.Symbol, ...]
) -> frozenset[sympy.Symbol]:
    """The sizes this reference's map must hold as numbers (`isl_text.sizes_as_numbers`)."""
    expressions = [*(reference.access.index or ()), *_guard_sides(reference.guards)]
    expressions += [e for loop in reference.loops for e in (loop.start, loop.trip)]
    return sizes_as_numbers(expressions, sizes)


def _guard_sides(guards: Sequence[sympy.Basic]) -> list[sympy.Expr]:
    """Both sides of every comparison in the guards."""
    if not guards:
        return []  # without touching sympy: most references have no guard
    relational = sympy.core.relational.Relational
    return [side for g in guards for r in g.atoms(relational) for side in (r.lhs, r.rhs)]


@lru_cache(maxsize=4096)
def _partly_parametric_map(
    reference: PolyReference,
    sizes: tuple[sympy.Symbol, ...],
    numbers: tuple[tuple[sympy.Symbol, int], ...],
    width: int,
) -> Any | None:
    """The map with `numbers` fixed and the other `sizes` as parameters: a nest with a
    linearized index (`A[i*n + j]`) or a head size inside a floor is parsed once per value
    of those, not once per grid point (the same integer set at each point, as above)."""
    import islpy as isl

    try:
        return _reference_map(reference, {**dict(numbers), **_parameters(sizes)}, width)
    except (NotAffine, isl.Error):
        return None


def _union_range(maps: Sequence[Any]) -> Any:
    result = None
    for m in maps:
        result = m.range() if result is None else result.union(m.range())
    return result


def _count(points: Any) -> int:
    import islpy as isl

    if points is None:
        return 0
    # isl's coalescing fails its own check on some unions (a 2-by-2 tiled transpose's
    # first reads: "original tableau does not correspond to original basic map"); it
    # only merges pieces, so the pieces as they are count the same points.
    with contextlib.suppress(isl.Error):
        points = points.coalesce()
    size = _box_size(points)
    return int(points.count_val().to_python()) if size is None else size


def _box_size(points: Any) -> int | None:
    """How many points `points` holds where it is a box, one range per dimension (a slice's
    footprint): the product of the ranges. isl counts a set by visiting its points, so a
    window of a 4-D tensor took milliseconds a count, and a model's nests thousands of
    counts. None for any other set, which isl counts."""
    import islpy as isl

    if not isinstance(points, isl.Set):
        return None
    if points.is_empty():
        return 0
    if points.n_basic_set() != 1:
        return None
    box = isl.Set.universe(points.get_space())
    size = 1
    for position in range(points.dim(isl.dim_type.set)):
        low, high = points.dim_min_val(position), points.dim_max_val(position)
        if not (low.is_int() and high.is_int()):
            return None
        box = box.lower_bound_val(isl.dim_type.set, position, low)
        box = box.upper_bound_val(isl.dim_type.set, position, high)
        size *= high.to_python() - low.to_python() + 1
    return size if box.is_equal(points) else None


def _map_text(reference: PolyReference, sizes: dict[sympy.Symbol, Any], width: int) -> str:
    """`{ [t...] -> A[e...] : constraints }` of one reference at fixed sizes (numbers), or
    over the sizes as parameters (`Param`s). The time's fixed positions are numbers in the
    tuple and the subscripts expressions in it, not variables held equal to them: the same
    map, which isl parses in half the time (each such variable is one more to eliminate)."""
    times = [f"T{k}" if t is None else str(t) for k, t in enumerate(fixed_times(reference, width))]
    constraints, substitution = _loop_constraints(reference.loops, sizes)
    constraints += [_condition(guard, substitution) for guard in reference.guards]
    index = reference.access.index
    assert index is not None
    elements = [affine_text(expr, substitution) for expr in index]
    condition = f" : {' and '.join(constraints)}" if constraints else ""
    return (
        _parameter_prefix(sizes)
        + f"{{ [{', '.join(times)}] -> {reference.access.array}[{', '.join(elements)}]"
        + condition
        + " }"
    )


def _parameter_prefix(sizes: dict[sympy.Symbol, Any]) -> str:
    names = [v.name for v in sizes.values() if isinstance(v, Param)]
    return f"[{', '.join(names)}] -> " if names else ""


def _loop_constraints(
    loops: Sequence[LoopLike], sizes: dict[sympy.Symbol, Any]
) -> tuple[list[str], dict[sympy.Symbol, Any]]:
    """Iteration `T(2l + 1)` of the loop at level `l` runs; and the substitution of the
    sizes by numbers and of each loop variable by `start + step*T(2l + 1)`."""
    constraints: list[str] = []
    substitution: dict[sympy.Symbol, Any] = dict(sizes)
    for level, loop in enumerate(loops):
        t = f"T{2 * level + 1}"  # a name in isl's text only
        start = affine_text(loop.start, substitution)
        trip = affine_text(loop.trip, substitution)
        constraints.append(f"0 <= {t} <= ({trip}) - 1")
        substitution[loop_symbol(loop.var)] = Var(start, loop.step, t)
    return constraints, substitution


def _condition(guard: sympy.Basic, substitution: dict[sympy.Symbol, Any]) -> str:
    """An affine condition as isl text (relations joined by and, or)."""
    guard = _negation_normal_form(guard)
    if guard is sympy.true:
        return "0 = 0"
    if guard is sympy.false:
        return "1 = 0"
    if isinstance(guard, sympy.And):
        return "(" + " and ".join(_condition(g, substitution) for g in guard.args) + ")"
    if isinstance(guard, sympy.Or):
        return "(" + " or ".join(_condition(g, substitution) for g in guard.args) + ")"
    operators = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=", "!=": "!="}
    if isinstance(guard, sympy.core.relational.Relational) and guard.rel_op in operators:
        left = affine_text(guard.lhs, substitution)
        right = affine_text(guard.rhs, substitution)
        return f"({left}) {operators[guard.rel_op]} ({right})"
    raise NotAffine


@lru_cache(maxsize=4096)
def _negation_normal_form(guard: sympy.Basic) -> sympy.Basic:
    """`sympy.to_nnf`, once per guard rather than once per grid point."""
    return sympy.to_nnf(guard)


def guarded_runs(loops: Sequence[LoopLike], guards: tuple[sympy.Basic, ...]) -> sympy.Expr | None:
    """How many iterations of `loops` satisfy every guard: exact, by counting at fixed
    sizes and interpolating (see the module docstring), or None."""
    return _guarded_runs(bounds_of(loops), guards)


@lru_cache(maxsize=4096)
def _guarded_runs(loops: tuple[Bounds, ...], guards: tuple[sympy.Basic, ...]) -> sympy.Expr | None:
    try:
        import islpy  # noqa: F401
    except ImportError:  # pragma: no cover - islpy is a declared dependency
        return None
    component, free = _split_unguarded(loops, guards)
    if free and component:
        # Loops the guards and the guarded loops never mention multiply the count by
        # their trips (`for q`, `for i` around `if E - w >= 0`; a CUDA grid of
        # `ceiling(n/256)` blocks around `if (threadIdx_x == 0)`): fitted without them,
        # the grid is small enough, and a trip that is no polynomial does not get in.
        inner = _guarded_runs(component, guards)
        return None if inner is None else expand(inner * sum_over_loops(ONE, free))
    loop_vars = {loop_symbol(loop.var) for loop in loops}
    exprs = [*guards, *(e for loop in loops for e in (loop.start, loop.trip))]
    found = _size_symbols(exprs, loop_vars)
    if found is None:
        return None
    sizes = sorted(found, key=lambda s: s.name)

    def count(point: tuple[int, ...]) -> int:
        return _domain_count(loops, guards, tuple(zip(sizes, point, strict=True)))

    degrees = _degrees(sizes, [(loops, guards)])
    period = _period([(loops, guards)], sizes)
    tiles = _tile_sizes([loops], sizes)

    def runs(point: tuple[int, ...]) -> bool:
        # Exact wherever the loops around run, the guards false everywhere included: a
        # branch that is never taken at a size runs 0 times there, and its sibling does
        # the work (`range(max(0, i - 1), i + 1)` at n = 1).
        return _domain_runs(loops, (), tuple(zip(sizes, point, strict=True)))

    fitted = _fitted(sizes, degrees, count, period, runs, tiles)
    if fitted is not None or period != 1 or tiles:
        return fitted
    if len(sizes) != 2:
        return None  # one bend between two sizes; more would cost many more grids
    # A guard bends the count in sizes no loop's range ties together: as deep in each as
    # the nest.
    return _fitted_by_minimum(sizes, [len(loops)] * len(sizes), count, runs)


def _split_unguarded(
    loops: tuple[Bounds, ...], guards: tuple[sympy.Basic, ...]
) -> tuple[tuple[Bounds, ...], tuple[Bounds, ...]]:
    """`loops` as those tied to the guards (a guard uses the variable, or the loop's
    range uses or is used by a tied loop's variable) and the others."""
    variables = {loop_symbol(loop.var): loop for loop in loops}
    uses = {
        loop.var: {variables[s].var for s in (loop.start.free_symbols | loop.trip.free_symbols)
                   if s in variables}
        for loop in loops
    }  # fmt: skip
    tied = {variables[s].var for g in guards for s in g.free_symbols if s in variables}
    grown = True
    while grown:
        grown = False
        for loop in loops:
            linked = loop.var in tied or bool(uses[loop.var] & tied)
            if linked and not ({loop.var} | uses[loop.var]) <= tied:
                tied |= {loop.var} | uses[loop.var]
                grown = True
    return (
        tuple(loop for loop in loops if loop.var in tied),
        tuple(loop for loop in loops if loop.var not in tied),
    )


def _fitted_by_minimum(
    sizes: list[sympy.Symbol],
    degrees: list[int],
    count: Callable[[tuple[int, ...]], int],
    runs: Callable[[tuple[int, ...]], bool],
) -> sympy.Expr | None:
    """A count with one bend where a size passes another, as a polynomial in
    `Min(s, t - c)`: `if E - w >= 0` over `E < NE`, `w < Nw` runs for
    `M*NE - M*(M - 1)/2` pairs, `M = Min(NE, Nw)`. Fitted where `s <= t - c`, then held
    to a polynomial fitted where `s > t - c` and to held-out sizes on both sides of the
    bend and below the grid; None when no such pair and offset fits."""
    for low, high in permutations(range(len(sizes)), 2):
        for offset in (0, 1, -1, 2, -2):
            try:
                found = _fitted_below(sizes, degrees, count, runs, (low, high, offset))
            except NotAffine:
                return None
            if found is not None:
                return found
    return None


def _fitted_below(
    sizes: list[sympy.Symbol],
    degrees: list[int],
    count: Callable[[tuple[int, ...]], int],
    runs: Callable[[tuple[int, ...]], bool],
    bend: tuple[int, int, int],
) -> sympy.Expr | None:
    low, high, offset = bend
    points = 1
    for degree in degrees:
        points *= degree + 1
    if 2 * points > MAX_GRID_POINTS:
        return None
    margin = 2 * len(sizes) + max(degrees) + abs(offset) + 2

    def grid(raised: int) -> dict[tuple[int, ...], int]:
        """The grid with `sizes[raised]` well above the others."""
        values = {}
        for corner in product(*(range(degree + 1) for degree in degrees)):
            point = list(_grid_point(corner, len(sizes)))
            point[raised] += margin + 2 * len(sizes)
            values[tuple(point)] = count(tuple(point))
        return values

    below = _as_polynomial(sizes, _coefficients(grid(high)))
    above = _as_polynomial(sizes, _coefficients(grid(low)))  # past the bend
    s, t = sizes[low], sizes[high]
    minimum = sympy.Min(s, t - offset)
    candidate = substituted(below, {s: minimum})
    if expand(substituted(below, {s: t - offset}) - above) != 0:
        return None
    checks = []
    for point in _held_out(len(sizes), max(degrees)):
        for step in (-3, -1, 0, 1, 2, 5):
            moved = list(point)
            moved[low] = moved[high] - offset + step
            checks.append(tuple(moved))
    checks += [p for p in _small(len(sizes)) if runs(p)]
    for point in checks:
        if min(point) < 1:
            continue
        value = substituted(candidate, dict(zip(sizes, point, strict=True)))
        if value != count(point):
            return None
    return candidate


@lru_cache(maxsize=4096)
def _domain_count(
    loops: tuple[Bounds, ...],
    guards: tuple[sympy.Basic, ...],
    sizes: tuple[tuple[sympy.Symbol, int], ...],
) -> int:
    import islpy as isl

    try:
        return int(_domain_at(loops, guards, sizes).count_val().to_python())
    except isl.Error as error:
        raise NotAffine from error


@lru_cache(maxsize=4096)
def _domain_runs(
    loops: tuple[Bounds, ...],
    guards: tuple[sympy.Basic, ...],
    sizes: tuple[tuple[sympy.Symbol, int], ...],
) -> bool:
    """`_domain_count(...) >= 1`, without the count: isl counts a set by visiting its
    points, where a test for a point solves one problem (the loops bound every
    dimension, so a set with a point has a count of one or more)."""
    import islpy as isl

    try:
        return not _domain_at(loops, guards, sizes).is_empty()
    except isl.Error as error:
        raise NotAffine from error


def _domain_at(
    loops: tuple[Bounds, ...],
    guards: tuple[sympy.Basic, ...],
    sizes: tuple[tuple[sympy.Symbol, int], ...],
) -> Any:
    """The iterations of `loops` that satisfy `guards` at these sizes, as an isl set."""
    import islpy as isl

    parametric = _parametric_domain(loops, guards, tuple(s for s, _ in sizes))
    if parametric is not None:
        return _fixed(parametric, [v for _, v in sizes])
    return isl.Set(_domain_text(loops, guards, dict(sizes)))


@lru_cache(maxsize=4096)
def _parametric_domain(
    loops: tuple[Bounds, ...], guards: tuple[sympy.Basic, ...], sizes: tuple[sympy.Symbol, ...]
) -> Any | None:
    import islpy as isl

    try:
        return isl.Set(_domain_text(loops, guards, _parameters(sizes)))
    except (NotAffine, isl.Error):
        return None


def _domain_text(
    loops: tuple[Bounds, ...], guards: tuple[sympy.Basic, ...], sizes: dict[sympy.Symbol, Any]
) -> str:
    constraints, substitution = _loop_constraints(loops, sizes)
    constraints += [_condition(guard, substitution) for guard in guards]
    times = ", ".join(f"T{2 * level + 1}" for level in range(len(loops)))
    return (
        _parameter_prefix(sizes)
        + f"{{ [{times}] : "
        + " and ".join(constraints or ["0 = 0"])
        + " }"
    )


def _degrees(
    sizes: list[sympy.Symbol],
    nests: Sequence[tuple[Sequence[LoopLike], Sequence[sympy.Basic]]],
) -> list[int]:
    """Per size, the highest degree a count can have in it: the number of loops whose
    range depends on it (directly, or through an enclosing loop that does), or the whole
    depth when an index or a condition uses it (`i*n + j`)."""
    degrees = [0] * len(sizes)
    for loops, uses in nests:
        used = set().union(*(u.free_symbols for u in uses)) if uses else set()
        for position, size in enumerate(sizes):
            if size in used:
                degrees[position] = max(degrees[position], len(loops))
                continue
            dependent = {size}
            for loop in loops:
                if (loop.start.free_symbols | loop.trip.free_symbols) & dependent:
                    dependent.add(loop_symbol(loop.var))
            degrees[position] = max(degrees[position], len(dependent) - 1)
    return degrees


MAX_PERIOD = 256
"""Counts whose pattern repeats with a longer period than this are not fitted (the sizes
held out past one period would make the integer sets too large to count quickly)."""


def _period(
    nests: Sequence[tuple[Sequence[LoopLike], Sequence[sympy.Basic]]],
    sizes: Sequence[sympy.Symbol],
) -> int | None:
    """The longest distance in the sizes over which a count can look like one polynomial
    and still not be one: the divisors of `floor`, `ceiling` and `Mod` (`ceiling(n/64)`),
    the steps of loops, and the constants a size is compared with in a `Min` or `Max`
    (`Min(64, n - ii)`). 1 when there is none; None when it is over `MAX_PERIOD`.

    A count over tiles of 64 is one polynomial for all sizes below 64 (one tile): fitted
    on small sizes alone it would pass every check there and be wrong past 64. So the
    held-out sizes reach past this distance (see `_fitted`)."""
    longest = 1
    size_set = set(sizes)
    for loops, uses in nests:
        exprs = [*uses, *(e for loop in loops for e in (loop.start, loop.trip))]
        for loop in loops:
            if loop.step not in (1, -1) and loop.trip.free_symbols & size_set:
                longest = max(longest, abs(loop.step))
        for expr in exprs:
            if is_poly(expr) and not expr.hinged:
                continue  # a polynomial holds none of these (sympy's `atoms` imported sympy)
            for atom in expr.atoms(sympy.floor, sympy.ceiling, sympy.Mod, sympy.Min, sympy.Max):
                if not atom.free_symbols & size_set:
                    continue
                if isinstance(atom, sympy.Mod):
                    longest = max(longest, _integer_size(atom.args[1]))
                elif isinstance(atom, sympy.floor | sympy.ceiling):
                    longest = max(longest, denominator(atom.args[0]))
                else:
                    for argument in atom.args:
                        for term in sympy.Add.make_args(to_sympy(expand(argument))):
                            longest = max(longest, _integer_size(term))
    return None if longest > MAX_PERIOD else longest


def _integer_size(expr: sympy.Basic) -> int:
    coefficient = expr.as_coeff_Mul()[0] if isinstance(expr, sympy.Expr) else expr
    return abs(int(coefficient)) if getattr(coefficient, "is_Integer", False) else 1


def _beyond_period(count: int, period: int) -> list[tuple[int, ...]]:
    """Held-out sizes one and two periods past the grid, in mixed residues."""
    top = BASE_SIZE + 2 * count
    return [
        tuple(top + period + 1 + 3 * k for k in range(count)),
        tuple(top + 2 * period + 2 + (5 * k) % (period + 1) for k in range(count)),
    ]


def _small(count: int) -> list[tuple[int, ...]]:
    """Sizes below the grid: all equal from 1 up, and each alone at 1 and 2."""
    points = [tuple([size] * count) for size in range(1, BASE_SIZE)]
    for position in range(count if count > 1 else 0):
        for size in (1, 2):
            points.append(tuple(size if k == position else BASE_SIZE for k in range(count)))
    return points


MAX_PERIOD_FITTED = 12
"""Counts in `ceiling(n/p)` are fitted for periods up to this (sizes up to about 20p)."""


def _fitted_in_periods(
    size: sympy.Symbol, degree: int, count: Callable[[tuple[int, ...]], int], period: int
) -> sympy.Expr | None:
    """A count that is a polynomial in `ceiling(size/period)` rather than in the size (a
    loop `i += 3` with an inner loop to `i`: `3*q*(q - 1)/2` for `q = ceiling(n/3)`):
    interpolated in `q` at sizes that are multiples of the period, and checked at every
    residue of two larger quotients. None when the count is not that either."""
    if period > MAX_PERIOD_FITTED:
        return None
    quotient = sympy.Dummy("q")
    first = BASE_SIZE
    values: dict[tuple[int, ...], int] = {
        (q,): count((q * period,)) for q in range(first, first + degree + 1)
    }
    fitted = interpolate([quotient], values)
    for q in (first + degree + 1, first + degree + 3):
        for residue in range(period):
            value = q * period - residue
            if substituted(fitted, {quotient: q}) != count((value,)):
                return None
    return expand(substituted(fitted, {quotient: sympy.ceiling(size / period)}))


def _corrected(
    size: sympy.Symbol,
    polynomial: sympy.Expr,
    count: Callable[[tuple[int, ...]], int],
    runs: Callable[[tuple[int, ...]], bool] | None,
) -> sympy.Expr:
    """A count in one size, made exact at the small sizes where the references run."""
    if runs is None:
        return polynomial
    return polynomial + _small_sizes_correction(size, polynomial, count, runs)


def _small_sizes_correction(
    size: sympy.Symbol,
    polynomial: sympy.Expr,
    count: Callable[[tuple[int, ...]], int],
    runs: Callable[[tuple[int, ...]], bool],
) -> sympy.Expr:
    """What to add to `polynomial` (the count from `BASE_SIZE` on) for it to be the count
    at every smaller size where the references run: `sum of a_v * Max(0, v - size)`, 0 from
    `size = v` on (`a[i] * a[j]` for `j >= i + 2` reads n elements from n = 4 on, but 2 at
    n = 3: `n - Max(0, 4 - n)`). The coefficients are the second differences of the
    shortfall, from the top down, to the first size where something does not run."""
    shortfall = {BASE_SIZE: 0, BASE_SIZE + 1: 0}
    for value in range(BASE_SIZE - 1, 0, -1):
        if not runs((value,)):
            break
        shortfall[value] = count((value,)) - int(substituted(polynomial, {size: value}))
    correction = ZERO
    for bend in range(min(shortfall) + 1, BASE_SIZE + 1):
        below = shortfall[bend - 1] - shortfall[bend]
        above = shortfall[bend] - shortfall[bend + 1]
        if below != above:
            correction += (below - above) * sympy.Max(0, bend - size)
    return correction


def _fitted(
    sizes: list[sympy.Symbol],
    degrees: list[int],
    count: Callable[[tuple[int, ...]], int],
    period: int | None = 1,
    runs: Callable[[tuple[int, ...]], bool] | None = None,
    tiles: Sequence[int] = (),
) -> sympy.Expr | None:
    """The polynomial through `count` on the grid, verified at held-out sizes (with many
    tiles where `tiles` names tile sizes by position); None when the count is not one
    polynomial there or cannot be written as isl sets."""
    points = 1
    for degree in degrees:
        points *= degree + 1
    if points > MAX_GRID_POINTS or period is None:
        return None
    held_out = _held_out(len(sizes), max(degrees, default=0))
    if period > 1 and sizes:
        held_out += _beyond_period(len(sizes), period)
    if tiles and len(tiles) < len(sizes):
        held_out += _many_tiles(len(sizes), max(degrees, default=0), tiles)
    try:
        values = {
            point: count(point)
            for point in (
                _grid_point(corner, len(sizes))
                for corner in product(*(range(degree + 1) for degree in degrees))
            )
        }
        coefficients = _coefficients(values)
        if any(_evaluated(coefficients, point) != count(point) for point in held_out):
            if len(sizes) != 1 or period <= 1:
                return None
            in_periods = _fitted_in_periods(sizes[0], degrees[0], count, period)
            if in_periods is None:
                return None
            return _corrected(sizes[0], in_periods, count, runs)
        polynomial = _as_polynomial(sizes, coefficients)
        if len(sizes) == 1:
            return _corrected(sizes[0], polynomial, count, runs)
        for point in _small(len(sizes)):
            if runs is not None and runs(point) and _evaluated(coefficients, point) != count(point):
                return None  # a polynomial from some sizes on only: not exact
    except NotAffine:
        return None
    return polynomial
