"""How many distinct elements a set of array references touches over an iteration domain.

A reference's footprint is the image of its loop domain under its index map. When the map
is injective it is as large as the domain projected on the variables the index uses; when
the image is a box (each dimension `±var + c`, or a linearized `i*n + j` that delinearizes)
unions of several references are computed exactly by inclusion-exclusion over boxes, which
is what stencils need. Anything else is an upper bound, and says so.

Assumption, stated in docs/model.md: sizes are large enough that every loop runs. Shifted
copies of a box are counted at every side length (`_union_of_shifts`), gaps included.
A tile loop and its point loop count as the range the tiles cover (`domain.untiled`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import combinations, product
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeAlias

from aiscan import algebra
from aiscan.algebra import ONE, SYMPY, ZERO, expand, is_poly, normal, probe_values, to_sympy
from aiscan.analysis.domain import Bounds, LoopLike, bounds_of, sum_over_loops, untiled
from aiscan.analysis.flops import executions_over
from aiscan.analysis.polynomials import linear_coefficient, term_of
from aiscan.ir.nodes import Access
from aiscan.ir.symbols import loop_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = [
    "Box",
    "Footprint",
    "extreme_over",
    "footprint_of",
    "integer_value",
    "nearest_quotient",
    "provably_nonnegative",
    "stride_rank",
    "union_size",
]

MAX_UNION_BOXES = 12

Interval: TypeAlias = "tuple[sympy.Expr, sympy.Expr]"


@dataclass(frozen=True, slots=True)
class Box:
    """Per dimension an inclusive interval of indices; the footprint is exactly this set."""

    intervals: tuple[Interval, ...]
    strides: tuple[sympy.Expr, ...] = ()
    """For a box over a linearized subscript (`i*n + j` is rows i of stride n, columns j of
    stride 1), each dimension's stride in it, a genuine dimension's being 1; empty when all
    are. Two boxes with other strides are other addresses, whatever their intervals."""

    def size(self) -> sympy.Expr:
        size = ONE
        for low, high in self.intervals:
            size *= _length(low, high)
        return size

    def intersect(self, other: Box) -> Box:
        return Box(
            tuple(
                (_highest((a_low, b_low)), _lowest((a_high, b_high)))
                for (a_low, a_high), (b_low, b_high) in zip(
                    self.intervals, other.intervals, strict=True
                )
            )
        )

    def contains(self, other: Box) -> bool:
        if len(self.intervals) != len(other.intervals):
            return False
        for (low, high), (inner_low, inner_high) in zip(
            self.intervals, other.intervals, strict=True
        ):
            if not (
                provably_nonnegative(inner_low - low) and provably_nonnegative(high - inner_high)
            ):
                return False
        return True


@dataclass(frozen=True, slots=True)
class Footprint:
    """Distinct elements touched by one reference (or a union), exact or an upper bound."""

    count: sympy.Expr
    box: Box | None
    key: object
    exact: bool
    reason: str = ""


def _length(low: sympy.Expr, high: sympy.Expr) -> sympy.Expr:
    length = expand(high - low + 1)
    if is_poly(length) and any(value >= 0 for value in probe_values(length)):
        return length  # not negative everywhere (without asking sympy's assumptions)
    if (length.is_number and length < 0) or length.is_negative:
        return ZERO
    return length


def provably_nonnegative(expr: sympy.Expr) -> bool:
    expr = expand(expr)
    if is_poly(expr) and any(value < 0 for value in probe_values(expr)):
        return False  # negative somewhere: no proof, and no need to ask sympy's assumptions
    if bool(expr.is_nonnegative) or (expr.is_number and expr >= 0):
        return True
    lower = _without_roundings(expr)
    return lower is not None and (
        bool(lower.is_nonnegative) or bool(lower.is_number and lower >= 0)
    )


def _without_roundings(expr: sympy.Expr) -> sympy.Expr | None:
    """A lower bound of `expr` without the roundings it can drop: `floor(a)` where it is
    subtracted (`floor(a) <= a`), `ceiling(a)` where it is added (`ceiling(a) >= a`), in
    terms that are a number times positive factors and one rounding, so that `n -
    32*floor(n/32)` (a grid of `n/32` tiles of 32) is seen to be at least 0. None when
    `expr` has no such rounding. (`floor(a) >= 0` is not assumed: `a` may be below 1.)"""
    if is_poly(expr) or not expr.has(sympy.floor, sympy.ceiling):
        return None
    terms = []
    changed = False
    for term in sympy.Add.make_args(expr):
        coefficient, rest = term.as_coeff_Mul()
        factors = list(sympy.Mul.make_args(rest))
        roundings = [f for f in factors if isinstance(f, sympy.floor | sympy.ceiling)]
        others = [f for f in factors if f not in roundings]
        if len(roundings) == 1 and all(f.is_positive for f in others):
            (rounding,) = roundings
            if isinstance(rounding, sympy.floor) == (coefficient < 0):
                rest, changed = sympy.Mul(rounding.args[0], *others), True
        terms.append(coefficient * rest)
    return sympy.expand(sympy.Add(*terms)) if changed else None


@dataclass(frozen=True, slots=True)
class _Range:
    """The values one loop variable takes over the (projected) domain."""

    var: sympy.Symbol
    low: sympy.Expr
    high: sympy.Expr
    step: int


def _ranges(loops: Sequence[LoopLike]) -> list[_Range]:
    ranges = []
    for loop in loops:
        last = loop.start + loop.step * (loop.trip - 1)
        low, high = (loop.start, last) if loop.step > 0 else (last, loop.start)
        ranges.append(_Range(loop_symbol(loop.var), expand(low), expand(high), abs(loop.step)))
    return ranges


def extreme_over(
    expr: sympy.Expr, var: sympy.Symbol, low: sympy.Expr, high: sympy.Expr, want_max: bool
) -> sympy.Expr | None:
    """Max or min over `var` in [low, high] of an expression affine in `var`; None when it
    is not (`ceiling(var/2)`, `var**2`: its coefficient of `var` says nothing then, and
    taking it for 0 let `var` escape its loop into the counts)."""
    coefficient = linear_coefficient(expr, var)
    if var in expand(expr - coefficient * var).free_symbols:
        return None
    if coefficient == 0:
        return expr
    if var in coefficient.free_symbols or coefficient.is_positive is None:
        return None
    take_high = bool(coefficient.is_positive) == want_max
    return expand(expr.subs(var, high if take_high else low))


def _project(loops: Sequence[LoopLike], keep: set[sympy.Symbol]) -> list[_Range] | None:
    """The loop ranges of the kept variables once the others are eliminated (unioned over);
    None when a kept range depends on one that cannot be eliminated."""
    eliminated: dict[sympy.Symbol, tuple[sympy.Expr, sympy.Expr] | None] = {}
    kept: list[_Range] = []
    for current in _ranges(loops):
        bounds = _eliminated(current.low, current.high, eliminated)
        if current.var in keep:
            if bounds is None:
                return None
            kept.append(_Range(current.var, *bounds, current.step))
        else:
            eliminated[current.var] = bounds  # None: unknown, unless nothing kept needs it
    return kept


def _eliminated(
    low: sympy.Expr,
    high: sympy.Expr,
    eliminated: dict[sympy.Symbol, tuple[sympy.Expr, sympy.Expr] | None],
) -> tuple[sympy.Expr, sympy.Expr] | None:
    """`low` and `high` over every value of the eliminated variables, innermost first."""
    for var, var_range in reversed(list(eliminated.items())):
        if var not in low.free_symbols and var not in high.free_symbols:
            continue
        if var_range is None:
            return None
        var_low, var_high = var_range
        new_low = extreme_over(low, var, var_low, var_high, want_max=False)
        new_high = extreme_over(high, var, var_low, var_high, want_max=True)
        if new_low is None or new_high is None:
            return None
        low, high = new_low, new_high
    return low, high


def _count(ranges: Sequence[_Range]) -> sympy.Expr:
    loops = [Bounds(str(r.var), r.low, r.step, _trip(r)) for r in ranges]
    return expand(sum_over_loops(ONE, loops))


def _trip(r: _Range) -> sympy.Expr:
    distance = r.high - r.low
    return expand(distance + 1) if r.step == 1 else normal(sympy.floor(distance / r.step) + 1)


def executions_bound(loops: Sequence[LoopLike]) -> sympy.Expr:
    """How often a reference runs: an upper bound on the elements it can touch."""
    return executions_over(ONE, loops)


def footprint_of(access: Access, loops: Sequence[LoopLike]) -> Footprint:
    """The footprint of one reference executed over `loops` (outermost first)."""
    if access.index is None:
        executions = executions_bound(loops)
        return Footprint(
            executions,
            None,
            # One reference is one key; Python's accesses share their statement's span, so
            # its text and loops (a reduction's first element, then the rest) tell them apart.
            ("indirect", access.span, access.text, executions),
            False,
            f"`{access.text}` is indirect: bounded by its executions",
        )
    count, box, key, exact, reason = _footprint(access.index, bounds_of(loops))
    if key is None:
        key = ("unprojectable", access.span)
    return Footprint(count, box, key, exact, reason.format(text=access.text))


@lru_cache(maxsize=8192)
def _footprint(
    raw_index: tuple[sympy.Expr, ...], loops: tuple[Bounds, ...]
) -> tuple[sympy.Expr, Box | None, object, bool, str]:
    """Memoized on the index and the loop bounds alone: same math, same answer."""
    index = tuple(expand(e) for e in raw_index)
    loops = untiled(loops, frozenset().union(*(e.free_symbols for e in index)))
    loop_vars = {loop_symbol(loop.var) for loop in loops}
    used = set().union(*(e.free_symbols for e in index)) & loop_vars
    projected = _project(loops, used)
    if projected is None:
        reason = "`{text}`: loop bounds too irregular; bounded by executions"
        return executions_bound(loops), None, None, False, reason
    key = (index, tuple(projected))
    count = _count(projected)
    linear = _linear_parts(index, used)
    if linear is None:
        return count, None, key, False, "`{text}`: index is not affine; bounded by its domain"
    is_box_domain = all(not ({*r.low.free_symbols, *r.high.free_symbols} & used) for r in projected)
    box = _image_box(index, linear, projected) if is_box_domain else None
    if box is None and len(index) == 1 and _ranges_use_only(loops, used):
        interval = _interval_image(linear[0], projected)
        box = None if interval is None else Box((interval,))
    if box is not None:
        return box.size(), box, key, True, ""
    if _injective(linear, used, projected):
        return count, None, key, True, ""
    reason = _unproven_rows(linear, projected) or "`{text}` may touch an element more than once"
    reason += "; bounded by its domain"
    return count, None, key, False, reason


def _ranges_use_only(loops: Sequence[Bounds], used: set[sympy.Symbol]) -> bool:
    """Whether the ranges of the loops in `used` depend on no loop outside it: their
    projection onto `used` is then the domain itself, not a hull over the others."""
    loop_vars = {loop_symbol(loop.var) for loop in loops}
    return all(
        not ((loop.start.free_symbols | loop.trip.free_symbols) & (loop_vars - used))
        for loop in loops
        if loop_symbol(loop.var) in used
    )


def _interval_image(
    linear: tuple[dict[sympy.Symbol, sympy.Expr], sympy.Expr], projected: list[_Range]
) -> Interval | None:
    """The image of a triangular domain under a one-dimensional index whose variables step
    by one with coefficient ±1 (`r[k - i - 1]` for `i < k`), when it is an interval: for
    each value of the outer variables the inner ones sweep a run of consecutive indices,
    and the runs of neighbouring values meet or overlap. None when that is not proved."""
    coefficients, constant = linear
    if any(r.step != 1 for r in projected) or any(c not in (1, -1) for c in coefficients.values()):
        return None
    index = expand(constant + sum((c * v for v, c in coefficients.items()), ZERO))
    low, high = index, index
    ranges = {r.var: r for r in projected}
    for depth in reversed(range(len(projected))):
        r = projected[depth]
        outer = projected[:depth]
        # The run at r.var + 1 starts at most one past where the run at r.var ends (and
        # ends at least one before where it starts): no index between them is skipped.
        width = expand(high - low + 1)
        steps = (linear_coefficient(low, r.var), linear_coefficient(high, r.var))
        if not all(
            _least_over(expand(width - s), projected[: depth + 1], ranges)
            for s in (steps[0], -steps[1])
        ):
            return None
        runs = expand(r.high - r.low)
        if runs.free_symbols & set(ranges) and not _least_over(runs, outer, ranges):
            return None  # some run may be empty: its neighbours need not meet
        low = extreme_over(low, r.var, r.low, r.high, want_max=False)
        high = extreme_over(high, r.var, r.low, r.high, want_max=True)
        if low is None or high is None:
            return None
    return expand(low), expand(high)


def _least_over(
    expr: sympy.Expr, outer: Sequence[_Range], ranges: dict[sympy.Symbol, _Range]
) -> bool:
    """Whether `expr` is nonnegative for every value of the `outer` variables."""
    for r in reversed(outer):
        if r.var not in expr.free_symbols:
            continue
        least = extreme_over(expr, r.var, ranges[r.var].low, ranges[r.var].high, want_max=False)
        if least is None:
            return False
        expr = least
    return provably_nonnegative(expr)


def _unproven_rows(
    linear: list[tuple[dict[sympy.Symbol, sympy.Expr], sympy.Expr]],
    projected: list[_Range],
) -> str | None:
    """Why a flat subscript with row strides (`i*n + j`, strides products of sizes) was
    not split into rows and columns, where the reason is that the loops do not bound a
    finer index by its row (`j < m` beside `i*n`): `0 <= j < n` is not assumed. None
    for other subscripts and other reasons."""
    if len(linear) != 1 or len(linear[0][0]) < 2:
        return None
    coefficients = linear[0][0]
    if any(not is_poly(c) and not c.is_polynomial() for c in coefficients.values()):
        return None  # strides such as `R**K/(R*R**i)`: no order of degrees (`_delinearize`)
    order = sorted(coefficients, key=lambda v: stride_rank(coefficients[v]))
    strides = [abs(coefficients[v]) for v in order]
    if strides[0] != 1 or any(s.is_number for s in strides[1:]):
        return None
    ranges = {r.var: r for r in projected}
    covered = ZERO
    for var, stride in zip(order, strides, strict=True):
        if covered != 0 and not provably_nonnegative(stride - covered - 1):
            rows = ", ".join(str(s) for s in strides[1:])
            return (
                "`{text}` is flat with strides " + rows + ", but the loop ranges do not "
                "prove that each finer index stays within its row (not assumed)"
            )
        extent = _max_extent(ranges[var], ranges) if var in ranges else None
        if extent is None:
            return None
        covered = expand(covered + stride * extent)
    return None


def _linear_parts(
    index: tuple[sympy.Expr, ...], used: set[sympy.Symbol]
) -> list[tuple[dict[sympy.Symbol, sympy.Expr], sympy.Expr]] | None:
    """Each index as (coefficient per loop variable, constant), or None if not affine."""
    parts = []
    for expr in index:
        coefficients = {}
        constant = expr
        for var in used:
            coefficient = linear_coefficient(expr, var)
            if coefficient.free_symbols & used:
                return None
            if coefficient != 0:
                coefficients[var] = coefficient
                constant -= coefficient * var
        constant = expand(constant)
        if constant.free_symbols & used:
            return None
        parts.append((coefficients, constant))
    return parts


def _image_box(
    index: tuple[sympy.Expr, ...],
    linear: list[tuple[dict[sympy.Symbol, sympy.Expr], sympy.Expr]],
    projected: list[_Range],
) -> Box | None:
    ranges = {r.var: r for r in projected}
    dims: list[tuple[Any, Any, sympy.Expr]] = []
    strides: list[sympy.Expr] = []
    for coefficients, constant in linear:
        if not coefficients:
            dims.append((None, ONE, constant))
            strides.append(ONE)
            continue
        if len(coefficients) > 1 and all(c in (1, -1) for c in coefficients.values()):
            variables = tuple(sorted(coefficients, key=attrgetter("name")))
            dims.append((variables, tuple(coefficients[v] for v in variables), constant))
            strides.append(ONE)
            continue
        split = _delinearize(coefficients, constant, ranges)
        if split is None:
            return None
        dims.extend(split)
        strides.extend(abs(coefficients[var]) for var, _, _ in split)
    seen: set[sympy.Symbol] = set()
    intervals: list[Interval] = []
    for var, coefficient, constant in dims:
        if var is None:
            intervals.append((constant, constant))
            continue
        if isinstance(var, tuple):  # a sum of unit-stride variables, e.g. `h + r`
            if seen & set(var) or any(ranges[v].step != 1 for v in var):
                return None
            seen |= set(var)
            low = constant + sum(
                (
                    ranges[v].low if coefficient[k] == 1 else -ranges[v].high
                    for k, v in enumerate(var)
                ),
                ZERO,
            )
            high = constant + sum(
                (
                    ranges[v].high if coefficient[k] == 1 else -ranges[v].low
                    for k, v in enumerate(var)
                ),
                ZERO,
            )
            intervals.append((low, high))
            continue
        r = ranges[var]
        if var in seen or r.step != 1:
            return None
        seen.add(var)
        if coefficient == 1:
            intervals.append((r.low + constant, r.high + constant))
        else:
            intervals.append((constant - r.high, constant - r.low))
    if len(seen) != len(projected) or any(r.step != 1 for r in projected):
        return None
    linearized = tuple(strides) if any(stride != 1 for stride in strides) else ()
    return Box(tuple((expand(a), expand(b)) for a, b in intervals), linearized)


def _delinearize(
    coefficients: dict[sympy.Symbol, sympy.Expr],
    constant: sympy.Expr,
    ranges: dict[sympy.Symbol, _Range],
) -> list[tuple[sympy.Symbol | None, sympy.Expr, sympy.Expr]] | None:
    """`i*n + j + c` -> dimensions (i, n-strided) and (j, unit), when that is injective.

    Each dimension gets coefficient ±1 and its share of the constant offset.
    """
    if len(coefficients) == 1:
        ((var, coefficient),) = coefficients.items()
        if coefficient in (1, -1):
            return [(var, coefficient, constant)]
        return None
    if any(not is_poly(c) and not c.is_polynomial() for c in coefficients.values()):
        # `R**K/(R*R**i)` (powers of sizes) or `n_embd/n_head` (a head's width): strides
        # that are not polynomials have no order of degrees here.
        return None
    order = sorted(coefficients, key=lambda v: stride_rank(coefficients[v]))
    unit = [v for v in order if coefficients[v] in (1, -1)]
    if len(unit) != 1 or order[0] != unit[0]:
        return None
    # Injectivity: every stride exceeds the span the smaller strides can cover.
    covered = ZERO
    for var in order:
        stride = coefficients[var]
        if covered != 0 and not provably_nonnegative(abs(stride) - covered - 1):
            return None
        extent = _max_extent(ranges[var], ranges)
        if extent is None:
            return None
        covered = expand(covered + abs(stride) * extent)
    dims: list[tuple[sympy.Symbol | None, sympy.Expr, sympy.Expr]] = []
    remainder = constant
    for position, var in reversed(list(enumerate(order))):
        stride = coefficients[var]
        if var == order[0]:
            dims.append((var, stride, remainder))
            break
        finer = abs(coefficients[order[position - 1]])
        quotient = nearest_quotient(remainder, abs(stride), finer)
        if quotient is None:
            return None
        remainder = expand(remainder - quotient * abs(stride))
        sign = 1 if stride.is_positive or (stride.is_number and stride > 0) else -1
        dims.append((var, algebra.constant(sign), quotient * sign))
    return dims


def _max_extent(r: _Range, ranges: dict[sympy.Symbol, _Range]) -> sympy.Expr | None:
    """The widest `high - low` a variable's range reaches over the outer variables."""
    extent = expand(r.high - r.low)
    for _ in range(len(ranges) + 1):
        outer = [v for v in extent.free_symbols if v in ranges and v != r.var]
        if not outer:
            return extent
        var = outer[0]
        widest = extreme_over(extent, var, ranges[var].low, ranges[var].high, want_max=True)
        if widest is None:
            return None
        extent = widest
    return None


