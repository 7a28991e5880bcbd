"""Place one kernel (exact FLOP and byte counts) on one device's roofline.

attainable = min(peak, AI x bandwidth), ridge = peak / bandwidth, bound = memory if
AI < ridge else compute (MODEL.md, "Roofline placement"). With sizes, also the time
bounds; without them, when AI depends on size, the size where AI crosses the ridge is
solved exactly rather than guessed. The ridge is taken as an exact rational of the stored
figures so that the crossover root is exact too.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from aiscan.algebra import (
    INFINITY,
    SYMPY,
    ZERO,
    Infinity,
    Poly,
    Quotient,
    as_expression,
    constant,
    expand,
    is_infinity,
    is_poly,
    normal,
    symbol,
    to_sympy,
)
from aiscan.analysis.dependence import DependenceChain
from aiscan.analysis.flops import FlopCounts
from aiscan.analysis.hinged_simplify import (
    common_factor_form,
    contents_form,
    is_hinged_ratio,
    simplify_hinged,
)
from aiscan.analysis.intensity import (
    cancelled_by_monomial,
    finite_value,
    limit_at_infinity,
    past_bends,
    settled_hinges,
    size_bindings,
)
from aiscan.errors import UsageError
from aiscan.real_roots import integer_coefficients, positive_rational_roots
from aiscan.roofline.devices import Device, PeakChoice
from aiscan.roofline.in_core import InCoreCeiling, in_core_ceiling
from aiscan.roofline.roofs import CONTRACTION, roof_label
from aiscan.substitution import substituted

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


if TYPE_CHECKING:
    from aiscan.analysis.cache_model import LevelTraffic
    from aiscan.roofline.hierarchy import DeviceCacheTraffic

__all__ = [
    "Bound",
    "ComputePart",
    "Crossover",
    "CrossoverKind",
    "LevelPlacement",
    "Placement",
    "Times",
    "growing_symbols",
    "held_text",
    "place",
    "place_hierarchical",
    "select_bytes",
    "simplified_intensity",
]


class Bound(StrEnum):
    MEMORY = "memory"
    COMPUTE = "compute"
    DEPENDS_ON_SIZE = "depends on size"
    """AI crosses the ridge at some size and no sizes were given: see `Placement.crossover`."""


class CrossoverKind(StrEnum):
    AT = "at"
    """AI crosses the ridge at `Crossover.size`."""
    NEVER = "never"
    """Memory-bound at every size (AI stays below the ridge)."""
    ALWAYS = "always"
    """Compute-bound at every size (AI never falls below the ridge)."""
    UNKNOWN = "unknown"
    """sympy could not solve AI = ridge, or AI depends on a non-size symbol."""


@dataclass(frozen=True, slots=True)
class Crossover:
    """Where AI(size) meets the ridge, all growing sizes set equal to one size.

    `size_exact` is the exact root (None for an irrational root of a polynomial of degree 5
    or more, of which only the value is computed), `first_integer_size` the first integer
    size on the far side (compute-bound when `compute_bound_above`, else memory-bound).
    """

    kind: CrossoverKind
    size_names: tuple[str, ...]
    size_exact: sympy.Expr | None = None
    size: float | None = None
    first_integer_size: int | None = None
    compute_bound_above: bool = True
    held: tuple[str, ...] = ()
    """Symbols not swept: given sizes (held at their values) and repeat counts (a time
    loop's `T`, held at its value or, without one, symbolic: the crossover is then unknown)."""


def held_text(held: Sequence[str]) -> str:
    """The symbols a crossover holds rather than sweeps, for a report: ` (T held)`."""
    return f" ({', '.join(held)} held)" if held else ""


@dataclass(frozen=True, slots=True)
class ComputePart:
    """Some of a kernel's FLOPs and the roof they run on (`aiscan.roofline.roofs`)."""

    flops: sympy.Expr
    precision: str
    reason: str


@dataclass(frozen=True, slots=True)
class Times:
    """Time bounds at given sizes: perfect overlap (lower) and none (upper)."""

    math_s: float
    comms_s: float
    lower_bound_s: float
    upper_bound_s: float


@dataclass(frozen=True, slots=True)
class Placement:
    """One kernel on one device. Fields that need sizes are None without them.

    `intensity` is None when the kernel moves no bytes: it has no finite AI and is
    compute-bound. `intensity_limit` is AI as every size grows together.
    """

    device: str
    device_name: str
    precision_requested: str
    precision: str
    sparse: bool
    peak_flops_per_s: float
    peak_source: str
    memory_level: str
    bandwidth_bytes_per_s: float
    ridge_flops_per_byte: float
    flops: sympy.Expr
    bytes_moved: sympy.Expr
    intensity: sympy.Expr | None
    intensity_limit: sympy.Expr | None
    intensity_flops_per_byte: float | None
    bound: Bound
    attainable_flops_per_s: float | None
    attainable_limit_flops_per_s: float | None
    fraction_of_peak: float | None
    times: Times | None
    crossover: Crossover
    notes: tuple[str, ...]
    roof: str = ""
    """The compute roof in words and why: "FP64 tensor core (BLAS contraction)"."""
    traffic_view: str = ""
    """Which bytes were placed: a traffic model (`compulsory`) or view (`eager`, `jit`)."""
    part_roofs: tuple[tuple[str, float], ...] = ()
    """For work split over several roofs: each part's (peak key, peak FLOP/s)."""
    times_by_roof: tuple[tuple[str, Times | None], ...] = ()
    """`datasheet` and `attainable` times when the device file has measured figures."""
    model: str = "compulsory"
    bound_level: str | None = None
    """The `cache` model: the memory level whose bandwidth bounds the kernel (None when
    compute-bound); `memory_level` is then that level too."""
    levels: tuple[LevelPlacement, ...] = ()
    """The `cache` model: every level with a known bandwidth, from the core outwards."""
    in_core: InCoreCeiling | None = None
    """The kernel's applicable peak (P_max) when its FLOP mix was given: the verdict, the
    ridge, the attainable rate and the math time use it; `peak_flops_per_s` stays the
    device's."""
    bytes_upper_bound: bool = False
    """The bytes placed are a flagged upper bound (an indirect footprint, an undecided
    reuse at the bounding cache level): AI is then a lower bound, and every format says so."""
    threads: int | None = None
    """CPUs: the threads the roofs are for (`aiscan.roofline.threads`); None on a GPU."""
    threads_reason: str = ""
    """Why that many: `no OpenMP pragma on the nest`, `#pragma omp parallel for, line 12`."""

    @property
    def latency_bound(self) -> bool:
        """Bound in the core by a loop-carried dependency chain, not by a roof."""
        return (
            self.bound is Bound.COMPUTE
            and self.in_core is not None
            and self.in_core.chain is not None
        )


@dataclass(frozen=True, slots=True)
class LevelPlacement:
    """One level of a hierarchical roofline: its roof and the kernel's intensity there."""

    level: str
    kind: str
    """The device file's `level` (`dram`, `hbm`, `l2`, ...)."""
    bandwidth_bytes_per_s: float
    bytes_moved: sympy.Expr
    intensity_flops_per_byte: float | None
    attainable_flops_per_s: float | None
    attainable_limit_flops_per_s: float | None
    intensity: sympy.Expr | None = None


def select_bytes(
    device: Device,
    *,
    without_write_allocate: sympy.Expr,
    with_write_allocate: sympy.Expr,
    write_allocate: bool | None = None,
) -> sympy.Expr:
    """The traffic to place: the device's store policy unless the user overrides it."""
    use = device.write_allocate if write_allocate is None else write_allocate
    return with_write_allocate if use else without_write_allocate


def growing_symbols(expr: sympy.Expr) -> tuple[sympy.Symbol, ...]:
    """Symbols that grow with the problem: all but branch fractions (reals in [0, 1])."""
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    return tuple(s for s in symbols if not _is_fraction(s))


def _is_fraction(symbol: sympy.Symbol) -> bool:
    """`fraction_symbol` makes nonnegative reals; sizes are positive or unconstrained."""
    return bool(symbol.is_nonnegative) and symbol.is_positive is not True and not symbol.is_integer


def place(
    flops: sympy.Expr | int,
    bytes_moved: sympy.Expr | int,
    precision: str,
    device: Device,
    *,
    sizes: Mapping[str, int] | None = None,
    sparse: bool = False,
    memory_level: str | None = None,
    roof_reason: str | None = None,
    parts: Sequence[ComputePart] = (),
    flop_mix: FlopCounts | None = None,
    repeats: Collection[str] = (),
    chains: Sequence[DependenceChain] = (),
    point: bool = False,
    simplified: bool = True,
    drawn_limit: bool = False,
) -> Placement:
    """Place a kernel: `flops` and `bytes_moved` are exact counts in size symbols.

    `sizes` maps size names to values; sizes not given stay symbolic. Dense peaks unless
    `sparse`; main memory unless `memory_level` names another level (hierarchical roofline).
    `roof_reason` says why `precision`'s roof applies. `parts` (two or more) split the FLOPs
    over several roofs (a contraction and element-wise work in one region): the math time
    is the sum over the parts, and the roof is their combined rate at the given sizes (the
    fastest part's without them, which keeps the time a lower bound).
    With `flop_mix` (the kernel's counts by kind) the in-core ceiling replaces the peak
    of a single roof other than a BLAS contraction's (work split over several roofs keeps
    their combined rate).
    `repeats` names symbols that only count repetitions (a time loop's trip): the crossover
    holds them rather than sweeping them with the sizes (`_crossover`).
    `chains` (loop-carried dependency chains) add their ceiling to the in-core one, timed
    with the device's core latencies.
    `point` asks for the figures at `sizes` alone (a point of a size path): where the
    sizes give the AI a value, the symbolic AI, its limit and the crossover, which cost
    sympy's simplify and root solves at every size of a sweep, are left out (None, and an
    unknown crossover).
    `simplified` False is for a drawing, which reads the symbolic AI only for its values
    over a sweep (`plot.swept_path`): where only sympy's `simplify` would give the AI its
    printed form, the ratio is kept as it stands (the same values) and its limit is left
    out (None), which no drawing reads. With `drawn_limit` a drawing keeps the limit too:
    a hierarchical placement chooses its bounding level by its levels' limits.
    """
    if len(parts) > 1:
        choice, roof, part_notes = _combined_roof(parts, device, sparse, sizes)
    else:
        choice = device.choose_peak(precision, sparse=sparse)
        roof = roof_label(choice.precision, device) + (f" ({roof_reason})" if roof_reason else "")
        part_notes = []
    level = device.memory_level(memory_level)
    if level.bandwidth_bytes_per_s is None:
        raise UsageError(
            f"device {device.key}: memory level {level.name!r} has no bandwidth in {device.path}"
        )
    bandwidth = level.bandwidth_bytes_per_s
    device_peak = choice.flops_per_s
    in_core = None
    # A BLAS contraction runs as FMAs on its roof; the pairing ceiling is for other code.
    contraction = roof_reason is not None and roof_reason.startswith(CONTRACTION)
    if flop_mix is not None and len(parts) <= 1 and not contraction:
        stored = device.peak(choice.precision)
        in_core = in_core_ceiling(
            flop_mix, stored, device_peak, sizes=sizes, chains=chains, device=device
        )
    peak = device_peak if in_core is None or in_core.flops_per_s is None else in_core.flops_per_s
    ridge = _exact(peak) / _exact(bandwidth)
    flops_expr = as_expression(flops)
    bytes_expr = as_expression(bytes_moved)
    at_flops = _substitute(flops_expr, sizes)
    at_bytes = _substitute(bytes_expr, sizes)
    notes = [choice.note] if choice.note else []
    notes += part_notes
    attainable: float | None
    attainable_limit: float | None

    if bytes_expr == 0:
        notes.append("no memory traffic: no finite AI, compute-bound at peak")
        intensity = limit = value = None
        crossover = _constant(compute=True)
        bound, attainable, attainable_limit = Bound.COMPUTE, peak, peak
    else:
        exact_value = _ratio_at_sizes(at_flops, at_bytes)
        value = finite_value(exact_value)
        if point and value is not None:
            intensity = limit = None
            crossover = Crossover(CrossoverKind.UNKNOWN, ())
        else:
            intensity, limit = (
                _intensity_and_limit(flops_expr, bytes_expr)
                if simplified
                else _drawn_intensity(flops_expr, bytes_expr, with_limit=drawn_limit)
            )
            crossover = _crossover(flops_expr, bytes_expr, ridge, sizes or {}, repeats)
        if value is not None:
            bound = Bound.MEMORY if bool(exact_value < ridge) else Bound.COMPUTE
            attainable = min(peak, value * bandwidth)
        else:
            bound, attainable = _size_free_verdict(crossover, peak)
        attainable_limit = _attainable_limit(limit, peak, bandwidth)
    times = _times(at_flops, at_bytes, peak, bandwidth)
    if len(parts) > 1 and times is not None:
        times = _split_times(parts, device, sparse, sizes, times)
    return Placement(
        device=device.key,
        device_name=device.name,
        precision_requested=choice.requested,
        precision=choice.precision,
        sparse=choice.sparse,
        peak_flops_per_s=device_peak,
        peak_source=choice.source,
        memory_level=level.name,
        bandwidth_bytes_per_s=bandwidth,
        ridge_flops_per_byte=float(ridge),
        flops=flops_expr,
        bytes_moved=bytes_expr,
        intensity=intensity,
        intensity_limit=limit,
        intensity_flops_per_byte=value,
        bound=bound,
        attainable_flops_per_s=attainable,
        attainable_limit_flops_per_s=attainable_limit,
        fraction_of_peak=None if attainable is None else attainable / device_peak,
        times=times,
        crossover=crossover,
        notes=tuple(notes),
        roof=roof,
        part_roofs=tuple(
            (c.precision, c.flops_per_s)
            for c in (device.choose_peak(p.precision, sparse=sparse) for p in parts)
        )
        if len(parts) > 1
        else (),
        in_core=in_core,
    )


def _combined_roof(
    parts: Sequence[ComputePart],
    device: Device,
    sparse: bool,
    sizes: Mapping[str, int] | None,
) -> tuple[PeakChoice, str, list[str]]:
    """One roof for FLOPs on several units: total FLOPs over the summed math times where
    the sizes give numbers, else the fastest part's peak (a roof no part exceeds)."""
    choices = [device.choose_peak(p.precision, sparse=sparse) for p in parts]
    words = [
        f"{roof_label(c.precision, device)} ({p.reason})"
        for c, p in zip(choices, parts, strict=True)
    ]
    notes = [f"{_words(p.flops)} FLOPs on {w}" for p, w in zip(parts, words, strict=True)]
    notes += [c.note for c in choices if c.note]
    counts = [finite_value(_substitute(as_expression(p.flops), sizes)) for p in parts]
    fastest = max(choices, key=lambda c: c.flops_per_s)
    if all(c is not None for c in counts) and sum(c for c in counts if c) > 0:
        total = sum(c for c in counts if c is not None)
        seconds = sum(
            (c or 0.0) / choice.flops_per_s for c, choice in zip(counts, choices, strict=True)
        )
        rate = total / seconds
        combined = PeakChoice(
            fastest.requested, fastest.precision, sparse, rate, fastest.source, None
        )
        notes.append(f"combined rate {rate:.4g} FLOP/s: the FLOPs over the summed math times")
        return combined, " + ".join(words), notes
    notes.append("no sizes: placed on the fastest part's roof, a bound every part meets")
    return fastest, " + ".join(words), notes


def _split_times(
    parts: Sequence[ComputePart],
    device: Device,
    sparse: bool,
    sizes: Mapping[str, int] | None,
    times: Times,
) -> Times:
    """Math time as the sum of each part's FLOPs over its own roof."""
    math_s = 0.0
    for part in parts:
        count = finite_value(_substitute(as_expression(part.flops), sizes))
        if count is None:
            return times
        math_s += count / device.choose_peak(part.precision, sparse=sparse).flops_per_s
    comms_s = times.comms_s
    return Times(math_s, comms_s, max(math_s, comms_s), math_s + comms_s)


def _words(expr: sympy.Expr) -> str:
    """A count as plain text for a note (`2*n**3`)."""
    return str(as_expression(expr))


def place_hierarchical(
    flops: sympy.Expr | int,
    traffic: DeviceCacheTraffic,
    precision: str,
    device: Device,
    *,
    sizes: Mapping[str, int] | None = None,
    sparse: bool = False,
    roof_reason: str | None = None,
    parts: Sequence[ComputePart] = (),
    flop_mix: FlopCounts | None = None,
    repeats: Collection[str] = (),
    chains: Sequence[DependenceChain] = (),
    point: bool = False,
    simplified: bool = True,
) -> Placement:
    """Place a kernel on the hierarchical roofline of the `cache` model: attainable is the
    minimum over the peak and every level's bandwidth x that level's intensity, over the
    levels with a known bandwidth; the verdict names the level that bounds it. The compute
    roof is chosen as `place` chooses it (`roof_reason`, `parts`). `point`: the figures
    at `sizes` alone, as `place` gives them, where every level's AI has a value there.
    `simplified` False: for a drawing, each level placed as `place` places one for a
    drawing, its limit kept (`drawn_limit`)."""

    def on_levels(point: bool) -> list[tuple[LevelTraffic, Placement]]:
        placed = []
        for level in traffic.levels:
            if device.memory_level(level.level).bandwidth_bytes_per_s is None:
                continue
            on_level = place(
                flops, level.total, precision, device,
                sizes=sizes, sparse=sparse, memory_level=level.level,
                roof_reason=roof_reason, parts=parts, flop_mix=flop_mix,
                repeats=repeats, chains=chains, point=point,
                simplified=simplified, drawn_limit=not simplified,
            )  # fmt: skip
            placed.append((level, on_level))
        return placed

    placed = on_levels(point)
    if point and any(p.attainable_flops_per_s is None for _, p in placed):
        # The bounding level is then chosen by the limits as the sizes grow.
        placed = on_levels(False)
    if not placed:
        raise UsageError(f"device {device.key}: no level with a bandwidth in {device.path}")
    bounding = _bounding(placed)
    level, chosen = placed[bounding]
    notes = [*chosen.notes, *traffic.notes]
    for entry in traffic.levels:
        for undecided in entry.undecided:  # the same reference at every level: noted once
            notes.append(f"line {undecided.line}: {undecided.reason}; placed at the streaming end")
    if any(not c.by_size for entry in traffic.levels for c in entry.conditions):
        notes.append(
            "sizes not given: working sets that grow with them are taken not to fit "
            "(the large-size traffic); give --size for the traffic at yours"
        )
    notes = list(dict.fromkeys(notes))
    levels = tuple(
        LevelPlacement(
            entry.level,
            device.memory_level(entry.level).level,
            p.bandwidth_bytes_per_s,
            p.bytes_moved,
            p.intensity_flops_per_byte,
            p.attainable_flops_per_s,
            p.attainable_limit_flops_per_s,
            p.intensity,
        )
        for entry, p in placed
    )
    bound_level = None if chosen.bound is Bound.COMPUTE else level.level
    return replace(
        chosen,
        model="cache",
        bound_level=bound_level,
        levels=levels,
        notes=tuple(notes),
        bytes_upper_bound=not level.exact,
    )


def _bounding(placed: Sequence[tuple[object, Placement]]) -> int:
    """The level with the lowest attainable rate: at the sizes when known, else as the
    sizes grow, else main memory (the last)."""
    for key in ("attainable_flops_per_s", "attainable_limit_flops_per_s"):
        values = [getattr(p, key) for _, p in placed]
        if all(v is not None for v in values):
            lowest = min(values)
            return max(i for i, v in enumerate(values) if v == lowest)
    return len(placed) - 1


def _exact(value: float) -> Poly:
    """The decimal the file wrote, as an exact rational (989.4e12 -> 9894*10**11)."""
    return constant(Fraction(repr(value)))


def _substitute(expr: sympy.Expr, sizes: Mapping[str, int] | None) -> sympy.Expr:
    values = size_bindings(expr, sizes)
    return substituted(expr, values) if values else expr


def _one_size(
    expr: sympy.Expr, sweep: frozenset[str] | None = None
) -> tuple[sympy.Expr, sympy.Symbol, tuple[str, ...]]:
    """The growing symbols (those in `sweep` when given) replaced by one positive real `x`
    (sizes grow together)."""
    growing = tuple(s for s in growing_symbols(expr) if sweep is None or s.name in sweep)
    x = symbol("x", "positive")
    return substituted(expr, {s: x for s in growing}), x, tuple(s.name for s in growing)


def _settled_swept(expr: sympy.Expr, sweep: frozenset[str] | None) -> sympy.Expr:
    """A hinged Poly with the hinges `Max(0, c - s)` of its swept sizes at 0, as
    `past_bends` settles them once `_one_size` has put `x` for s (a `Max` of `x` is no
    Poly, so it is done before); unchanged where that would drop a swept symbol."""
    if not is_poly(expr) or not expr.hinged:
        return expr
    swept = [s for s in growing_symbols(expr) if sweep is None or s.name in sweep]
    settled = past_bends(expr, swept)
    return settled if growing_symbols(settled) == growing_symbols(expr) else expr


@lru_cache(maxsize=4096)
def _intensity_and_limit(
    flops: sympy.Expr, bytes_moved: sympy.Expr
) -> tuple[sympy.Expr, sympy.Expr | None]:
    """Memoized like `_swept_crossover`: a nest is placed on every device and level, and
    again at every hover."""
    fast = _sympy_free_intensity(flops, bytes_moved)
    if fast is not None:
        return fast
    ratio = flops / bytes_moved
    # A monomial or a number is already as simple as sympy's `simplify` would make it.
    if is_poly(ratio) and len(ratio.terms) <= 1:
        return ratio, _limit(ratio)
    hinged = simplify_hinged(ratio) if is_hinged_ratio(ratio) else None
    intensity = normal(hinged if hinged is not None else sympy.simplify(ratio))
    return intensity, _limit(intensity)


def _sympy_free_intensity(
    flops: sympy.Expr, bytes_moved: sympy.Expr
) -> tuple[sympy.Expr, sympy.Expr | None] | None:
    """`_intensity_and_limit` of two Polys where it needs no sympy; None elsewhere."""
    if not (is_poly(flops) and is_poly(bytes_moved)):
        return None
    simplified = _simplified(flops, bytes_moved)
    if simplified is not None:
        return simplified, _limit_of_simplified(simplified)
    return _simplified_hinged(flops, bytes_moved)


def _drawn_intensity(
    flops: sympy.Expr, bytes_moved: sympy.Expr, *, with_limit: bool = False
) -> tuple[sympy.Expr, sympy.Expr | None]:
    """`_intensity_and_limit` for a drawing: its sympy-free forms where they apply, else
    the ratio as it stands, without a limit, where every symbol in it grows with the sizes
    (a drawing's sweep sets them all; a symbol `simplify` would cancel then changes no
    value). Else the ratio cancelled (`_drawn_cancelled`), with its limit `with_limit`."""
    fast = _sympy_free_intensity(flops, bytes_moved)
    if fast is not None:
        return fast
    ratio = to_sympy(flops) / to_sympy(bytes_moved)
    if not with_limit and set(ratio.free_symbols) == set(growing_symbols(ratio)):
        return ratio, None
    if is_hinged_ratio(ratio):  # `simplify_hinged`'s form, sympy-free
        return _intensity_and_limit(flops, bytes_moved)
    return _drawn_cancelled(ratio, with_limit)


@lru_cache(maxsize=4096)
def _drawn_cancelled(ratio: sympy.Expr, with_limit: bool) -> tuple[sympy.Expr, sympy.Expr | None]:
    """The ratio in lowest terms (sympy's `cancel`) and, `with_limit`, its limit: what a
    drawing reads of `simplify`'s form at a fraction of its cost (a plot of every fixture
    spent 0.7 s of its workers' CPU in `simplify`). A rational function in lowest terms
    holds exactly the symbols it depends on, as `simplify`'s form does: a size it cancels
    draws a path, a branch fraction it keeps draws none. It has `simplify`'s values wherever
    both are defined, and so its limit."""
    cancelled = sympy.cancel(ratio)
    return cancelled, _limit(cancelled) if with_limit else None


def simplified_intensity(placement: Placement) -> sympy.Expr | None:
    """The placement's intensity in `simplify`'s form, whichever form it holds."""
    if placement.intensity is None:
        return None
    return _intensity_and_limit(
        as_expression(placement.flops), as_expression(placement.bytes_moved)
    )[0]


def _simplified(flops: Poly, bytes_moved: Poly) -> Poly | Quotient | None:
    """What `sympy.simplify(flops/bytes_moved)` gives, without sympy, for the ratios
    placements meet: a monomial over a sum of positive terms (`m/(8*(m + 8))`), a monomial
    over a monomial, and two proportional sums (`1/10`); None for the others (two sums,
    signs, branch fractions, whose limits sympy takes), left to sympy."""
    if any(_is_fraction(s) for s in flops.free_symbols | bytes_moved.free_symbols):
        return None
    if flops.hinged or bytes_moved.hinged:
        return None  # `simplify` of a `Max` is `hinged_simplify`'s, its limit `_limit`'s
    cancelled = cancelled_by_monomial(flops, bytes_moved)
    if cancelled is None:
        number = flops.multiple_of(bytes_moved)
        return None if number is None else constant(number)
    top, bottom = cancelled
    if bottom.is_number:
        ratio: Poly = top / bottom
        return ratio if ratio.is_number or _positive_monomial(ratio) else None
    return Quotient.simplified(top, bottom)


def _simplified_hinged(
    flops: Poly, bytes_moved: Poly
) -> tuple[Quotient, sympy.Expr | Poly | Infinity | None] | None:
    """`simplify_hinged`'s intensity (`simplify`'s, for two plain sums) without sympy, for
    the ratios `common_factor_form` or `contents_form` covers, and `_limit`'s limit: read
    off the terms where every symbol grows, else (a branch fraction, a bottom that
    vanishes) `_limit` of the `contents_form`; None for other ratios."""
    contents = None
    if not any(_is_fraction(s) for s in flops.free_symbols | bytes_moved.free_symbols):
        intensity = common_factor_form(flops, bytes_moved)
        if intensity is None:
            contents = contents_form(flops, bytes_moved)
            if contents is None:
                return None
            intensity = contents
        limit = _limit_all_growing(intensity.numerator, intensity.denominator)
        if limit is not None:
            return intensity, limit
    if contents is None:
        contents = contents_form(flops, bytes_moved)
    return None if contents is None else (contents, _limit(contents))


def _limit_all_growing(top: Poly, bottom: Poly) -> Poly | Infinity | None:
    """The limit of `top/bottom` as every symbol grows as one `x` (`_one_size`), each
    hinge `Max(0, c - s)` 0 from s = c on (`settled_hinges`), read off the leading
    coefficients in `x`; None where the bottom vanishes or the limit is `-oo`."""
    above, below = _in_one_size(top), _in_one_size(bottom)
    if not below:
        return None
    if not above or max(above) < max(below):
        return ZERO
    ratio = above[max(above)] / below[max(below)]
    if max(above) == max(below):
        return constant(ratio)
    return INFINITY if ratio > 0 else None


def _in_one_size(poly: Poly) -> dict[int, Fraction]:
    """`poly` with its hinges at 0 and every symbol at one `x`: its coefficients by power
    of `x`, the zero ones left out."""
    return poly.without_hinges({atom: ZERO for atom in poly.hinges()}).by_total_degree()


def _limit_of_simplified(intensity: Poly | Quotient) -> sympy.Expr | None:
    """`_limit` of `_simplified`'s result, off its terms: every symbol grows (none is a
    branch fraction), so the total degrees above and below decide, and no coefficient can
    cancel (a monomial over positive terms)."""
    if is_poly(intensity):
        return intensity if intensity.is_number else INFINITY
    top, bottom = intensity.numerator, intensity.denominator
    top_degree = top.degree()
    bottom_degree = bottom.degree()
    if top_degree < bottom_degree:
        return ZERO
    if top_degree > bottom_degree:
        return INFINITY
    leading = bottom.by_total_degree().get(bottom_degree, 0)
    ((_, coefficient),) = top.terms.items()
    return constant(Fraction(coefficient) / leading)


def _positive_monomial(poly: Poly) -> bool:
    return len(poly.terms) == 1 and next(iter(poly.terms.values())) > 0


def _ratio_at_sizes(flops: sympy.Expr, bytes_moved: sympy.Expr) -> sympy.Expr | None:
    """flops/bytes where sizes were given, None where the quotient surely keeps symbols:
    two Polys whose quotient `Poly` leaves to sympy (a sum above or below, monomials of
    different symbols) are no number, and sympy need not build it to say so."""
    if is_poly(flops) and is_poly(bytes_moved) and not bytes_moved.is_number:
        if not flops.terms:
            return ZERO
        same = len(flops.terms) == 1 and flops.terms.keys() == bytes_moved.terms.keys()
        if not same and flops != bytes_moved:
            return None
    return flops / bytes_moved


def _limit(intensity: sympy.Expr) -> sympy.Expr | None:
    together, x, names = _one_size(intensity)
    if not names:
        return intensity
    together = settled_hinges(together, x)  # the rational path takes what is left
    rational = None if is_poly(together) else _rational_limit(together, x)
    return rational if rational is not None else limit_at_infinity(together, x)


def _rational_limit(expr: sympy.Expr, x: sympy.Symbol) -> sympy.Expr | None:
    """sympy's `limit` of a ratio of two polynomials in `x` alone, read off their leading
    coefficients (sympy's series machinery takes a tenth of a second and more to say the
    same); None for anything else."""
    top, bottom = sympy.fraction(sympy.together(expr))
    if (top.free_symbols | bottom.free_symbols) - {x}:
        return None
    if not (top.is_polynomial(x) and bottom.is_polynomial(x)):
        return None
    above, below = sympy.Poly(top, x), sympy.Poly(bottom, x)
    if below.is_zero:
        return None
    if above.is_zero or above.degree() < below.degree():
        return sympy.S.Zero
    ratio = above.LC() / below.LC()
    if above.degree() == below.degree():
        return ratio
    return sympy.oo * sympy.sign(ratio)


def _constant(*, compute: bool, names: tuple[str, ...] = ()) -> Crossover:
    kind = CrossoverKind.ALWAYS if compute else CrossoverKind.NEVER
    return Crossover(kind, names, compute_bound_above=compute)


def _crossover(
    flops: sympy.Expr,
    bytes_moved: sympy.Expr,
    ridge: sympy.Rational,
    sizes: Mapping[str, int] | None = None,
    repeats: Collection[str] = (),
) -> Crossover:
    """Solve flops - ridge*bytes = 0 (the sign of AI - ridge, bytes being positive) in the
    swept sizes: those without a given value that count no repetitions. Given sizes are
    held at their values, repeat counts at theirs or symbolic; when every size is given,
    all but the repeat counts are swept (where the given sizes sit against the crossing)."""
    sizes = sizes or {}
    growing = growing_symbols(expand(flops - ridge * bytes_moved))
    swept = [s for s in growing if s.name not in sizes and s.name not in repeats]
    if not swept:  # every size given: sweep them, holding only the repeat counts
        swept = [s for s in growing if s.name not in repeats]
    held_at = {s: sizes[s.name] for s in growing if s not in swept and s.name in sizes}
    held = tuple(s.name for s in growing if s not in swept)
    flops, bytes_moved = flops.subs(held_at), bytes_moved.subs(held_at)
    sweep = frozenset(s.name for s in swept)
    return replace(_swept_crossover(flops, bytes_moved, ridge, sweep), held=held)


@lru_cache(maxsize=4096)
def _swept_crossover(
    flops: sympy.Expr, bytes_moved: sympy.Expr, ridge: sympy.Rational, sweep: frozenset[str]
) -> Crossover:
    """Memoized: a limit and a root solve cost up to a tenth of a second, and the editor
    asks again at every hover of the same nest (and after every edit that leaves it)."""
    gap, x, names = _one_size(_settled_swept(expand(flops - ridge * bytes_moved), sweep), sweep)
    if not is_poly(gap) and gap.has(sympy.Max):
        # Small-size corrections (`Max(0, 4 - n)`, exact footprints below a gap) vanish
        # past a few elements: the crossing is sought where they have.
        gap = past_bends(gap, [x])
    if gap.free_symbols - {x}:
        return Crossover(CrossoverKind.UNKNOWN, names)
    if x not in gap.free_symbols:
        at_or_above = gap >= 0
        if is_poly(gap):  # a number
            return _constant(compute=bool(at_or_above), names=names)
        if not isinstance(at_or_above, sympy.logic.boolalg.BooleanAtom):
            return Crossover(CrossoverKind.UNKNOWN, names)  # e.g. a sum with no closed form
        return _constant(compute=bool(at_or_above), names=names)
    if is_poly(gap):  # a polynomial in x alone: its leading coefficient decides
        above = gap.by_power(x)[gap.degree(x)] > 0
    else:
        at_infinity = limit_at_infinity(gap, x)
        if at_infinity is None or at_infinity == 0:
            return Crossover(CrossoverKind.UNKNOWN, names)
        positive = at_infinity > 0
        if not isinstance(positive, sympy.logic.boolalg.BooleanAtom):
            return Crossover(CrossoverKind.UNKNOWN, names)  # a sign sympy cannot decide
        above = bool(positive)
    roots = _positive_roots(gap, x)
    if roots is None:
        return Crossover(CrossoverKind.UNKNOWN, names)
    crossing = _last_sign_change(gap, x, roots, above)
    if (
        crossing is None
        or crossing.value < 1
        or not _counts_hold(flops, bytes_moved, crossing, sweep)
    ):
        return _constant(compute=above, names=names)
    # Compute-bound from AI >= ridge on; memory-bound from AI < ridge on.
    first = crossing.ceiling if above else crossing.floor + 1
    return Crossover(CrossoverKind.AT, names, crossing.exact, crossing.value, first, above)


def _counts_hold(
    flops: sympy.Expr, bytes_moved: sympy.Expr, crossing: _Root, sweep: frozenset[str]
) -> bool:
    """Are the counts meaningful at the crossing (FLOPs not negative, bytes positive)?
    Below the sizes where the loops run they are not, and a crossing there is an artefact
    of the formula: `(n - 2)/(8*n - 12)` has a pole at 1.5 and meets any ridge just below
    it. Past the last such point the verdict is the one at infinity."""
    values = []
    for expr in (flops, bytes_moved):
        if is_poly(expr) and expr.hinged and {s.name for s in expr.free_symbols} <= sweep:
            value = finite_value(expr.at({s: crossing.value for s in expr.free_symbols}))
        else:
            one_size, x, _ = _one_size(expr, sweep)
            value = finite_value(_at(one_size, x, crossing.value))
        if value is None:
            return True  # cannot tell: keep the crossing
        values.append(value)
    return values[0] >= 0 and values[1] > 0


_MAX_EXACT_DEGREE = 4
"""Roots have closed forms in radicals up to degree 4 (Abel-Ruffini). Above, sympy's exact
root is a `CRootOf` that costs a factorization of the whole polynomial (seconds at the
degrees a deep loop nest gives) and says no more than its value, so roots are isolated
in exact rational intervals instead."""
_RELATIVE_WIDTH = Fraction(1, 2**53)
"""Isolated roots are narrowed to double precision (relative to the root)."""


@dataclass(frozen=True, slots=True)
class _Root:
    """A positive real root: its value, its exact form when it has one, and the integers
    just above and below it (the root itself when it is an integer)."""

    value: float
    exact: sympy.Expr | None
    ceiling: int
    floor: int


def _at(expr: sympy.Expr, x: sympy.Symbol, value: float) -> Any:
    """`expr` at `x = value` (a float): a float for a Poly, a sympy value otherwise."""
    return expr.at({x: value}) if is_poly(expr) else expr.subs(x, value)


def _positive_roots(gap: sympy.Expr, x: sympy.Symbol) -> list[_Root] | None:
    if is_poly(gap):
        by_power = gap.by_power(x)
        powers = sorted(by_power)
        if len(powers) == 1:  # c*x**k: no positive root
            return []
        if len(powers) == 2 and powers[1] == powers[0] + 1:  # x**k*(a*x + b)
            root = -by_power[powers[0]] / by_power[powers[1]]
            return [_exact_root(root)] if root > 0 else []
        coefficients = integer_coefficients(gap, ("x", "positive"))
        rational = None if coefficients is None else positive_rational_roots(coefficients)
        if rational is not None:  # all rational (or none): exact without sympy's radicals
            return [_exact_root(constant(root)) for root in rational]
    numerator = sympy.numer(sympy.together(gap))
    if numerator.is_polynomial(x):
        _, poly = sympy.Poly(numerator, x).terms_gcd()  # roots at 0 do not matter
        if poly.degree() > _MAX_EXACT_DEGREE:
            return _isolated_roots(poly)
        roots = poly.real_roots()
    else:
        if _unsolvable(numerator, x):
            return None
        solved = sympy.solveset(numerator, x, domain=sympy.Interval.open(0, sympy.oo))
        if not isinstance(solved, sympy.FiniteSet):
            return None
        roots = list(solved)
    return [_exact_root(r) for r in sorted({r for r in roots if r.is_positive}, key=float)]


def _unsolvable(numerator: sympy.Expr, x: sympy.Symbol) -> bool:
    """Whether `x` is inside a floor or ceiling, or in an exponent: `solveset` solves
    neither and gives a ConditionSet (no finite set of roots), after up to a tenth of a
    second; 64 such gaps took two seconds of a plot of the fixtures. A test holds sympy to
    it (`test_placement_fast_paths.py`)."""
    rounded = numerator.atoms(sympy.floor, sympy.ceiling)
    return any(x in r.free_symbols for r in rounded) or any(
        x in p.exp.free_symbols for p in numerator.atoms(sympy.Pow)
    )


def _exact_root(root: sympy.Expr) -> _Root:
    value = float(root)
    if root.is_integer is True:
        return _Root(value, root, int(root), int(root))
    return _Root(value, root, math.ceil(value), math.floor(value))


def _isolated_roots(poly: sympy.Poly) -> list[_Root]:
    """The positive real roots of `poly`, each isolated in an exact rational interval, then
    bisected until its value is known to double precision and no integer lies inside (or
    the integer is the root): the integers around it are then exact. A rational root comes
    out exact: it is the simplest rational of its interval, checked."""
    poly = poly.sqf_part()  # the same roots, each simple: the sign changes across each
    roots = []
    for (low, high), _ in poly.intervals():
        low, high = _narrowed(poly, sympy.Rational(low), sympy.Rational(high))
        if high <= 0:
            continue
        simplest = _simplest_rational(low, high)
        if low < simplest < high and poly.eval(simplest) == 0:
            low = high = simplest  # a rational root: n/8 crosses at 8 times the ridge
        if low == high:
            roots.append(_exact_root(low))
        else:  # no integer strictly between low and high: the root's neighbours are exact
            below = int(sympy.floor(low))
            roots.append(_Root(float((low + high) / 2), None, below + 1, below))
    return roots


def _simplest_rational(low: sympy.Rational, high: sympy.Rational) -> sympy.Rational:
    """The rational of smallest denominator in [low, high] (0 <= low <= high), by
    continued fractions: the only rational a crossing between them can be, if any is."""
    whole = sympy.floor(low)
    if whole == low or whole + 1 <= high:
        return sympy.ceiling(low)
    inverse = _simplest_rational(1 / (high - whole), 1 / (low - whole))
    return whole + 1 / inverse


def _narrowed(
    poly: sympy.Poly, low: sympy.Rational, high: sympy.Rational
) -> tuple[sympy.Rational, sympy.Rational]:
    """Bisect an isolating interval: one simple root lies strictly between `low` and `high`
    (either end may be another root) unless they are equal, when it is the root."""
    if low == high:
        return low, high
    value = poly.eval(low)
    rising = (value if value != 0 else poly.diff().eval(low)) < 0  # the sign just past low
    while True:
        integer = sympy.floor(low) + 1
        holds_integer = integer < high
        if holds_integer and poly.eval(integer) == 0:
            return integer, integer
        if not holds_integer and high - low <= max(abs(low), 1) * _RELATIVE_WIDTH:
            return low, high
        middle = (low + high) / 2
        value = poly.eval(middle)
        if value == 0:
            return middle, middle
        if (value < 0) == rising:
            low = middle
        else:
            high = middle


def _last_sign_change(
    gap: sympy.Expr, x: sympy.Symbol, roots: list[_Root], above: bool
) -> _Root | None:
    """The largest root where the sign really changes (a double root only touches)."""
    sign_right = 1.0 if above else -1.0
    for index in range(len(roots) - 1, -1, -1):
        left_end = roots[index - 1].value if index else 0.0
        probe = (left_end + roots[index].value) / 2
        sign_left = math.copysign(1.0, float(_at(gap, x, probe)))
        if sign_left != sign_right:
            return roots[index]
        sign_right = sign_left
    return None


def _attainable_limit(limit: sympy.Expr | None, peak: float, bandwidth: float) -> float | None:
    """Attainable FLOP/s as the sizes grow; an unbounded AI reaches the peak."""
    if is_infinity(limit) or (limit is not None and not is_poly(limit) and limit == sympy.oo):
        return peak
    value = finite_value(limit)
    return None if value is None else min(peak, value * bandwidth)


def _size_free_verdict(crossover: Crossover, peak: float) -> tuple[Bound, float | None]:
    """Bound without sizes: settled only when AI stays on one side of the ridge."""
    if crossover.kind is CrossoverKind.NEVER:
        return Bound.MEMORY, None
    if crossover.kind is CrossoverKind.ALWAYS:
        return Bound.COMPUTE, peak
    return Bound.DEPENDS_ON_SIZE, None


def _times(flops: sympy.Expr, bytes_moved: sympy.Expr, peak: float, bw: float) -> Times | None:
    flop_count, byte_count = finite_value(flops), finite_value(bytes_moved)
    if flop_count is None or byte_count is None:
        return None
    math_s, comms_s = flop_count / peak, byte_count / bw
    return Times(math_s, comms_s, max(math_s, comms_s), math_s + comms_s)
