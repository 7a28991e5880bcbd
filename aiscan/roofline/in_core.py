"""The in-core ceiling (the seeds' P_max): the peak a loop's mix of operations can reach.

A device's dense peak counts a fused multiply-add as two FLOPs done in one issue slot. An add
or a multiply with no partner to fuse with fills the same slot with one FLOP, so a loop of
adds alone reaches half the peak. Divisions and special functions (sqrt, exp, ...) run on
their own units; where the device file gives their throughput (with a source), each is a
ceiling of its own, and where it does not, they are left out of the ceiling and flagged, so
the ceiling stays an upper bound.

Pairing is counted, not proven from the dataflow: a loop with `a` adds (and subtractions) and
`m` multiplies issues at least `max(a, m)` add/multiply/FMA instructions, whichever of them
fuse. The ceiling is therefore optimistic, as a roofline ceiling must be.

A loop-carried chain of dependent operations (`aiscan.analysis.dependence`) is one more
ceiling: each iteration waits for the latencies on the chain, so the kernel's rate is at
most its FLOPs over (iterations x chain cycles / clock / threads), with the latencies and
the clock of the device file's `[core]`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, is_poly
from aiscan.analysis.dependence import DependenceChain
from aiscan.analysis.flops import FlopCounts
from aiscan.analysis.intensity import finite_value, leading_limit, substitute_sizes
from aiscan.roofline.devices import Device, Latencies, Peak
from aiscan.roofline.precision import fallback_chain

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["ChainBound", "InCoreCeiling", "Limiter", "chain_bound", "in_core_ceiling"]


class Limiter(StrEnum):
    FMA = "fma"
    """Adds and multiplies pair into FMAs: the full peak."""
    UNPAIRED = "unpaired adds and multiplies"
    DIVISION = "divisions"
    SPECIAL = "special functions"
    UNKNOWN = "unknown"
    """The mix depends on a symbol that is not a size (a branch fraction): no ceiling."""
    DEPENDENCY = "dependency chain"
    """A loop-carried chain of dependent operations: one iteration per chain latency."""


@dataclass(frozen=True, slots=True)
class ChainBound:
    """The loop-carried chain that bounds a kernel hardest, as a FLOP/s ceiling.

    `seconds` is the chain's time at the given sizes (None without them); `text` says what
    the chain is, for the report."""

    line: int
    flops_per_s: float
    seconds: float | None
    cycles_per_iteration: float
    text: str


@dataclass(frozen=True, slots=True)
class InCoreCeiling:
    """The applicable peak of one kernel on one device and precision.

    `flops_per_s` is None when the mix cannot be evaluated (`limiter` is then UNKNOWN);
    `notes` say which operations the ceiling leaves out for want of a throughput figure.
    """

    flops_per_s: float | None
    fraction_of_peak: float | None
    limiter: Limiter
    divide_ops_per_s: float | None
    special_ops_per_s: float | None
    notes: tuple[str, ...]
    chain: ChainBound | None = None
    """The dependency chain, where one bounds the loop below the other ceilings."""

    @property
    def bound_name(self) -> str:
        """`in-core (dependency chain, line 4)`, `in-core (divisions)`: the verdict's words."""
        if self.limiter is Limiter.DEPENDENCY and self.chain is not None:
            return f"in-core (dependency chain, line {self.chain.line})"
        return f"in-core ({self.limiter.value})"


def in_core_ceiling(
    flops: FlopCounts,
    peak: Peak | None,
    peak_flops_per_s: float,
    *,
    sizes: Mapping[str, int] | None = None,
    chains: Sequence[DependenceChain] = (),
    device: Device | None = None,
) -> InCoreCeiling:
    """The in-core ceiling of `flops` under the FMA peak `peak_flops_per_s`.

    `peak` carries the division and special-function throughputs of that precision, if the
    device file gives them. The mix is taken at `sizes`, or as every size grows together.
    `chains` (with the `device` whose core latencies time them) add the dependency ceiling.
    """
    size_items = None if sizes is None else tuple(sorted(sizes.items()))
    return _in_core_ceiling(flops, peak, peak_flops_per_s, size_items, tuple(chains), device)