def stride_rank(stride: sympy.Expr) -> tuple[int, str]:
    stride = abs(stride)
    if is_poly(stride):
        degree = stride.degree()
    else:
        # Generators found by sympy: a stride of `floor(C/n_head)` (a reshape's `C // h`)
        # has that floor as one, where the free symbols would not make a polynomial.
        degree = sympy.Poly(stride).total_degree() if stride.free_symbols else 0
    if stride.is_number:
        magnitude = int(stride)
    else:  # `32*n` after `n`: a monomial's coefficient orders strides of one degree
        term = term_of(stride)
        magnitude = int(term[0]) if term is not None and term[0].is_Integer else 0
    return (degree * 10**9 + magnitude, str(stride))


def nearest_quotient(value: sympy.Expr, stride: sympy.Expr, finer: sympy.Expr) -> sympy.Expr | None:
    """How many `stride`s the constant offset `value` holds, its remainder left to the
    `finer` stride below: `-nx` in `i*nx*ny + j*nx + k - nx` holds no `nx*ny` and leaves
    `-nx`, one row of the finer stride `nx`. None when the remainder shares symbols
    with `stride` that `finer` cannot take, or the quotient is not a whole number."""
    if value == 0:
        return ZERO
    if stride.is_number and value.is_number:
        # A Poly constant has no `round`: through sympy (a numeric nest, sizes put in).
        return algebra.constant(round(to_sympy(value) / to_sympy(stride)))
    if is_poly(value) and is_poly(stride) and len(stride.terms) == 1:
        quotient, remainder = value.divmod_monomial(stride)
    else:
        try:
            quotient, remainder = sympy.div(value, stride, *stride.free_symbols)
        except sympy.PolynomialError:  # a stride of `floor(C/n_head)` (a reshape's `C // h`)
            return None
    if (remainder.free_symbols & stride.free_symbols) - finer.free_symbols:
        return None
    quotient = expand(quotient)
    if not _integer_coefficients(quotient):
        return None  # `n` over a stride of `2*n`: half a row
    return quotient


def _integer_coefficients(expr: sympy.Expr) -> bool:
    if is_poly(expr):
        return all(Fraction(c).denominator == 1 for c in expr.terms.values())
    return all(c.is_Integer for c in sympy.Poly(expr, *expr.free_symbols).coeffs())


def _injective(
    linear: list[tuple[dict[sympy.Symbol, sympy.Expr], sympy.Expr]],
    used: set[sympy.Symbol],
    projected: list[_Range],
) -> bool:
    variables = sorted(used, key=attrgetter("name"))
    if not variables:
        return True
    if len(linear) == 1 and len(variables) > 1:
        ranges = {r.var: r for r in projected}
        return _delinearize(linear[0][0], linear[0][1], ranges) is not None
    rows = [[c.get(v, 0) for v in variables] for c, _ in linear]
    rank = _numeric_rank(rows)
    if rank is None:
        rank = _symbolic_rank(rows)
    return bool(rank == len(variables))


def _symbolic_rank(rows: list[list[Any]]) -> int:
    """The rank of a matrix with symbolic entries, exactly over rational functions of the
    sizes (sympy's `DomainMatrix`): `Matrix.rank` tests each pivot with `simplify`, whose
    first call imports `sympy.physics`. Over the fixtures' and NPBench's 123 symbolic
    ranks: the same ranks, 0.29 s against 0.06 s."""
    from sympy.polys.matrices import DomainMatrix

    return int(DomainMatrix.from_Matrix(sympy.Matrix(rows)).rank())