@lru_cache(maxsize=4096)
def _in_core_ceiling(
    flops: FlopCounts,
    peak: Peak | None,
    peak_flops_per_s: float,
    size_items: tuple[tuple[str, int], ...] | None,
    chains: tuple[DependenceChain, ...],
    device: Device | None,
) -> InCoreCeiling:
    """Memoized: a hierarchical placement asks for the same ceiling on every memory level,
    and a size path at every size of its sweep (its FLOP mix does not change)."""
    sizes = None if size_items is None else dict(size_items)
    ceiling = _mix_ceiling(flops, peak, peak_flops_per_s, sizes)
    if not chains or device is None:
        return ceiling
    bound, notes = chain_bound(chains, device, flops.total, sizes)
    ceiling = replace(ceiling, notes=(*ceiling.notes, *notes))
    if bound is None or (
        ceiling.flops_per_s is not None and bound.flops_per_s >= ceiling.flops_per_s
    ):
        return ceiling
    return replace(
        ceiling,
        flops_per_s=bound.flops_per_s,
        fraction_of_peak=bound.flops_per_s / peak_flops_per_s,
        limiter=Limiter.DEPENDENCY,
        chain=bound,
    )


def chain_bound(
    chains: Sequence[DependenceChain],
    device: Device,
    flops: sympy.Expr,
    sizes: Mapping[str, int] | None,
) -> tuple[ChainBound | None, list[str]]:
    """The tightest ceiling the chains give on `device` (its threads each running their
    share of the iterations), and notes on what could not be timed."""
    clock = device.core.clock_hz
    threads = device.threads or 1
    notes: list[str] = []
    best: ChainBound | None = None
    for chain in chains:
        latencies = _latencies(device, chain.precision)
        where = f"line {chain.line}"
        if latencies is None or clock is None:
            notes.append(
                f"dependency chain ({where}): no {chain.precision} operation latencies in "
                f"{device.path.name}; not bounded"
            )
            continue
        cycles, missing = _chain_cycles(chain, latencies)
        notes += [f"dependency chain ({where}): no {m} latency in the device file; left out"
                  for m in missing]  # fmt: skip
        if cycles <= 0:
            continue
        ratio = _per_iteration(flops, chain.iterations, sizes)
        if ratio is None or ratio <= 0:
            notes.append(f"dependency chain ({where}): FLOPs per iteration unknown; not bounded")
            continue
        rate = ratio * clock * threads / cycles
        iterations = finite_value(substitute_sizes(chain.iterations, sizes)) if sizes else None
        seconds = None if iterations is None else iterations * cycles / clock / threads
        if best is None or rate < best.flops_per_s:
            best = ChainBound(chain.line, rate, seconds, cycles, _chain_text(chain, cycles))
    return best, notes


def _latencies(device: Device, precision: str) -> Latencies | None:
    for key in fallback_chain(precision):
        found = device.core.latency(key)
        if found is not None:
            return found
    return None


def _chain_cycles(chain: DependenceChain, latencies: Latencies) -> tuple[float, list[str]]:
    """Cycles one iteration waits: the latencies on the chain over its distance."""
    table = {
        "add": latencies.add_cycles,
        "mul": latencies.mul_cycles,
        "fma": latencies.fma_cycles,
        "div": latencies.divide_cycles,
        "special": latencies.special_cycles,
    }
    missing = sorted({op for op in chain.operations if table.get(op) is None})
    total = sum(table.get(op) or 0.0 for op in chain.operations)
    return total / chain.distance, missing


def _chain_text(chain: DependenceChain, cycles: float) -> str:
    ops = ", ".join(chain.operations)
    what = (
        f"`{chain.variable}` accumulates"
        if chain.kind == "accumulator"
        else f"`{chain.variable}` depends on its value {chain.distance} iteration"
        f"{'s' if chain.distance > 1 else ''} back"
    )
    return (
        f"line {chain.line}: {what} in the loop over {chain.loop_var} (line {chain.loop_line}): "
        f"{ops}, {cycles:.3g} cycles an iteration"
    )


def _per_iteration(
    flops: sympy.Expr, iterations: sympy.Expr, sizes: Mapping[str, int] | None
) -> float | None:
    """FLOPs per iteration of the chain, at the sizes or as they grow."""
    if iterations == 0:
        return None
    return _share(flops, iterations, sizes)