def _numeric_rank(rows: list[list[Any]]) -> int | None:
    """The rank of a matrix of numbers, by exact elimination in rationals (subscripts'
    coefficients are integers: `sympy.Matrix` imported sympy for every 2-D array of a
    PolyBench kernel); None where an entry is symbolic (`i*n + j`'s `n`)."""
    matrix: list[list[Fraction]] = []
    for row in rows:
        values = [_number(entry) for entry in row]
        if any(v is None for v in values):
            return None
        matrix.append([v for v in values if v is not None])
    rank = 0
    columns = len(matrix[0]) if matrix else 0
    for column in range(columns):
        pivot = next((r for r in range(rank, len(matrix)) if matrix[r][column] != 0), None)
        if pivot is None:
            continue
        matrix[rank], matrix[pivot] = matrix[pivot], matrix[rank]
        for r in range(rank + 1, len(matrix)):
            factor = matrix[r][column] / matrix[rank][column]
            matrix[r] = [x - factor * y for x, y in zip(matrix[r], matrix[rank], strict=True)]
        rank += 1
    return rank


def _number(entry: Any) -> Fraction | None:
    if isinstance(entry, int):
        return Fraction(entry)
    if is_poly(entry):
        value = entry.constant_value()
        return None if value is None else Fraction(value)
    return None


def union_size(footprints: Sequence[Footprint]) -> Footprint:
    """The size of the union of several footprints of one array."""
    if not footprints:
        return Footprint(ZERO, None, (), True)
    unique: dict[object, Footprint] = {}
    for footprint in footprints:
        unique.setdefault(footprint.box if footprint.box is not None else footprint.key, footprint)
    parts = list(unique.values())
    if len(parts) == 1:
        return parts[0]
    boxes = [p.box for p in parts if p.box is not None]
    if len(boxes) == len(parts) and _same_rank(boxes):
        union = _box_union(tuple(boxes))
        if union is not None:
            count, hull = union
            overlap = _rows_overlap(boxes)
            if overlap is None:
                return Footprint(count, hull, tuple(boxes), True)
            return Footprint(count, None, tuple(boxes), False, overlap)
    reasons = [p.reason for p in parts if p.reason]
    if reasons:
        reason = reasons[0]
    elif len(boxes) == len(parts):
        reason = "too many references, too far apart, to count their union exactly"
    else:
        reason = "references with different access patterns"
    return Footprint(
        expand(sum((p.count for p in parts), ZERO)),
        None,
        tuple(p.key for p in parts),
        False,
        f"union of {len(parts)} footprints bounded by their sum ({reason})",
    )


def _rows_overlap(boxes: Sequence[Box]) -> str | None:
    """Why the union of boxes over linearized subscripts may count an address twice, or
    None. Its count is of (row, column) points; they are distinct addresses while in each
    subscript every stride exceeds the span its finer dimensions cover over the union (as
    `_delinearize` checks for one reference). `a[i*n + j]` and `a[i*n + j + 1]` for
    `j < n` cover columns 0 to n: the last of each row is the next row's first."""
    strides = boxes[0].strides
    if not strides and all(not box.strides for box in boxes):
        return None
    if any(box.strides != strides for box in boxes):
        return "references linearized with other strides; counted as rows and columns"
    covered = ZERO
    for d in reversed(range(len(strides))):
        stride = strides[d]
        if stride == 1:
            covered = ZERO  # the finest dimension of a subscript
        elif not provably_nonnegative(stride - covered - 1):
            return (
                "shifted references cross from one row of a linearized index into the "
                "next; counted as rows and columns"
            )
        low = sympy.Min(*(box.intervals[d][0] for box in boxes))
        high = sympy.Max(*(box.intervals[d][1] for box in boxes))
        covered = expand(covered + stride * (high - low))
    return None