def _mix_ceiling(
    flops: FlopCounts,
    peak: Peak | None,
    peak_flops_per_s: float,
    sizes: Mapping[str, int] | None,
) -> InCoreCeiling:
    """The ceiling of the operation mix alone."""
    divide_rate = None if peak is None else peak.divide_ops_per_s
    special_rate = None if peak is None else peak.special_ops_per_s
    notes = []
    missing = "no throughput in the device file; left out of the ceiling, an upper bound"
    if flops.div != 0 and divide_rate is None:
        notes.append(f"divisions: {missing}")
    if flops.special != 0 and special_rate is None:
        notes.append(f"special functions: {missing}")
    if flops.total == 0:
        return InCoreCeiling(
            peak_flops_per_s, 1.0, Limiter.FMA, divide_rate, special_rate, tuple(notes)
        )
    counts = (flops.add + flops.sub, flops.mul, flops.div, flops.special)
    shares = [_share(count, flops.total, sizes) for count in counts]
    if any(s is None for s in shares):
        notes.append("the mix of operations depends on a symbol that is not a size")
        return InCoreCeiling(None, None, Limiter.UNKNOWN, divide_rate, special_rate, tuple(notes))
    adds, multiplies, divisions, specials = (s or 0.0 for s in shares)
    slots = max(adds, multiplies)  # FMA-unit instructions per FLOP, whichever pairs fuse
    # Seconds per FLOP on each unit; the slowest unit sets the ceiling.
    times = {
        Limiter.UNPAIRED: slots / (peak_flops_per_s / 2),
        Limiter.DIVISION: divisions / divide_rate if divide_rate else 0.0,
        Limiter.SPECIAL: specials / special_rate if special_rate else 0.0,
    }
    limiter = max(times, key=lambda k: times[k])
    ceiling = min(peak_flops_per_s, 1 / times[limiter]) if times[limiter] else peak_flops_per_s
    if limiter is Limiter.UNPAIRED and ceiling >= peak_flops_per_s:
        limiter = Limiter.FMA
    return InCoreCeiling(
        ceiling,
        ceiling / peak_flops_per_s,
        limiter,
        divide_rate,
        special_rate,
        tuple(notes),
    )


def _share(count: sympy.Expr, total: sympy.Expr, sizes: Mapping[str, int] | None) -> float | None:
    """`count / total` at the sizes, or as the sizes grow; None if a symbol remains."""
    if count == 0:
        return 0.0
    proportion = _proportion(count, total)
    if proportion is not None and not (sizes and set(sizes) & {str(s) for s in total.free_symbols}):
        return float(proportion)  # what the limit of `count / total` is, without sympy
    decided = _share_of_polys(count, total, sizes)
    if decided is not None:
        return decided[0]
    ratio = count / total
    at_sizes = substitute_sizes(ratio, sizes) if sizes else ratio
    value = finite_value(at_sizes)
    if value is None and at_sizes.free_symbols:
        value = finite_value(leading_limit(at_sizes))
    return value


def _share_of_polys(
    count: sympy.Expr, total: sympy.Expr, sizes: Mapping[str, int] | None
) -> tuple[float | None] | None:
    """`_share` of two Polys in sizes alone, without sympy: `count/total` at the sizes when
    they give every symbol a value, or as the sizes grow together when they give none (read
    off the terms of highest degree, as `leading_limit` does; a cancelled common factor
    changes neither). None (undecided: sympy's path) for anything else: hinges, other
    symbols, some sizes given, a total of 0 at the sizes, leading terms that cancel."""
    if not (is_poly(count) and is_poly(total)) or count.hinged or total.hinged:
        return None
    symbols = count.free_symbols | total.free_symbols
    if any(s.kind != "size" for s in symbols):
        return None
    given = {s: sizes[s.name] for s in symbols if sizes and s.name in sizes}
    if given:
        if len(given) != len(symbols):
            return None
        top, bottom = count.subs(given).constant_value(), total.subs(given).constant_value()
        if top is None or not bottom:
            return None
        return (float(Fraction(top) / Fraction(bottom)),)
    top_leading, bottom_leading = _diagonal_leading(count), _diagonal_leading(total)
    if top_leading is None or bottom_leading is None:
        return None
    (top_degree, top_coefficient), (bottom_degree, bottom_coefficient) = top_leading, bottom_leading
    if top_degree < bottom_degree:
        return (0.0,)
    if top_degree > bottom_degree:
        return (None,)  # grows without bound: no finite share
    return (float(top_coefficient / bottom_coefficient),)


def _diagonal_leading(poly: sympy.Expr) -> tuple[int, Fraction] | None:
    """The degree and leading coefficient of `poly` with every size the same; None when
    the terms of highest total degree cancel there."""
    degree = poly.degree()
    coefficient = poly.by_total_degree().get(degree)
    return None if coefficient is None else (degree, coefficient)


def _proportion(count: sympy.Expr, total: sympy.Expr) -> Fraction | None:
    """The number `count/total` where both are Polys with the same terms in one ratio
    (jacobi2d's adds are 3/4 of its FLOPs), else None."""
    if not (is_poly(count) and is_poly(total)):
        return None
    ratio: Fraction | None = count.multiple_of(total)
    return ratio