@lru_cache(maxsize=4096)
def _box_union(boxes: tuple[Box, ...]) -> tuple[sympy.Expr, Box | None] | None:
    """The exact size of a union of boxes and, when it is one, the union as a box
    (memoized on the boxes: the same references recur in every model and function)."""
    count = _shift_union(boxes)
    if count is None and len(boxes) <= MAX_UNION_BOXES:
        count = _inclusion_exclusion(boxes)
    return None if count is None else (count, _hull_if_exact(boxes, count))


def _same_rank(boxes: Sequence[Box]) -> bool:
    return len({len(b.intervals) for b in boxes}) == 1


def _inclusion_exclusion(boxes: Sequence[Box]) -> sympy.Expr | None:
    """|union of boxes| over all subsets, with symbolic Max/Min bounds (2^k terms); None
    when an intersection may be empty in a way its bounds do not show: its length would
    go negative (`a[i][j]` and `a[n-1-i][j]` share a row only at the middle `i`, and
    counted so the union grew with the rows between them, marked exact)."""
    if _some_intersection_negative(boxes):
        return None  # what the loop below finds, without sympy's `Max`/`Min` of the bounds
    total = ZERO
    for size in range(1, len(boxes) + 1):
        sign = 1 if size % 2 else -1
        for subset in combinations(boxes, size):
            common = subset[0]
            for box in subset[1:]:
                common = common.intersect(box)
            if size > 1 and not all(
                provably_nonnegative(high - low + 1) for low, high in common.intervals
            ):
                return None
            total += sign * common.size()
    return expand(total)


_WITNESS_KINDS = frozenset({"size", "loop", "trip"})
"""Symbols whose values are integers of a known sign, or of none (a loop counter)."""


def _some_intersection_negative(boxes: Sequence[Box]) -> bool:
    """Whether two of the Poly boxes intersect in an interval of negative length at some
    integer values their symbols may take (`[0, i - 1]` and `[i, i]` at `i = -2**20`,
    a loop counter having no sign): sympy cannot prove that length nonnegative, so
    `_inclusion_exclusion` gives up on that subset (any larger subset holding the pair
    is as short). A pair suffices: the extremes of a subset's bounds come from two boxes."""
    bounds = [bound for box in boxes for interval in box.intervals for bound in interval]
    if len(boxes) < 2 or not all(is_poly(bound) for bound in bounds):
        return False
    symbols = sorted({s for bound in bounds for s in bound.free_symbols}, key=str)
    if any(s.kind not in _WITNESS_KINDS for s in symbols):
        return False
    for point in _witness_points(symbols):
        values = [
            [(_value_at(low, point), _value_at(high, point)) for low, high in box.intervals]
            for box in boxes
        ]
        for a, b in combinations(values, 2):
            for (a_low, a_high), (b_low, b_high) in zip(a, b, strict=True):
                if min(a_high, b_high) - max(a_low, b_low) + 1 < 0:
                    return True
    return False


_LOOP_PATTERNS = (
    lambda t: -(2**20),
    lambda t: 2**20,
    lambda t: 2**10 * t,
    lambda t: -(2**10) * t,
)
"""Loop counters all far below 0, far above, and spread apart upwards and downwards (so
that `[i, i]` and `[j, j]` are apart)."""


def _witness_points(symbols: Sequence[Any]) -> list[dict[Any, int]]:
    """Values each symbol's sympy assumptions allow: sizes at least 1, trips at least 0,
    loop counters any integer."""
    points = []
    for large in (False, True):
        for pattern in _LOOP_PATTERNS:
            point = {}
            for index, symbol in enumerate(symbols):
                if symbol.kind == "loop":
                    point[symbol] = pattern(index)
                else:
                    point[symbol] = 2**20 if large else (1 if symbol.kind == "size" else 0)
            points.append(point)
    return points


def _value_at(bound: Any, point: dict[Any, int]) -> Fraction:
    value = bound.subs(point).constant_value()
    assert value is not None  # every symbol of the bound has a value
    return Fraction(value)


def _shift_union(boxes: Sequence[Box]) -> sympy.Expr | None:
    """The union's size when the boxes are shifts of one box and close enough together."""
    shifted = _as_shifts(boxes)
    return None if shifted is None else _union_of_shifts(*shifted)


def _as_shifts(boxes: Sequence[Box]) -> tuple[list[sympy.Expr], list[tuple[int, ...]]] | None:
    """Boxes that are one box shifted by integer offsets (a stencil's references):
    the base box's side lengths and each box's offset vector; None otherwise."""
    base = boxes[0].intervals
    offsets = []
    for box in boxes:
        vector = []
        for (low, high), (base_low, base_high) in zip(box.intervals, base, strict=True):
            shift = expand(low - base_low)
            if not shift.is_Integer or expand(high - base_high) != shift:
                return None
            vector.append(int(shift))
        offsets.append(tuple(vector))
    lengths = [expand(high - low + 1) for low, high in base]
    return lengths, offsets


_MAX_POINTS = 200_000


def _union_of_shifts(
    lengths: list[sympy.Expr], offsets: list[tuple[int, ...]]
) -> sympy.Expr | None:
    """|union of a box of side lengths `lengths` shifted by each integer offset|, for every
    side length at which the box is not empty.

    In each side L the union's size is piecewise linear, with its bends at the integers
    from 0 to the offsets' spread in that dimension (inclusion-exclusion gives products of
    `Max(0, L - spread of a subset)`). So it is a sum of products of hinges
    `Max(0, L_d - v_d)`, `v_d <= spread_d`, whose coefficients are the mixed second
    differences of the size counted exactly, point by point, on boxes of sides 0 to just
    past the spread. Exact at every size, linear in the number of references instead of
    exponential, and small even when the sizes are numbers like 4096. A hinge that bends
    where the box is empty or where the sizes cannot reach (`v <= 1`, or `L >= v` for
    every size >= 1) is written as `L - v`; the others as `L - v + Max(0, v - L)`:
    offsets with a gap (`a[i]` and `a[i + 2]`: n + 2 elements, but 2 at n = 1) need them. A numeric
    side shorter than the spread is counted at its own value. None when the offsets are
    too far apart for that (the caller falls back to symbolic inclusion-exclusion).
    """
    dimensions = len(lengths)
    offsets = sorted(set(offsets))
    spreads = [max(c[d] for c in offsets) - min(c[d] for c in offsets) for d in range(dimensions)]
    base = [spread + 1 for spread in spreads]
    fixed = {
        d: int(length)
        for d, length in enumerate(lengths)
        if length.is_Integer and int(length) < base[d]
    }
    varying = [d for d in range(dimensions) if d not in fixed]
    points = len(offsets)
    for d in range(dimensions):
        points *= fixed.get(d, base[d] + 1)
    if points > _MAX_POINTS:
        return None  # offsets too far apart to count point by point

    def size_at(grid: tuple[int, ...]) -> int:
        if any(side < 0 for side in grid):
            return 0
        sides = [fixed.get(d, 0) for d in range(dimensions)]
        for position, d in enumerate(varying):
            sides[d] = grid[position]
        return _count_union(tuple(sides), tuple(offsets))

    total = ZERO
    for bend in product(*(range(base[d]) for d in varying)):
        coefficient = 0
        for shift in product((0, 1, 2), repeat=len(varying)):
            weight = 1
            for s in shift:
                weight *= (1, -2, 1)[s]
            coefficient += weight * size_at(
                tuple(b + 1 - s for b, s in zip(bend, shift, strict=True))
            )
        if coefficient:
            term = algebra.constant(coefficient)
            for position, d in enumerate(varying):
                term *= _hinge(lengths[d], bend[position])
            total += term
    return expand(total)


def _hinge(length: sympy.Expr, bend: int) -> sympy.Expr:
    """`Max(0, length - bend)` for a side `length >= 1`, written `length - bend +
    Max(0, bend - length)`: the correction vanishes past the bend, so the leading
    polynomial reads as before, and it is left out where it always vanishes."""
    difference = expand(length - bend)
    if bend <= 1 or provably_nonnegative(difference):
        return difference
    correction = algebra.hinge(-difference) if is_poly(difference) else None
    if correction is not None:  # a Poly's own atom: no sympy on the path
        return difference + correction
    return difference + sympy.Max(0, -difference)


def _corners(dimensions: int) -> list[tuple[int, ...]]:
    return [tuple((k >> d) & 1 for d in range(dimensions)) for k in range(1 << dimensions)]


@lru_cache(maxsize=1024)
def _count_union(sides: tuple[int, ...], offsets: tuple[tuple[int, ...], ...]) -> int:
    """Points in the union of boxes [c, c + side - 1] per dimension, counted exactly
    (memoized: the same stencil shapes recur across a code base)."""
    if any(side <= 0 for side in sides):
        return 0
    points: set[tuple[int, ...]] = set()
    for offset in offsets:
        points.update(product(*(range(c, c + side) for c, side in zip(offset, sides, strict=True))))
    return len(points)


def _lowest(bounds: Sequence[sympy.Expr]) -> sympy.Expr:
    """`sympy.Min` of the bounds, the same value taken directly when all are integers:
    sympy compares its arguments pairwise (the stores of 2,000 straight-line statements
    took 22 s)."""
    values = [integer_value(b) for b in bounds]
    if None in values:
        offset = _offsets_from_first(bounds)
        if offset is not None:  # `m - 2`, `m - 1`, `m`: one differs from all by numbers
            return bounds[offset.index(min(offset))]
        return sympy.Min(*bounds)
    return algebra.constant(min(v for v in values if v is not None))


def _highest(bounds: Sequence[sympy.Expr]) -> sympy.Expr:
    """`sympy.Max` of the bounds, as `_lowest` takes their minimum."""
    values = [integer_value(b) for b in bounds]
    if None in values:
        offset = _offsets_from_first(bounds)
        if offset is not None:  # `m - 2`, `m - 1`, `m`: one differs from all by numbers
            return bounds[offset.index(max(offset))]
        return sympy.Max(*bounds)
    return algebra.constant(max(v for v in values if v is not None))


def _offsets_from_first(bounds: Sequence[sympy.Expr]) -> list[Fraction] | None:
    """Each Poly bound minus the first, when all those differences are numbers: the
    extreme is then one of the bounds, which sympy's `Min`/`Max` returns as it is."""
    if not all(is_poly(b) for b in bounds):
        return None
    offsets = []
    for bound in bounds:
        difference = (bound - bounds[0]).constant_value()
        if difference is None:
            return None
        offsets.append(Fraction(difference))
    return offsets


def integer_value(expr: sympy.Expr) -> int | None:
    """The value of an integer constant; None for anything else."""
    if not expr.is_number:
        return None
    try:
        value = int(expr)
    except (TypeError, ValueError):
        return None
    return value if expr == value else None


def _hull_if_exact(boxes: Sequence[Box], union_count: sympy.Expr) -> Box | None:
    """The union as a box, when the union is exactly its bounding box."""
    hull = Box(
        tuple(
            (
                _lowest([b.intervals[d][0] for b in boxes]),
                _highest([b.intervals[d][1] for b in boxes]),
            )
            for d in range(len(boxes[0].intervals))
        ),
        boxes[0].strides,
    )
    return hull if expand(hull.size() - union_count) == 0 else None
